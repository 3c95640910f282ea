"""MNRL with and without the label-0 hard negatives of a 0/1-labelled file: the same start model, seed,
batch size and number of steps; both trained models and the start model scored on dev and test.

    python benchmarks/data/prepare_domain_data.py --data-dir ../shared/data --output domain-data
    python benchmarks/adapt/hard_negatives_ab.py qatarliving --domain-data domain-data --work-dir runs/negatives \\
        --model all-MiniLM-L6-v2-dir --steps 46 --batch-size 32 --max-seq-length 128

Arms: `negatives` trains on `labelled.jsonl` as it is (each label-1 pair with a label-0 text of the same
question as its hard negative, data/pairs.py); `pairs` on its label-1 pairs only. Qatar Living has no test
file (TEST-BASE is never read): its dev queries are split in two halves by query, seeded, one the dev set,
the other the test set. WikiQA uses its dev and test files. Writes WORK/DOMAIN/ab.json and prints a table
with the paired bootstrap interval of negatives − pairs on each split (queries resampled). An arm already
trained in WORK/DOMAIN is loaded and scored again, not retrained.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import numpy as np

DOMAINS = {"qatarliving": None, "wikiqa": "test.jsonl"}  # domain -> its test file (None: half of dev)


def split_dev(dev: Path, work: Path, seed: int) -> tuple[Path, Path]:
    """The dev queries in two seeded halves (dev, test), written to `work`."""
    lines = [line for line in dev.read_text(encoding="utf-8").splitlines() if line.strip()]
    order = np.random.default_rng(seed).permutation(len(lines))
    halves = sorted(order[: len(lines) // 2]), sorted(order[len(lines) // 2:])
    paths = work / "dev-half.jsonl", work / "test-half.jsonl"
    for path, half in zip(paths, halves):
        path.write_text("".join(lines[i] + "\n" for i in half), encoding="utf-8")
    return paths


def positives_only(labelled: Path, output: Path) -> Path:
    """The label-1 rows of `labelled`, without their label: MNRL on the positive pairs alone."""
    rows = [json.loads(line) for line in labelled.read_text(encoding="utf-8").splitlines() if line.strip()]
    output.write_text("".join(json.dumps({"sentence1": r["sentence1"], "sentence2": r["sentence2"]},
                                         ensure_ascii=False) + "\n" for r in rows if r["label"] == 1),
                      encoding="utf-8")
    return output


def main(argv: list[str] | None = None) -> int:
    import sentforge
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.paired import paired_bootstrap

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("domain", choices=sorted(DOMAINS))
    parser.add_argument("--domain-data", type=Path, required=True, help="prepare_domain_data.py's output")
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--model", required=True, help="the start model")
    parser.add_argument("--steps", type=int, required=True, help="optimizer steps of each arm")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-seq-length", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0, help="training seed, and the seed of the dev/test split")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    data, work = args.domain_data / args.domain, args.work_dir / args.domain
    work.mkdir(parents=True, exist_ok=True)
    if DOMAINS[args.domain] is None:
        dev_path, test_path = split_dev(data / "dev.jsonl", work, args.seed)
    else:
        dev_path, test_path = data / "dev.jsonl", data / DOMAINS[args.domain]
    tasks = {"dev": load_dataset(dev_path, name="dev"), "test": load_dataset(test_path, name="test")}
    labelled = data / "labelled.jsonl"
    arms = {"negatives": labelled, "pairs": positives_only(labelled, work / "pairs.jsonl")}
    start = sentforge.load(args.model)
    start.max_seq_length = args.max_seq_length  # every model scored at the length the arms train and keep
    items = {"start": {split: task.item_scores(start) for split, task in tasks.items()}}
    for arm, training in arms.items():
        output = work / arm
        if (output / "train.json").is_file():  # trained by an earlier call with these settings: scored again
            encoder = sentforge.load(str(output))
        else:
            encoder = sentforge.train("mnrl", args.model, training, output, steps=args.steps,
                                      batch_size=args.batch_size, max_seq_length=args.max_seq_length, seed=args.seed)
        items[arm] = {split: task.item_scores(encoder) for split, task in tasks.items()}
    scores = {arm: {split: values.score() for split, values in splits.items()} for arm, splits in items.items()}
    gains = {split: paired_bootstrap(items["pairs"][split], items["negatives"][split], seed=args.seed).to_json()
             for split in tasks}
    result = {"domain": args.domain, "model": args.model, "seed": args.seed, "steps": args.steps,
              "batch_size": args.batch_size, "max_seq_length": args.max_seq_length, "dev": str(dev_path),
              "test": str(test_path), "scores": scores, "negatives_minus_pairs": gains}
    (work / "ab.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    metric = tasks["dev"].metadata.main_metric
    print(f"| arm | dev {metric} | test {metric} |\n|---|---:|---:|")
    for arm, values in scores.items():
        print(f"| {arm} | {values['dev']:.2f} | {values['test']:.2f} |")
    print("| negatives - pairs [95 % paired bootstrap] | "
          + " | ".join(f"{g['difference']:+.2f} [{g['low']:+.2f}, {g['high']:+.2f}]" for g in gains.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
