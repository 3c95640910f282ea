"""Class-labelled texts (an intent per utterance, a category per ticket): `text` + `label` rows.

A file is a .jsonl (one object per line), .csv or .tsv (header row) of rows with a text column — `text`
(SetFit's name) or `sentence` (sentence-transformers' and GLUE's) — and a `label` column holding the class: a
string or an integer (a JSON float with an integral value is that integer). Rows from memory (a
`datasets.Dataset`, dicts, (text, label) tuples: recipes/data.py) go through the same rules
(`classes_from_rows`). A training set's every class needs two examples (pairs are drawn within a class);
rows that carry two texts (sentence1/sentence2, anchor/positive) or a `score` are pairs, refused with the
methods that train on them. `unseen_classes` warns about evaluation classes that training never saw.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.data.pairs import Row, file_rows
from sentforge.support.errors import ConfigError, InputFileError

logger = logging.getLogger(__name__)

TEXT_COLUMNS = ("text", "sentence")
LABEL_COLUMN = "label"
# Columns that make a row a pair, not a class-labelled text.
PAIR_COLUMNS = ("sentence1", "sentence2", "anchor", "positive", "score")

Label = str | int
ClassExample = tuple[str, Label]


def is_class_row(record: Mapping[str, Any]) -> bool:
    """A row of one text and its class: a text column and `label`, no pair column."""
    fields = set(record)
    return LABEL_COLUMN in fields and bool(fields & set(TEXT_COLUMNS)) and not fields & set(PAIR_COLUMNS)


def is_classes_file(path: str | Path) -> bool:
    """The file's first row is one text and its class (`is_class_row`)."""
    rows = file_rows(Path(path))
    return bool(rows) and is_class_row(rows[0][1])


def read_classes(path: str | Path, columns: Mapping[str, str] | None = None, columns_argument: str = "columns",
                 min_per_class: int = 2) -> list[ClassExample]:
    """The (text, label) rows of a class-labelled file; `columns` renames file columns first
    ({"utterance": "text", "intent": "label"}). `min_per_class`: 2 for training data, 1 for evaluation data."""
    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"{path}: file not found")
    return classes_from_rows(file_rows(path, columns, columns_argument), str(path), InputFileError, min_per_class)


def classes_from_rows(rows: Sequence[Row], source: str, error: type[Exception] = InputFileError,
                      min_per_class: int = 2) -> list[ClassExample]:
    """(text, label) of each row (the module doc's rules), from a file or from memory."""
    if not rows:
        raise error(f"{source} holds no rows")
    examples: list[ClassExample] = []
    first_line: dict[Label, str] = {}
    for where, record in rows:
        pair = [name for name in PAIR_COLUMNS if name in record]
        if pair:
            raise error(f"{where}: columns {', '.join(pair)} make this row a sentence pair, but class-labelled data "
                        "is one text and its class per row (text, label); pairs train with the mnrl, sts or pause "
                        "methods")
        text_column = next((name for name in TEXT_COLUMNS if name in record), None)
        if text_column is None:
            raise error(f"{where}: no text column (found: {', '.join(map(str, record)) or 'none'}); class-labelled "
                        f"rows need {' or '.join(map(repr, TEXT_COLUMNS))} and {LABEL_COLUMN!r} (rename other "
                        "columns with columns=, --columns: utterance=text,intent=label)")
        if LABEL_COLUMN not in record:
            raise error(f"{where}: no {LABEL_COLUMN!r} column (found: {', '.join(map(str, record))}); every text "
                        "needs its class")
        text = record[text_column]
        if not isinstance(text, str) or not text.strip():
            raise error(f"{where}: {text_column} must be a non-empty string, not {text!r}")
        label = _label(where, record[LABEL_COLUMN], error)
        first_line.setdefault(label, where)
        examples.append((text.strip(), label))
    if len({type(label) for _, label in examples}) > 1:
        raise error(f"{source}: some labels are integers and some strings; give every class in one form")
    counts = Counter(label for _, label in examples)
    if len(counts) < 2:
        raise error(f"{source}: every row has class {examples[0][1]!r}; a classifier needs two classes or more")
    few = [label for label, n in counts.items() if n < min_per_class]
    if few:
        named = ", ".join(f"{label!r} ({first_line[label]})" for label in sorted_classes(few)[:5])
        raise error(f"{source}: {len(few)} class(es) with one example: {named}{', ...' if len(few) > 5 else ''}; "
                    "training pairs two texts of a class: add an example to each, or drop those classes")
    return examples


def _label(where: str, value: Any, error: type[Exception]) -> Label:
    """A class: a non-empty string (stripped) or an integer."""
    if isinstance(value, bool) or value is None:
        raise error(f"{where}: label {value!r} is not a class (a string or an integer)")
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise error(f"{where}: label {value!r} is not a class (a string or an integer)")
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise error(f"{where}: empty label; every text needs its class")


def sorted_classes(labels: Sequence[Label] | set[Label]) -> list[Label]:
    """The distinct classes in a fixed order: integers by value, strings alphabetically."""
    return sorted(set(labels), key=lambda label: (isinstance(label, str), label))


def unseen_classes(training: Sequence[ClassExample], evaluated: Sequence[ClassExample], source: str) -> list[Label]:
    """The classes of `evaluated` that `training` lacks (a head never predicts them), with a warning naming them."""
    known = {label for _, label in training}
    unseen = sorted_classes({label for _, label in evaluated if label not in known})
    if unseen:
        items = sum(label in set(unseen) for _, label in evaluated)
        logger.warning("%s: %d class(es) absent from the training data, so never predicted (%d of %d items): %s",
                       source, len(unseen), items, len(evaluated), ", ".join(map(repr, unseen)))
    return unseen


def class_members(labels: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    """The positions of each class's items, classes in order of first appearance."""
    members: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    return members


def per_class_draw(examples: Sequence[ClassExample], shots: int, seed: int) -> list[ClassExample]:
    """`shots` examples of each class (all of a smaller class), nested over `shots` for one seed: each class
    is one seeded permutation and the draw takes its first `shots`; file order kept in the result."""
    if shots < 1:
        raise ConfigError(f"shots must be at least 1, got {shots}")
    rng = np.random.default_rng(seed)
    members = class_members([label for _, label in examples])
    kept: list[int] = []
    for label in sorted_classes(list(members)):
        kept.extend(int(i) for i in rng.permutation(members[label])[:shots])
    return [examples[i] for i in sorted(kept)]
