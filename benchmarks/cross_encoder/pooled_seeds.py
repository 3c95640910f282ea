"""Bi-encoders trained on several seeds against one reference, pooled: each seed's gain and the gain of the
seeds' mean score, with a 95 % paired bootstrap interval over the dev and test units of a domain.

    python benchmarks/cross_encoder/pooled_seeds.py --domain domain-data/twitterpara \\
        --reference mnrl=runs/mnrl/twitterpara-s0 \\
        --runs augsbert=runs/silver/twitterpara-mpnet-s1/augsbert,runs/silver/twitterpara-mpnet-s2/augsbert \\
        --runs marginmse=runs/marginmse/twitterpara-mpnet-s1/marginmse,runs/marginmse/twitterpara-mpnet-s2/marginmse

A pooled interval resamples the units once for all seeds (sentforge.evaluation.paired.paired_bootstrap with
several models): it says how sure the gain of the method, averaged over the seeds given, is on these units; the
seeds' spread is in the per-seed rows. With one reference per seed (`--reference NAME=DIR,DIR,...`, in the order
of each method's runs: each seed's own baseline, as in repeated adapt runs), seed i is paired with reference i and
the pooled gain is the mean of the methods' scores over the mean of the references'.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import fail


def named(text: str) -> tuple[str, list[Path]]:
    name, _, paths = text.partition("=")
    dirs = [Path(path) for path in paths.split(",") if path]
    if not name or not dirs:
        fail(f"{text!r}: NAME=DIR,DIR...")
    for path in dirs:
        if not (path / "modules.json").is_file():
            fail(f"{path}: not a model directory (no modules.json)")
    return name, dirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", type=Path, required=True, help="folder with dev.jsonl and test.jsonl")
    parser.add_argument("--reference", required=True, metavar="NAME=DIR[,DIR...]",
                        help="the model every gain is over, or one per seed")
    parser.add_argument("--runs", action="append", required=True, metavar="NAME=DIR,DIR,...",
                        help="one method's models, one per seed (repeat for more methods)")
    parser.add_argument("--splits", nargs="+", default=["dev", "test"])
    args = parser.parse_args()
    for split in args.splits:
        if not (args.domain / f"{split}.jsonl").is_file():
            fail(f"--domain {args.domain}: no {split}.jsonl")
    reference, reference_dirs = named(args.reference)
    methods = dict(named(text) for text in args.runs)
    for method, paths in methods.items():
        if len(reference_dirs) > 1 and len(paths) != len(reference_dirs):
            fail(f"--runs {method}: {len(paths)} models for {len(reference_dirs)} references (one per seed)")
    import sentforge
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.paired import paired_bootstrap

    paths = [*reference_dirs, *(path for runs in methods.values() for path in runs)]
    models = {path: sentforge.load(str(path)) for path in dict.fromkeys(paths)}
    for split in args.splits:
        task = load_dataset(args.domain / f"{split}.jsonl")
        items = {path: task.item_scores(model) for path, model in models.items()}
        bases = [items[path] for path in reference_dirs]
        shown = ", ".join(f"{base.score():.2f}" for base in bases)
        print(f"\n## {split}: {reference} {shown}; gain over it [95 % paired, over {len(bases[0])} units]")
        for method, paths in methods.items():
            for i, path in enumerate(paths):
                gain = paired_bootstrap(bases[i if len(bases) > 1 else 0], items[path], seed=0)
                print(f"- {method} ({path}): {items[path].score():.2f}, {gain.difference:+.2f} "
                      f"[{gain.low:+.2f}, {gain.high:+.2f}]")
            pooled = paired_bootstrap(bases, [items[path] for path in paths], seed=0)
            print(f"- {method}, pooled over {len(paths)} seeds: {pooled.difference:+.2f} "
                  f"[{pooled.low:+.2f}, {pooled.high:+.2f}]", flush=True)


if __name__ == "__main__":
    main()
