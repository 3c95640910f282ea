"""Is a cross-encoder trained on a domain's labelled pairs a better ranker than the bi-encoder it starts from?

For each seed: a cross-encoder trained on --labelled (`sentforge.train_cross_encoder`, a run directory under
--output, reused when finished), then on the dev and test files: the start bi-encoder, the cross-encoder alone,
the cross-encoder re-ranking the start's top --rerank-top, and with --bi-encoder each other bi-encoder (e.g. an
`mnrl` model) alone and re-ranked: by the cross-encoder's score (weight 1), and by the interpolation of the
bi-encoder's and the cross-encoder's scores whose weight is chosen on dev (the first split) and reported on the
others. Each row: the score and the paired 95 % bootstrap interval of its gain over the start on the same
units; pooled over seeds (one draw of the units for all seeds).

    python benchmarks/cross_encoder/teacher_ab.py --domain domain-data/qatarliving \
        --labelled domain-data/qatarliving/labelled-without-test.jsonl --seeds 0 1 2 --output runs/ce-ab/ql

`--teacher` starts the cross-encoder from another (e.g. larger) encoder than the start bi-encoder, or trains a
cross-encoder directory further (e.g. one trained first on general duplicate questions); the gains
over each `--bi-encoder` are printed beside the gains over the start in the pooled tables.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path


WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


class Memo:
    """A cross-encoder whose scores of a pair are computed once (the weights re-rank the same pairs)."""

    def __init__(self, cross_encoder):
        self.cross_encoder, self.name, self.kept = cross_encoder, cross_encoder.name, {}

    def predict(self, pairs, batch_size=32, show_progress_bar=None):
        import numpy as np

        new = [p for p in dict.fromkeys(pairs) if p not in self.kept]
        if new:
            self.kept.update(zip(new, self.cross_encoder.predict(new, batch_size=batch_size)))
        return np.array([self.kept[p] for p in pairs], dtype=np.float64)


class EncodedOnce:
    """A bi-encoder whose vector of a text is computed once (each weight re-ranks the same first stage)."""

    def __init__(self, encoder):
        self.encoder, self.name, self.kept = encoder, encoder.name, {}

    def encode(self, texts, **options):
        import numpy as np

        new = [t for t in dict.fromkeys(texts) if t not in self.kept]
        if new:
            self.kept.update(zip(new, self.encoder.encode(new, **options)))
        return np.stack([self.kept[t] for t in texts])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", type=Path, required=True, help="folder with dev.jsonl and test.jsonl")
    parser.add_argument("--labelled", type=Path, required=True, help="labelled pairs to train on")
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="the start bi-encoder")
    parser.add_argument("--teacher", help="the encoder whose transformer the cross-encoder starts from, or a "
                                          "cross-encoder directory to train further (default: --model)")
    parser.add_argument("--bi-encoder", action="append", default=[], metavar="NAME=DIR",
                        help="another bi-encoder to compare and re-rank, e.g. mnrl=runs/mnrl (repeat)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--negatives", type=int, default=1)
    parser.add_argument("--symmetric", action="store_true")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--rerank-top", type=int, default=10)
    parser.add_argument("--splits", nargs="+", default=["dev", "test"])
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")

    import sentforge
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.paired import paired_bootstrap
    from sentforge.evaluation.reranker import Reranked

    start = sentforge.load(args.model)
    others = dict(spec.split("=", 1) for spec in args.bi_encoder)
    bi = {"start": start, **{name: sentforge.load(path) for name, path in others.items()}}
    tasks = {split: load_dataset(args.domain / f"{split}.jsonl") for split in args.splits}
    first = {split: {name: task.item_scores(model) for name, model in bi.items()} for split, task in tasks.items()}
    rows: dict[str, dict[str, list]] = {split: {} for split in tasks}
    for seed in args.seeds:
        run = args.output / f"seed{seed}"
        began = time.perf_counter()
        if (run / "train.json").is_file():
            ce = sentforge.load_cross_encoder(run)
        else:
            ce = sentforge.train_cross_encoder(args.teacher or args.model, args.labelled, run, seed=seed,
                                               epochs=args.epochs, lr=args.lr, batch_size=args.batch_size,
                                               negatives=args.negatives,
                                               symmetric=args.symmetric, max_length=args.max_length)
        print(f"seed {seed}: cross-encoder ready in {time.perf_counter() - began:.0f} s ({run})", flush=True)
        memo, chosen = Memo(ce), {}
        for split, task in tasks.items():
            scored = {name: items for name, items in first[split].items()}
            alone = Reranked(None, ce, None)
            scored["cross-encoder alone"] = task.item_scores(alone)
            memo.kept.clear()  # the texts of each split are scored afresh
            for name, model in bi.items():
                model = EncodedOnce(model)
                label = f"{name} + cross-encoder top {args.rerank_top}"
                by_weight = {w: task.item_scores(Reranked(model, memo, args.rerank_top, weight=w)) for w in WEIGHTS}
                scored[label] = by_weight[1.0]
                if not chosen.get(name):  # the first split (dev) chooses the weight
                    chosen[name] = max(WEIGHTS, key=lambda w: (by_weight[w].score(), -w))
                scored[f"{name} + interpolated (weight chosen on {args.splits[0]})"] = by_weight[chosen[name]]
            print(f"  {split}: {alone.pairs_per_second or 0:.1f} pairs/s (cross-encoder alone); weights chosen on "
                  f"{args.splits[0]}: {chosen}")
            for name, items in scored.items():
                rows[split].setdefault(name, []).append(items)
                gain = paired_bootstrap(first[split]["start"], items, seed=0)
                print(f"  {split} seed {seed}: {name}: {items.score():.2f} (gain over start {gain.difference:+.2f} "
                      f"[{gain.low:+.2f}, {gain.high:+.2f}])", flush=True)
    for split in tasks:
        print(f"\n## {split}, pooled over seeds {args.seeds}: score, gain over the start [95 %]")
        for name, items in rows[split].items():
            gain = paired_bootstrap([first[split]["start"]] * len(items), items, seed=0)
            mean = sum(i.score() for i in items) / len(items)
            against = "".join(
                f"; over {other} {g.difference:+.2f} [{g.low:+.2f}, {g.high:+.2f}]"
                for other in others if other != name
                for g in [paired_bootstrap(rows[split][other], items, seed=0)])
            print(f"- {name}: {mean:.2f}, {gain.difference:+.2f} [{gain.low:+.2f}, {gain.high:+.2f}]{against}")


if __name__ == "__main__":
    main()
