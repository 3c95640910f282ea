"""Write the data store's Quora question pairs (a subset of GLUE QQP train) as labelled pairs that
`sentforge train cross-encoder --labelled` reads: a teacher's first stage on general duplicate questions.

    python benchmarks/data/prepare_qqp_pairs.py --data-dir ../shared/data --output runs/qqp-pairs.jsonl

Reads `glue/qqp-partial/qqp_train_subset.tsv` with sentforge's QQP reader, skipping its malformed rows (each
named in a warning), and writes one JSON line per pair: sentence1, sentence2 and label (1 for a duplicate, 0
for not). Prints the counts.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import DATA, fail
from sentforge.data.nli import DUPLICATE, read_qqp
from sentforge.support.errors import SentforgeError
from sentforge.support.io import atomic_file

QQP_SUBSET = "glue/qqp-partial/qqp_train_subset.tsv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA, help="the data store's root")
    parser.add_argument("--output", type=Path, required=True, help="new .jsonl file of labelled pairs")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.output.resolve().is_relative_to(args.data_dir.resolve()):
        fail(f"--output: {args.output} is inside the data store --data-dir {args.data_dir}, which is only read")
    if args.output.exists() and not args.overwrite:
        fail(f"--output: {args.output} exists (pass --overwrite to replace it)")
    try:
        pairs = read_qqp(args.data_dir / QQP_SUBSET, skip_malformed=True)
    except SentforgeError as err:
        fail(str(err))
    labels = [int(label == DUPLICATE) for *_, label in pairs]
    with atomic_file(args.output, "w") as handle:
        handle.writelines(json.dumps({"sentence1": a, "sentence2": b, "label": label}, ensure_ascii=False) + "\n"
                          for (a, b, _), label in zip(pairs, labels))
    counts = Counter(labels)
    print(f"wrote {args.output}: {len(pairs)} pairs, {counts[1]} duplicates, {counts[0]} not")


if __name__ == "__main__":
    main()
