"""Would a trained model averaged with its start model (WiSE-FT, Wortsman et al. CVPR 2022) hold up better on
held-out data, and could adapt's dev set tell? An A/B on a domain's dev and test splits.

For each trained model given (one per seed), every floating-point weight is averaged with the start model's
(the trained one weighing --weight, fixed in advance, not tuned), the average is saved under --output, and the
start, the trained models and their averages are scored on dev and test: each one's gain over the start, and
each average against the model it averages, with 95 % paired bootstrap intervals over the split's units
(`sentforge.evaluation.paired`). From the repository root, with the `mnrl` runs of docs/results/adapt-domains.md
("A model averaged with its start"):

    python benchmarks/adapt/wise_ft_ab.py --domain domain-data/qatarliving --start all-MiniLM-L6-v2 \\
        --trained runs/mnrl/ql-s0,runs/mnrl/ql-s1,runs/mnrl/ql-s2 --output runs/wise-ft/ql
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import fail


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", type=Path, required=True, help="folder with dev.jsonl and test.jsonl")
    parser.add_argument("--start", required=True, help="the start model the trained ones were trained from")
    parser.add_argument("--trained", required=True, help="comma-separated model directories, one per seed")
    parser.add_argument("--weight", type=float, default=0.5, help="the trained model's weight in the average")
    parser.add_argument("--output", type=Path, required=True, help="a new folder for the averaged models")
    args = parser.parse_args()
    trained = [Path(path) for path in args.trained.split(",") if path]
    for path in trained:
        if not (path / "modules.json").is_file():
            fail(f"--trained {path}: not a model directory (no modules.json)")
    for split in ("dev", "test"):
        if not (args.domain / f"{split}.jsonl").is_file():
            fail(f"--domain {args.domain}: no {split}.jsonl")
    if not 0 < args.weight < 1:
        fail(f"--weight {args.weight}: must lie between 0 and 1")
    if args.output.exists():
        fail(f"--output {args.output}: exists; give a new folder")
    for source in [args.domain, *trained]:
        if args.output.resolve().is_relative_to(source.resolve()):
            fail(f"--output {args.output}: lies inside the input {source}; give a folder outside it")
    import sentforge
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.paired import paired_bootstrap
    from sentforge.support.errors import SentforgeError

    try:
        start = sentforge.load(args.start)
    except SentforgeError as err:
        fail(f"--start {args.start}: {err}")
    start_weights = start.state_dict()
    averages = []
    for path in trained:
        model = sentforge.load(str(path))
        weights = model.state_dict()
        if weights.keys() != start_weights.keys():
            fail(f"--trained {path}: its modules differ from the start model's")
        model.load_state_dict({key: ((1 - args.weight) * start_weights[key] + args.weight * value).to(value.dtype)
                               if value.is_floating_point() else value for key, value in weights.items()})
        averages.append(args.output / f"{path.name}-averaged")
        model.save(averages[-1])
    models = {"start": start, **{str(p): sentforge.load(str(p)) for p in [*trained, *averages]}}
    for split in ("dev", "test"):
        task = load_dataset(args.domain / f"{split}.jsonl")
        items = {name: task.item_scores(model) for name, model in models.items()}
        print(f"\n## {split} ({len(items['start'])} units): start {items['start'].score():.2f}")
        print("| trained | score | over the start [95 %] | its average | over the start [95 %] | "
              "average − trained [95 %] |\n|---|---:|---|---:|---|---|")
        for path, average in zip(trained, averages):
            tuned, mixed = items[str(path)], items[str(average)]
            cells = [f"{gain.difference:+.2f} [{gain.low:+.2f}, {gain.high:+.2f}]" for gain in (
                paired_bootstrap(items["start"], tuned, seed=0), paired_bootstrap(items["start"], mixed, seed=0),
                paired_bootstrap(tuned, mixed, seed=0))]
            print(f"| {path} | {tuned.score():.2f} | {cells[0]} | {mixed.score():.2f} | {cells[1]} | {cells[2]} |")
        pooled = paired_bootstrap([items[str(p)] for p in trained], [items[str(a)] for a in averages], seed=0)
        print(f"\nAverages − trained, pooled over {len(trained)} seeds: {pooled.difference:+.2f} "
              f"[{pooled.low:+.2f}, {pooled.high:+.2f}]", flush=True)


if __name__ == "__main__":
    main()
