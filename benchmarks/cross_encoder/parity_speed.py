"""A sentforge cross-encoder against sentence-transformers' CrossEncoder on the same directory: the largest
difference of their scores on --pairs pairs, and pairs per second of each `predict`, timed in alternating
rounds on the same pairs (sentforge, sentence-transformers, then the reverse order every other round).

    python benchmarks/cross_encoder/parity_speed.py runs/ce-ab/ql-e3-128/seed0 \
        --pairs-from domain-data/qatarliving/test.jsonl --pairs 1000 --rounds 6
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="a cross-encoder directory")
    parser.add_argument("--pairs-from", type=Path, required=True, help="a re-ranking .jsonl: (query, candidate) pairs")
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--timed-pairs", type=int, default=300, help="pairs of each timed pass")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    import numpy as np
    import torch
    from sentence_transformers import CrossEncoder as Reference

    import sentforge
    from sentforge.evaluation.own.reranking import read_reranking

    pairs = [(q.query, c) for q in read_reranking(args.pairs_from) for c in q.candidates][:args.pairs]
    ours = sentforge.load_cross_encoder(args.model)
    reference = Reference(str(args.model), device="cpu", max_length=ours.max_length)
    a = ours.predict(pairs, batch_size=args.batch_size)
    b = np.asarray(reference.predict(pairs, batch_size=args.batch_size, show_progress_bar=False))
    print(f"{len(pairs)} pairs: max |sentforge - sentence-transformers| = {np.max(np.abs(a - b)):.2e}")
    timed = pairs[:args.timed_pairs]
    runs = {"sentforge": lambda: ours.predict(timed, batch_size=args.batch_size),
            "sentence-transformers": lambda: reference.predict(timed, batch_size=args.batch_size,
                                                               show_progress_bar=False)}
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for name in runs:  # a warm-up pass each
        runs[name]()
    for round_ in range(args.rounds):
        for name in (list(runs) if round_ % 2 == 0 else list(reversed(runs))):
            started = time.perf_counter()
            runs[name]()
            rates[name].append(len(timed) / (time.perf_counter() - started))
    for name, values in rates.items():
        print(f"{name}: {statistics.median(values):.1f} pairs/s (median of {len(values)} rounds, range "
              f"{min(values):.1f}-{max(values):.1f}; torch threads {torch.get_num_threads()})")
    ratios = [x / y for x, y in zip(rates["sentforge"], rates["sentence-transformers"])]
    print(f"ratio sentforge / sentence-transformers: median {statistics.median(ratios):.2f} "
          f"(range {min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
