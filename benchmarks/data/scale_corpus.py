"""Generate a large one-text-per-line file from the NLTK corpora for the streaming and index benchmarks.

    python benchmarks/data/scale_corpus.py --lines 2000000 --output runs/scale/lines.txt

Each line is a span of 6-24 consecutive words drawn at a random position of all corpora's sentences
joined together (seeded), so lines are realistic text and almost all distinct.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import DATA


def main() -> None:
    from sentforge.data.corpora import read_nltk_zip

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=2_000_000)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    words = []
    for archive in sorted((DATA / "corpora").glob("*.zip")):
        for sentence in read_nltk_zip(archive):
            words.extend(sentence.split())
    rng = np.random.default_rng(args.seed)
    starts = rng.integers(0, len(words) - 24, size=args.lines)
    lengths = rng.integers(6, 25, size=args.lines)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as handle:
        for start, length in zip(starts, lengths):
            handle.write(" ".join(words[start:start + length]) + "\n")
    print(f"{args.lines} lines from {len(words)} corpus words -> {args.output}")


if __name__ == "__main__":
    main()
