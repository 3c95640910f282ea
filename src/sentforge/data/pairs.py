"""Read labelled sentence pairs for supervised training (MNRL, STS regression) from .tsv, .csv or .jsonl.

Tables have a header row; JSON lines are objects. The fields are `sentence1`, `sentence2` (or
sentence-transformers' names, `anchor` and `positive`), and
optionally `score` (a number: STS regression needs it), `negative` (a hard negative for MNRL) and
`label` (0/1: positive pairs are the rows labelled 1; a row labelled 0 makes its sentence2 a hard
negative of its sentence1, see `with_hard_negatives`; rows with an empty label are left out, and the
counts logged). A `score` column in a file read as positive pairs is refused: a score is no
positive/negative label. Rows from memory (recipes/data.py) go through the same rules (`pairs_from_rows`).
"""

from __future__ import annotations

import csv
import io
import logging
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sentforge.data.texts import decoded_lines, jsonl_objects
from sentforge.support.errors import InputFileError

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


def class_file_hint(record: Mapping[str, Any]) -> str:
    """What to say when a row of a pair file has the columns of a class-labelled file instead."""
    if "label" in record and ("text" in record or "sentence" in record):
        return ("; this looks like a class-labelled file (a text and its class per row): "
                "train on it with `sentforge train setfit`")
    return ""


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


def read_positives_and_negatives(path: str | Path) -> tuple[list[tuple], list[tuple[str, str]]]:
    """(the positive pairs of a pair file, its label-0 pairs): what `read_pairs` combines into triples."""
    path = Path(path)
    positives, negatives, _ = split_rows(file_rows(path), str(path), False, InputFileError)
    return positives, negatives


def pairs_from_rows(rows: list[Row], source: str, with_scores: bool, error: type[Exception] = InputFileError,
                    columns_argument: str | None = None) -> list[tuple]:
    """The training pairs of rows with the fields of a pair file (see the module doc), from a file or from
    memory: one rule for both, so that the same rows give the same pairs."""
    examples, negatives, unlabelled = split_rows(rows, source, with_scores, error, columns_argument)
    if unlabelled:
        logger.info("%s: %d rows with an empty label left out", source, unlabelled)
    if not examples:
        raise error(f"{source} holds no {'positive ' if negatives or unlabelled else ''}sentence pairs")
    return with_hard_negatives(examples, negatives, source)


def split_rows(rows: list[Row], source: str, with_scores: bool, error: type[Exception] = InputFileError,
               columns_argument: str | None = None) -> tuple[list[tuple], list[tuple[str, str]], int]:
    """(the training pairs: rows labelled 1, or every row of a file without labels; the (sentence1,
    sentence2) pairs of the rows labelled 0; the number of rows with an empty label)."""
    examples: list[tuple] = []
    negatives: list[tuple[str, str]] = []
    unlabelled = 0
    for where, record in rows:
        if not with_scores and "score" in record:
            raise error(f"{where}: a 'score' column, but this method trains on positive pairs; "
                        "train on scored pairs with the `sts` method, or keep only the positive pairs "
                        "(a 0/1 'label' column)")
        missing = [f for f in (*TEXT_FIELDS, *(("score",) if with_scores else ())) if f not in record]
        if missing:
            raise error(f"{where}: no field {', '.join(map(repr, missing))} (found: {', '.join(record)}); pairs "
                        f"need sentence1, sentence2{', score' if with_scores else ''}"
                        + (f" (name the roles of other columns with {columns_argument})" if columns_argument else "")
                        + class_file_hint(record))
        positive = with_scores or "label" not in record or _is_positive(where, record["label"], error)
        if not positive and _is_unlabelled(record["label"]):
            unlabelled += 1
            continue
        texts = [record[f] for f in TEXT_FIELDS]
        if not all(isinstance(t, str) and t.strip() for t in texts):
            raise error(f"{where}: sentence1 and sentence2 must be non-empty strings")
        if not positive:
            negatives.append((texts[0], texts[1]))
        elif with_scores:
            examples.append((*texts, finite_number(where, record["score"], error)))
        elif record.get("negative"):
            examples.append((*texts, str(record["negative"])))
        else:
            examples.append(tuple(texts))
    if len({len(e) for e in examples}) > 1:
        raise error(f"{source}: some rows have a negative and some do not; give every row one or none")
    return examples, negatives, unlabelled


