"""Read labelled sentence pairs for supervised training (MNRL, STS regression) from .tsv, .csv or .jsonl.

Tables have a header row; JSON lines are objects. The fields are `sentence1`, `sentence2` (or
sentence-transformers' names, `anchor` and `positive`), and
optionally `score` (a number: STS regression needs it), `negative` (a hard negative for MNRL) and
`label` (0/1: positive pairs are the rows labelled 1; the others are dropped, and the count logged).
A `score` column in a file read as positive pairs is refused: a score is no positive/negative label.
Rows from memory (recipes/data.py) go through the same rules (`pairs_from_rows`).
"""

from __future__ import annotations

import csv
import io
import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sentforge.data.texts import decoded_lines, jsonl_objects
from sentforge.errors import InputFileError

logger = logging.getLogger(__name__)

PAIR_SUFFIXES = (".tsv", ".csv", ".jsonl")
TEXT_FIELDS = ("sentence1", "sentence2")
# sentence-transformers' column names of a pair, read as the fields they stand for.
ST_COLUMN_NAMES = {"anchor": "sentence1", "positive": "sentence2"}
POSITIVE_LABELS = {"1", "1.0", "true"}
NEGATIVE_LABELS = {"0", "0.0", "false"}


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) of each non-empty row."""
    suffix = path.suffix.lower()
    if suffix not in PAIR_SUFFIXES:
        raise InputFileError(f"{path}: unsupported pair file type {suffix or '(none)'}; use {', '.join(PAIR_SUFFIXES)}")
    lines = decoded_lines(path)
    if suffix == ".jsonl":
        return jsonl_objects(path, lines)
    if not lines:
        return []
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter="\t" if suffix == ".tsv" else ",",
                        quoting=csv.QUOTE_NONE if suffix == ".tsv" else csv.QUOTE_MINIMAL)
    header = next(reader)
    records = []
    for row in reader:
        if not row:
            continue
        if len(row) != len(header):
            raise InputFileError(f"{path}:{reader.line_num}: {len(row)} fields, the header has {len(header)}")
        records.append((reader.line_num, dict(zip(header, row))))
    return records


# (where, record): where names the row in errors ("pairs.tsv:3", "data[2]"); the record maps field -> value.
Row = tuple[str, dict[str, Any]]


def file_rows(path: Path, columns: Mapping[str, str] | None = None, columns_argument: str = "columns") -> list[Row]:
    """The rows of a pair file, each column renamed by `columns` (file column -> field) when it is mapped;
    sentence-transformers' `anchor` and `positive` name sentence1 and sentence2 unless `columns` gives
    those fields. A column of `columns` that the file lacks is an error naming `columns_argument`."""
    rows = []
    for line_no, record in _records(path):
        where = f"{path}:{line_no}"
        absent = [name for name in (columns or {}) if name not in record]
        if absent:
            raise InputFileError(f"{where}: no column {', '.join(map(repr, absent))}, which {columns_argument} "
                                 f"names (found: {', '.join(record)})")
        mapped = set((columns or {}).values())
        mapping = {name: field for name, field in ST_COLUMN_NAMES.items()
                   if name in record and field not in record and field not in mapped} | dict(columns or {})
        rows.append((where, renamed(record, mapping, where, InputFileError)))
    return rows


def renamed(record: dict[str, Any], columns: Mapping[str, str] | None, where: str,
            error: type[Exception]) -> dict[str, Any]:
    """The record with its columns renamed by `columns`; two columns ending up with one name is an error."""
    if not columns:
        return record
    result = {columns.get(name, name): value for name, value in record.items()}
    if len(result) < len(record):
        clash = next(role for role in columns.values() if role in record and role not in columns)
        raise error(f"{where}: a column is mapped to {clash!r}, but there is a {clash!r} column too")
    return result


def read_pairs(path: str | Path, with_scores: bool = False, columns: Mapping[str, str] | None = None,
               columns_argument: str | None = None) -> list[tuple]:
    """(sentence1, sentence2[, negative]) tuples, or (sentence1, sentence2, score) when `with_scores`.
    `columns` renames the file's columns to these fields; `columns_argument` names the caller's option for
    it in the error about a missing field."""
    path = Path(path)
    return pairs_from_rows(file_rows(path, columns, columns_argument or "columns"), str(path), with_scores,
                           InputFileError, columns_argument)


def pairs_from_rows(rows: list[Row], source: str, with_scores: bool, error: type[Exception] = InputFileError,
                    columns_argument: str | None = None) -> list[tuple]:
    """The training pairs of rows with the fields of a pair file (see the module doc), from a file or from
    memory: one rule for both, so that the same rows give the same pairs."""
    examples: list[tuple] = []
    dropped = 0
    for where, record in rows:
        if not with_scores and "score" in record:
            raise error(f"{where}: a 'score' column, but this method trains on positive pairs; "
                        "train on scored pairs with the `sts` method, or keep only the positive pairs "
                        "(a 0/1 'label' column)")
        if not with_scores and "label" in record and not _is_positive(where, record["label"], error):
            dropped += 1
            continue
        missing = [f for f in (*TEXT_FIELDS, *(("score",) if with_scores else ())) if f not in record]
        if missing:
            raise error(f"{where}: no field {', '.join(map(repr, missing))} (found: {', '.join(record)}); pairs "
                        f"need sentence1, sentence2{', score' if with_scores else ''}"
                        + (f" (name the roles of other columns with {columns_argument})" if columns_argument else ""))
        texts = [record[f] for f in TEXT_FIELDS]
        if not all(isinstance(t, str) and t.strip() for t in texts):
            raise error(f"{where}: sentence1 and sentence2 must be non-empty strings")
        if with_scores:
            examples.append((*texts, _score(where, record["score"], error)))
        elif record.get("negative"):
            examples.append((*texts, str(record["negative"])))
        else:
            examples.append(tuple(texts))
    if dropped:
        logger.info("%s: %d positive pairs (label 1); %d rows labelled 0 or unlabelled left out", source,
                    len(examples), dropped)
    if not examples:
        raise error(f"{source} holds no {'positive ' if dropped else ''}sentence pairs")
    arities = {len(e) for e in examples}
    if len(arities) > 1:
        raise error(f"{source}: some rows have a negative and some do not; give every row one or none")
    return examples


def _score(where: str, value: Any, error: type[Exception]) -> float:
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise error(f"{where}: score {value!r} is not a number") from None
    if not math.isfinite(score):
        raise error(f"{where}: score {value!r} is not finite")
    return score


def _is_positive(where: str, label: Any, error: type[Exception]) -> bool:
    """Whether a row's 0/1 label marks a positive pair (an empty label: unlabelled, not positive)."""
    text = "" if label is None else str(label).strip().lower()
    if text in POSITIVE_LABELS:
        return True
    if text in NEGATIVE_LABELS or not text:
        return False
    raise error(f"{where}: label {label!r} is not 0 or 1; positive pairs are the rows labelled 1 "
                "(class-labelled pairs train with the `pause` method)")
