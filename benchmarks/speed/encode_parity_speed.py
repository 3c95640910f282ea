"""Parity and speed of sentforge's Encoder.encode against sentence-transformers on the raw STS-B test set.

    python benchmarks/speed/encode_parity_speed.py [--rounds 5] [--batch-size 32]

Prints, per model: max |1 - cos(sentforge, sentence-transformers)| over the 2,758 sentences, the STS-B
test Spearman x100 of both, and the median sentences/s of each over alternating A/B rounds (fp32, CPU).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib.data import reference_models, spearman, stsb_test

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    import sentforge
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    torch.manual_seed(0)
    first, second, gold = stsb_test()
    texts = first + second
    models = reference_models()
    print(f"{len(texts)} sentences, batch {args.batch_size}, fp32, CPU, torch threads {torch.get_num_threads()}")
    for name, path in models.items():
        ours = sentforge.load(path)
        theirs = SentenceTransformer(path, device="cpu")
        v_ours = ours.encode(texts, batch_size=args.batch_size)
        v_theirs = theirs.encode(texts, batch_size=args.batch_size, convert_to_numpy=True)
        cos = (v_ours * v_theirs).sum(1) / (np.linalg.norm(v_ours, axis=1) * np.linalg.norm(v_theirs, axis=1))
        print(f"\n{name}")
        print(f"  parity: max |1 - cos| = {np.abs(1 - cos).max():.2e}")
        print(f"  STS-B test Spearman x100: sentforge {spearman(v_ours, len(first), gold):.2f}, "
              f"sentence-transformers {spearman(v_theirs, len(first), gold):.2f}")
        rates = {"sentforge": [], "sentence-transformers": []}
        for _ in range(args.rounds):
            for label, run in (("sentforge", partial(ours.encode, texts, batch_size=args.batch_size)),
                               ("sentence-transformers", partial(theirs.encode, texts, batch_size=args.batch_size))):
                start = time.perf_counter()
                run()
                rates[label].append(len(texts) / (time.perf_counter() - start))
        med = {k: statistics.median(v) for k, v in rates.items()}
        print(f"  speed (median of {args.rounds} alternating rounds): sentforge {med['sentforge']:.1f} sent/s, "
              f"sentence-transformers {med['sentence-transformers']:.1f} sent/s, "
              f"ratio {med['sentforge'] / med['sentence-transformers']:.2f}")


if __name__ == "__main__":
    main()
