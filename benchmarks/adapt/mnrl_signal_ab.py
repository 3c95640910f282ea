"""More signal per label for MNRL: A/B tests at equal steps on the three domains' test splits.

Each arm trains `mnrl` from the same start model on the same labelled pairs that `sentforge adapt` trains its
`mnrl` candidate on (dev hygiene applied: no dev or test text, nor a near copy, in training; the label-0 pairs
as hard negatives), for the same number of steps (adapt's: 10 epochs of the positives at batch 64), and is
scored on the domain's test file. Arms:

- base: adapt's `mnrl` as it is;
- symmetric: the loss also ranks the anchors for each positive (`--symmetric`);
- mined: one more hard negative per pair, mined with the start model from the pairs' texts and the
  unlabelled texts, at least 0.1 below the positive (`--mined-negatives 1 --mining-corpus`);
- symmetric+mined: both;
- batch256: a four times larger batch at the same steps (four times the examples seen).

Every arm runs with each seed; its test gain over `base` is the paired bootstrap over the test units, each
side the mean of the seeds' scores (`sentforge.evaluation.paired`). From the repository root:

    python benchmarks/data/prepare_domain_data.py --data-dir ../shared/data --output domain-data
    python benchmarks/adapt/mnrl_signal_ab.py prepare --domain-data domain-data --output runs/ab-data
    python benchmarks/adapt/mnrl_signal_ab.py run --data runs/ab-data --model all-MiniLM-L6-v2 --output runs/ab \
        --seeds 0,1,2 --device cuda
    python benchmarks/adapt/mnrl_signal_ab.py table --output runs/ab
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

DOMAINS = {  # name -> (labelled file, unlabelled file, test file) under --domain-data
    "qatarliving": ("qatarliving/labelled.jsonl", "qatarliving/unlabelled.txt", "qatarliving/test.jsonl"),
    "wikiqa": ("wikiqa/labelled.jsonl", None, "wikiqa/test.jsonl"),
    "twitterpara": ("twitterpara/labelled-10pct.jsonl", "twitterpara/unlabelled.txt", "twitterpara/test.jsonl"),
}
DEV = {"qatarliving": "qatarliving/dev.jsonl", "wikiqa": "wikiqa/dev.jsonl", "twitterpara": "twitterpara/dev.jsonl"}
BATCH, EPOCHS = 64, 10  # adapt's mnrl: the recipe's batch, --max-epochs 10
ARMS = {
    "base": {},
    "symmetric": {"symmetric": True},
    "mined": {"mined_negatives": 1},
    "symmetric+mined": {"symmetric": True, "mined_negatives": 1},
    "batch256": {"batch_size": 256},
}


def prepare(domain_data: Path, output: Path) -> None:
    """Per domain: the training pairs and unlabelled texts after adapt's dev hygiene, and the test file."""
    from adapt_domains import unlabelled_from_pairs

    from sentforge.adaptation.hygiene import apply_hygiene
    from sentforge.adaptation.inputs import read_inputs

    for name, (labelled, unlabelled, test) in DOMAINS.items():
        folder = output / name
        folder.mkdir(parents=True, exist_ok=True)
        if unlabelled is None:  # WikiQA: the distinct texts of its positive train pairs, as in its adapt runs
            source = unlabelled_from_pairs(domain_data / labelled, folder / "wikiqa")
        else:
            source = domain_data / unlabelled
        inputs = read_inputs(source, domain_data / DEV[name], domain_data / labelled, domain_data / test)
        with tempfile.TemporaryDirectory() as scratch:
            clean, counts = apply_hygiene(inputs, Path(scratch), keep_dev_texts=False)
            shutil.copy(clean.labelled.positives_file, folder / "positives.jsonl")
            shutil.copy(clean.unlabelled, folder / "unlabelled.txt")
        shutil.copy(domain_data / test, folder / "test.jsonl")
        positives = len(clean.labelled.positives)
        meta = {"positives": positives, "steps": EPOCHS * max(positives // BATCH, 1), "hygiene": counts}
        (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        print(f"{name}: {positives} positive pairs, {meta['steps']} steps, {len(clean.texts)} unlabelled texts")


def run(data: Path, model: str, output: Path, seeds: list[int], arms: list[str], device: str | None) -> None:
    import sentforge
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.paired import ItemScores  # noqa: F401 (the saved arrays' format)

    tests, metas = {}, {}
    for name in DOMAINS:  # the start model's test scores first
        folder = data / name
        metas[name] = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        tests[name] = load_dataset(folder / "test.jsonl", name=f"test:{name}")
        start_items = output / name / "start.npz"
        if not start_items.is_file():
            start_items.parent.mkdir(parents=True, exist_ok=True)
            np.savez(start_items, **tests[name].item_scores(sentforge.load(model, device=device)).to_npz())
    for seed in seeds:  # a seed at a time over every domain and arm: a run cut short leaves whole seeds
        for name in DOMAINS:
            folder = data / name
            for arm in arms:
                result = output / name / f"{arm}-seed{seed}.npz"
                if result.is_file():
                    continue
                settings = dict(ARMS[arm])
                if settings.get("mined_negatives"):
                    settings["mining_corpus"] = str(folder / "unlabelled.txt")
                settings["batch_size"] = min(settings.get("batch_size", BATCH), metas[name]["positives"])
                started = time.perf_counter()
                with tempfile.TemporaryDirectory() as scratch:
                    encoder = sentforge.train("mnrl", model, folder / "positives.jsonl", Path(scratch) / "run",
                                              steps=metas[name]["steps"], seed=seed, device=device,
                                              show_progress=False, **settings)
                    items = tests[name].item_scores(encoder)
                np.savez(result, **items.to_npz())
                print(f"{name} {arm} seed {seed}: test {items.score():.2f} ({time.perf_counter() - started:.0f} s)",
                      flush=True)


def table(output: Path, arms: list[str]) -> None:
    from sentforge.evaluation.paired import ItemScores, paired_bootstrap

    def load(path: Path) -> ItemScores:
        with np.load(path, allow_pickle=False) as arrays:
            return ItemScores.from_npz(arrays)

    print("| domain | arm | test per seed | mean | gain over base [95 % paired interval] |")
    print("|---|---|---|---:|---:|")
    for name in DOMAINS:
        folder = output / name
        if not (folder / "start.npz").is_file():
            continue
        runs = {arm: sorted(folder.glob(f"{arm}-seed*.npz")) for arm in arms}
        base = [load(path) for path in runs["base"]]
        print(f"| {name} | start | {load(folder / 'start.npz').score():.2f} | | |")
        for arm in arms:
            scores = [load(path) for path in runs[arm]]
            if not scores:
                continue
            gain = "–" if arm == "base" or len(scores) != len(base) else \
                "{0.difference:+.2f} [{0.low:+.2f}, {0.high:+.2f}]".format(paired_bootstrap(base, scores, 5000))
            print(f"| {name} | {arm} | {', '.join(f'{s.score():.2f}' for s in scores)} | "
                  f"{np.mean([s.score() for s in scores]):.2f} | {gain} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prep = commands.add_parser("prepare")
    prep.add_argument("--domain-data", type=Path, required=True)
    prep.add_argument("--output", type=Path, required=True)
    go = commands.add_parser("run")
    go.add_argument("--data", type=Path, required=True)
    go.add_argument("--model", default="all-MiniLM-L6-v2")
    go.add_argument("--output", type=Path, required=True)
    go.add_argument("--seeds", default="0,1,2")
    go.add_argument("--arms", default=",".join(ARMS))
    go.add_argument("--device", default=None)
    show = commands.add_parser("table")
    show.add_argument("--output", type=Path, required=True)
    show.add_argument("--arms", default=",".join(ARMS))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "prepare":
        prepare(args.domain_data, args.output)
    elif args.command == "run":
        run(args.data, args.model, args.output, [int(s) for s in args.seeds.split(",")], args.arms.split(","),
            args.device)
    else:
        table(args.output, args.arms.split(","))


if __name__ == "__main__":
    main()
