"""The labelled data of a learning curve: which training method it feeds, its labelled units (what a
subset size counts), and the training file of a subset.

mnrl: positive pairs (sentence1, sentence2[, negative]), or the label-1 pairs of a file with 0/1 labels,
with its label-0 pairs as their hard negatives; a unit is a positive pair. pause: pairs with a `label`
column, some rows empty; a unit is a labelled row, and a subset keeps every pair but only its units'
labels (the other rows become unlabelled: the question is what labelling more of the same pairs buys).
sts: pairs with a `score` column; a unit is a scored pair.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sentforge.support.errors import ConfigError, InputFileError
from sentforge.support.io import atomic_file

METHODS = {"mnrl": "mnrl", "pause": "pause", "sts": "sts"}  # method -> the recipe that trains it


@dataclass(frozen=True)
class LabelData:
    path: Path
    method: str
    rows: list[tuple]  # every training row (for pause, unlabelled ones too)
    units: list[int]  # the indices into `rows` of the labelled units

    @property
    def recipe(self) -> str:
        return METHODS[self.method]

    def subset_rows(self, chosen: Sequence[int]) -> list[tuple]:
        """The training rows of a subset given as positions into `units`."""
        picked = sorted(self.units[i] for i in chosen)
        if self.method != "pause":
            return [self.rows[i] for i in picked]
        keep = set(picked)
        return [row if i in keep else (row[0], row[1], None) for i, row in enumerate(self.rows)]


def read_label_data(path: str | Path, method: str | None = None) -> LabelData:
    """Read `path` and decide (or check) the method: a `score` column means sts, empty labels pause,
    otherwise mnrl."""
    from sentforge.data.pairs import file_rows, read_pairs
    from sentforge.harness.labelled import read_labelled

    path = Path(path)
    if method is not None and method not in METHODS:
        raise ConfigError(f"--method {method!r}: choose from {', '.join(METHODS)}")
    if not path.is_file():
        raise InputFileError(f"--labelled {path}: file not found")
    scored = any("score" in record for _, record in file_rows(path))
    if method is None:
        method = "sts" if scored else "pause" if read_labelled(path, "labels").partial is not None else "mnrl"
    if method == "sts":
        if not scored:
            raise ConfigError(f"--method sts: {path} has no score column (sentence1, sentence2, score)")
        rows = read_pairs(path, with_scores=True)
        return LabelData(path, method, rows, list(range(len(rows))))
    if method == "pause":
        from sentforge.data.nli import read_nli_table

        rows = [tuple(row) for row in read_nli_table(path)]
        units = [i for i, row in enumerate(rows) if row[2] is not None]
        if not units:
            raise ConfigError(f"--method pause: {path} has no labelled rows (a label column, some rows filled)")
        return LabelData(path, method, rows, units)
    positives = read_labelled(path, "labels").positives
    if not positives:
        raise ConfigError(f"--method mnrl: {path} holds no positive pairs")
    return LabelData(path, method, [tuple(p) for p in positives], list(range(len(positives))))


def write_rows(path: Path, method: str, rows: list[tuple]) -> None:
    """A subset's training file (.jsonl), written atomically."""
    names = {"mnrl": ("sentence1", "sentence2", "negative"), "pause": ("sentence1", "sentence2", "label"),
             "sts": ("sentence1", "sentence2", "score")}[method]
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "w") as handle:
        for row in rows:
            handle.write(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n")