def with_hard_negatives(positives: Sequence[tuple], negatives: Sequence[tuple[str, str]],
                        source: str) -> list[tuple]:
    """(anchor, positive, negative) triples for MNRL: the positive pairs with the label-0 pairs' texts as
    hard negatives; the positives unchanged when there are no label-0 pairs or they carry a negative already.

    The i-th positive of an anchor (its sentence1) gets the (i mod n)-th of the anchor's n label-0 texts,
    in file order (a text labelled 1 for the same anchor is none of them): a fixed one per pair, as the
    NLI triples take theirs. An anchor without a label-0 pair takes a label-0 text of another anchor, spread
    evenly over them in file order, because a text of another anchor is what an in-batch negative already
    is: every positive trains, and every example has the same arity, which a contrastive batch needs.
    """
    if not negatives or any(len(pair) != 2 for pair in positives):
        if negatives:
            logger.info("%s: the rows carry their own negatives; %d rows labelled 0 left out", source, len(negatives))
        return list(positives)
    related = {(anchor, text) for anchor, text in positives}
    own: dict[str, dict[str, None]] = {}  # ordered sets
    for anchor, text in negatives:
        if (anchor, text) not in related:
            own.setdefault(anchor, {})[text] = None
    own_lists = {anchor: list(texts) for anchor, texts in own.items()}
    pool = list(dict.fromkeys(text for texts in own_lists.values() for text in texts))
    without = sum(anchor not in own_lists for anchor, _ in positives)
    taken: Counter[str] = Counter()
    borrowed = 0
    triples = []
    for anchor, positive in positives:
        texts = own_lists.get(anchor)
        if texts:
            negative = texts[taken[anchor] % len(texts)]
            taken[anchor] += 1
        else:
            negative = _borrowed(pool, borrowed * len(pool) // without, anchor, related, source)
            borrowed += 1
        triples.append((anchor, positive, negative))
    logger.info("%s: %d positive pairs (label 1), each with a hard negative from the rows labelled 0: %d of its "
                "own sentence1, %d (a sentence1 without such a row) of another; %d distinct negatives of %d used",
                source, len(triples), len(triples) - borrowed, borrowed, len({t[2] for t in triples}), len(pool))
    return triples


def _borrowed(pool: list[str], start: int, anchor: str, related: set[tuple[str, str]], source: str) -> str:
    """The first text of `pool` from `start` on (cyclically) that is neither the anchor nor one of its positives."""
    for i in range(len(pool)):
        text = pool[(start + i) % len(pool)]
        if text != anchor and (anchor, text) not in related:
            return text
    raise InputFileError(f"{source}: no text labelled 0 can be the hard negative of {anchor!r}: each is that "
                         "sentence or one of its positives")


def finite_number(where: str, value: Any, error: type[Exception], name: str = "score") -> float:
    """A row's `name` field as a finite float, or `error` naming the row."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise error(f"{where}: {name} {value!r} is not a number") from None
    if not math.isfinite(number):
        raise error(f"{where}: {name} {value!r} is not finite")
    return number


def _is_unlabelled(label: Any) -> bool:
    return label is None or not str(label).strip()


def _is_positive(where: str, label: Any, error: type[Exception]) -> bool:
    """Whether a row's 0/1 label marks a positive pair (an empty label: unlabelled, not positive)."""
    text = "" if _is_unlabelled(label) else str(label).strip().lower()
    if text in POSITIVE_LABELS:
        return True
    if text in NEGATIVE_LABELS or not text:
        return False
    raise error(f"{where}: label {label!r} is not 0 or 1; positive pairs are the rows labelled 1 "
                "(class-labelled pairs train with the `pause` method)")
