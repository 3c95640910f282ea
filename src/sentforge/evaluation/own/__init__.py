"""A user's own evaluation data: a file (or a BEIR folder) becomes a `Task` that the runner evaluates like
any registered benchmark.

    from sentforge.evaluation import evaluate, load_dataset
    report = evaluate("all-MiniLM-L6-v2", [load_dataset("dev.jsonl"), load_dataset("pairs.tsv", dev="dev.tsv")])

Kinds (see docs/own-data.md): `scored-pairs`, `labelled-pairs`, `reranking`, `retrieval`, `classes` (text and
label: a logistic-regression head fitted on the train file beside it, `own/classes.py`); detected from the
layout and the columns unless given.
"""

from sentforge.evaluation.own.load import (
    DATASET_KINDS,
    detect_kind,
    load_dataset,
    load_own_datasets,
    parse_dataset_spec,
)

__all__ = ["DATASET_KINDS", "detect_kind", "load_dataset", "load_own_datasets", "parse_dataset_spec"]
