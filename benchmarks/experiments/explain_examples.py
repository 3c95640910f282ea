"""`sentforge explain` on a few real similar pairs of each domain, and how often deletion and integrated
gradients agree in sign on a word.

From each dev file (written by benchmarks/data/prepare_domain_data.py) the pairs are: the first PAIRS distinct first
texts (queries, or first sentences of label-1 pairs), each with its shortest similar text. Each pair is printed
as `sentforge explain MODEL A B --top TOP` prints it; at the end, the share of words (with both influences
non-zero) on which the two methods agree in sign, per domain and over all pairs: over every word, and over the
TOP most influential words (by deletion) of each pair.

    python benchmarks/experiments/explain_examples.py --domain-data domain-data --html docs/img/explain-example.html
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import sentforge
from sentforge.explanation import format_table, save_html

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib.data import similar_pairs

DOMAINS = ("qatarliving", "wikiqa", "twitterpara")


def example_pairs(path: Path, n: int) -> list[tuple[str, str]]:
    """The first `n` distinct first texts of `path`'s similar pairs, each with its shortest similar text."""
    shortest: dict[str, str] = {}
    for first, second in similar_pairs(path):
        if first not in shortest and len(shortest) == n:
            continue
        if first not in shortest or len(second) < len(shortest[first]):
            shortest[first] = second
    return list(shortest.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domain-data", type=Path, default=Path("domain-data"))
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS))
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--html", type=Path, default=None, help="write the first pair's HTML page here")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    model = sentforge.load(args.model)
    totals = {}
    for domain in args.domains:
        tally = [0, 0, 0, 0]  # agree, both non-zero: over all words, over the top words
        for index, (text_a, text_b) in enumerate(example_pairs(args.domain_data / domain / "dev.jsonl", args.pairs)):
            result = sentforge.explain(model, text_a, text_b, steps=args.steps, seed=args.seed)
            print(f"$ sentforge explain {args.model} {shlex.quote(text_a)} {shlex.quote(text_b)} --top {args.top}")
            print(format_table(result, args.top), end="\n\n")
            if args.html is not None and not totals and index == 0:
                save_html(result, args.html, overwrite=True)
            counts = [*result.sign_agreement(), *result.sign_agreement(args.top)]
            tally = [t + c for t, c in zip(tally, counts)]
        totals[domain] = tally
    totals["all"] = [sum(v[i] for v in totals.values()) for i in range(4)]
    print("sign agreement of deletion and integrated gradients (words with both non-zero):")
    print(f"  {'':<12} {'all words':>20} {f'top {args.top} of each pair':>24}")
    for domain, (agree, both, agree_top, both_top) in totals.items():
        print(f"  {domain:<12} {agree:>5}/{both:<5} {100 * agree / max(both, 1):6.1f}%"
              f" {agree_top:>9}/{both_top:<5} {100 * agree_top / max(both_top, 1):6.1f}%")


if __name__ == "__main__":
    main()
