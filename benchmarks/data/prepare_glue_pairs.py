"""Write a GLUE pair set of the data store as labelled pairs that `sentforge train cross-encoder --labelled`
reads: a teacher's first stage on a general task close to the user's (duplicate questions for a forum,
question-answer entailment for answer selection).

    python benchmarks/data/prepare_glue_pairs.py qqp --data-dir ../shared/data --output runs/qqp-pairs.jsonl
    python benchmarks/data/prepare_glue_pairs.py qnli --data-dir ../shared/data --output runs/qnli-pairs.jsonl \
        --heldout domain-data/wikiqa/dev.jsonl domain-data/wikiqa/test.jsonl

`qqp` reads `glue/qqp-partial/qqp_train_subset.tsv` (a subset of QQP train) with sentforge's QQP reader,
skipping its malformed rows (each named in a warning); label 1 is a duplicate. `qnli` reads QNLI's dev file
(its train file is not in the store); label 1 is a sentence that answers the question (`entailment`). One JSON
line per pair: sentence1, sentence2 and label (1 or 0). With `--heldout`, a pair with a text that is a text of
those evaluation files or a near copy of one is left out, by adapt's dev-hygiene rule. Prints the counts.
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
from sentforge.data.near_duplicates import near_duplicates
from sentforge.data.nli import DUPLICATE, read_glue_nli, read_qqp
from sentforge.evaluation import load_dataset
from sentforge.support.errors import SentforgeError
from sentforge.support.io import atomic_file

# set: (file in the store, reader, the label that is a positive pair)
SETS = {
    "qqp": ("glue/qqp-partial/qqp_train_subset.tsv", lambda path: read_qqp(path, skip_malformed=True), DUPLICATE),
    "qnli": ("glue/glue_data/QNLI/dev.tsv", read_glue_nli, "entailment"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", choices=sorted(SETS), help="the GLUE pair set to write")
    parser.add_argument("--data-dir", type=Path, default=DATA, help="the data store's root")
    parser.add_argument("--output", type=Path, required=True, help="new .jsonl file of labelled pairs")
    parser.add_argument("--heldout", type=Path, nargs="+", default=[],
                        help="evaluation files (dev, test) whose texts, and near copies of them, no pair may hold")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.output.resolve().is_relative_to(args.data_dir.resolve()):
        fail(f"--output: {args.output} is inside the data store --data-dir {args.data_dir}, which is only read")
    if any(args.output.resolve() == path.resolve() for path in args.heldout):
        fail(f"--output: {args.output} is one of the --heldout files, which are only read")
    if args.output.exists() and not args.overwrite:
        fail(f"--output: {args.output} exists (pass --overwrite to replace it)")
    relative_path, read, positive = SETS[args.set]
    try:
        pairs = read(args.data_dir / relative_path)
        heldout = [text for path in args.heldout for text in load_dataset(path).texts()]
    except SentforgeError as err:
        fail(str(err))
    touching = near_duplicates([a for a, *_ in pairs], heldout) | near_duplicates([b for _, b, _ in pairs], heldout)
    pairs = [pair for pair, hit in zip(pairs, touching) if not hit]
    labels = [int(label == positive) for *_, label in pairs]
    with atomic_file(args.output, "w") as handle:
        handle.writelines(json.dumps({"sentence1": a, "sentence2": b, "label": label}, ensure_ascii=False) + "\n"
                          for (a, b, _), label in zip(pairs, labels))
    counts = Counter(labels)
    print(f"wrote {args.output}: {len(pairs)} pairs, {counts[1]} positive ({positive}), {counts[0]} not; "
          f"{int(touching.sum())} left out as holding a held-out text or a near copy")


if __name__ == "__main__":
    main()
