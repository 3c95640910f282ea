"""The labelled data of a learning curve: which training method it feeds, its labelled units (what a
subset size counts), and the training file of a subset.

mnrl: positive pairs (sentence1, sentence2[, negative]), or the label-1 pairs of a file with 0/1 labels,
with its label-0 pairs as their hard negatives; a unit is a positive pair. pause: pairs with a `label`
column, some rows empty; a unit is a labelled row, and a subset keeps every pair but only its units'
labels (the other rows become unlabelled: the question is what labelling more of the same pairs buys).
sts: pairs with a `score` column; a unit is a scored pair.
classes: class-labelled texts (`text`, `label`), trained by the setfit recipe; a size counts examples per class
and its draw is nested per class (classes.py).

Every kind answers the same questions of the runs: its sizes, the training rows of a size's subset in a repeat,
how many rows a run of a size trains on, and the subset's training file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.learning_curve.subsets import DEFAULT_FRACTIONS, nested_subsets, sizes_of
from sentforge.support.errors import ConfigError, InputFileError
from sentforge.support.io import atomic_file

# method -> the recipe that trains it
METHODS = {"mnrl": "mnrl", "pause": "pause", "sts": "sts", "classes": "setfit"}


@dataclass(frozen=True)
class LabelData:
    path: Path
    method: str
    rows: list[tuple]  # every training row (for pause, unlabelled ones too)
    units: list[int]  # the indices into `rows` of the labelled units

    unit = "labels"  # what a size counts, as the report says it

    @property
    def recipe(self) -> str:
        return METHODS[self.method]

    def sizes(self, fractions: Sequence[float] | None, shots: Sequence[int] | None) -> list[int]:
        """The subset sizes: `fractions` percent of the units (default DEFAULT_FRACTIONS)."""
        if shots is not None:
            raise ConfigError(f"--shots counts examples per class of class-labelled data (text, label); {self.path} "
                              f"holds {self.method} pairs: give --fractions of its labelled units")
        return sizes_of(len(self.units), DEFAULT_FRACTIONS if fractions is None else fractions)

    def notes(self, sizes: Sequence[int]) -> list[str]:
        """What the report should say about the subsets of these sizes (nothing, for pairs)."""
        return []

    def draw(self, size: int, seed: int, repeat: int) -> list[tuple]:
        """The training rows of the `size` subset of `repeat` (subsets.py: nested within a repeat)."""
        return self.subset_rows(nested_subsets(len(self.units), [size], seed, repeat)[size])

    def training_rows(self, size: int) -> int:
        """The rows a run of `size` units trains on (PAUSE keeps every pair, labelled or not)."""
        return len(self.rows) if self.method == "pause" else size

    def write(self, path: Path, rows: list[tuple]) -> None:
        write_rows(path, self.method, rows)

    def dev_task(self, dev: str | Path, sizes: Sequence[int], seed: int) -> Any:
        """The task that scores every run on `dev` (any own-data kind but class-labelled texts)."""
        from sentforge.evaluation import load_dataset

        if dev_kind(dev) == "classes":
            raise ConfigError(f"--dev {dev}: class-labelled texts score runs trained on class-labelled --labelled "
                              f"data (text, label); {self.path} holds {self.method} pairs")
        return load_dataset(dev, name=f"dev:{Path(dev).name}")

    def subset_rows(self, chosen: Sequence[int]) -> list[tuple]:
        """The training rows of a subset given as positions into `units`."""
        picked = sorted(self.units[i] for i in chosen)
        if self.method != "pause":
            return [self.rows[i] for i in picked]
        keep = set(picked)
        return [row if i in keep else (row[0], row[1], None) for i, row in enumerate(self.rows)]


def dev_kind(dev: str | Path) -> str | None:
    """The own-data kind of `dev`, or None where the columns do not tell (loading it then says why)."""
    from sentforge.evaluation.own.load import detect_kind

    if not Path(dev).exists():
        raise InputFileError(f"--dev {dev}: file not found")
    try:
        return detect_kind(dev)
    except InputFileError:
        return None


def read_pair_data(path: Path, method: str | None = None) -> LabelData:
    """Read the pairs at `path` and decide (or check) the method: a `score` column means sts, empty labels
    pause, otherwise mnrl (read.py has checked the method's name and that the file exists)."""
    from sentforge.data.pairs import file_rows, read_pairs
    from sentforge.harness.labelled import read_labelled

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
             "sts": ("sentence1", "sentence2", "score"), "classes": ("text", "label")}[method]
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "w") as handle:
        for row in rows:
            handle.write(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n")
