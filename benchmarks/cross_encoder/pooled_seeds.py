"""Bi-encoders trained on several seeds against one reference, pooled: each seed's gain and the gain of the
seeds' mean score, with a 95 % paired bootstrap interval over the dev and test units of a domain.

    python benchmarks/cross_encoder/pooled_seeds.py --domain domain-data/twitterpara \\
        --reference mnrl=runs/mnrl/twitterpara-s0 \\
        --runs augsbert=runs/silver/twitterpara-mpnet-s1/augsbert,runs/silver/twitterpara-mpnet-s2/augsbert \\
        --runs marginmse=runs/marginmse/twitterpara-mpnet-s1/marginmse,runs/marginmse/twitterpara-mpnet-s2/marginmse

A pooled interval resamples the units once for all seeds (sentforge.evaluation.paired.paired_bootstrap with
several models): it says how sure the gain of the method, averaged over the seeds given, is on these units; the
seeds' spread is in the per-seed rows.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import fail


def named(text: str, several: bool) -> tuple[str, list[Path]]:
    name, _, paths = text.partition("=")
    dirs = [Path(path) for path in paths.split(",") if path]
    if not name or not dirs or (not several and len(dirs) > 1):
        fail(f"{text!r}: NAME=DIR{',DIR...' if several else ''}")
    for path in dirs:
        if not (path / "modules.json").is_file():
            fail(f"{path}: not a model directory (no modules.json)")
    return name, dirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", type=Path, required=True, help="folder with dev.jsonl and test.jsonl")
    parser.add_argument("--reference", required=True, metavar="NAME=DIR", help="the model every gain is over")
    parser.add_argument("--runs", action="append", required=True, metavar="NAME=DIR,DIR,...",
                        help="one method's models, one per seed (repeat for more methods)")
    parser.add_argument("--splits", nargs="+", default=["dev", "test"])
    args = parser.parse_args()
    for split in args.splits:
        if not (args.domain / f"{split}.jsonl").is_file():
            fail(f"--domain {args.domain}: no {split}.jsonl")
    reference, (reference_dir,) = named(args.reference, several=False)
    methods = dict(named(text, several=True) for text in args.runs)
    import sentforge
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.paired import paired_bootstrap

    models = {path: sentforge.load(str(path)) for path in [reference_dir, *(p for ps in methods.values() for p in ps)]}
    for split in args.splits:
        task = load_dataset(args.domain / f"{split}.jsonl")
        items = {path: task.item_scores(model) for path, model in models.items()}
        base = items[reference_dir]
        print(f"\n## {split}: {reference} {base.score():.2f}; gain over it [95 % paired, over {len(base)} units]")
        for method, paths in methods.items():
            for path in paths:
                gain = paired_bootstrap(base, items[path], seed=0)
                print(f"- {method} ({path}): {items[path].score():.2f}, {gain.difference:+.2f} "
                      f"[{gain.low:+.2f}, {gain.high:+.2f}]")
            pooled = paired_bootstrap(base, [items[path] for path in paths], seed=0)
            print(f"- {method}, pooled over {len(paths)} seeds: {pooled.difference:+.2f} "
                  f"[{pooled.low:+.2f}, {pooled.high:+.2f}]", flush=True)


if __name__ == "__main__":
    main()
