"""Read labelled sentence pairs for supervised training (MNRL, STS regression) from .tsv, .csv or .jsonl.

Tables have a header row; JSON lines are objects. The fields are `sentence1`, `sentence2`, and
optionally `score` (a number: STS regression needs it), `negative` (a hard negative for MNRL) and
`label` (0/1: positive pairs are the rows labelled 1; the others are dropped, and the count logged).
A `score` column in a file read as positive pairs is refused: a score is no positive/negative label.
"""

from __future__ import annotations

import csv
import io
import logging
import math
from pathlib import Path
from typing import Any

from sentforge.data.texts import decoded_lines, jsonl_objects
from sentforge.errors import InputFileError

logger = logging.getLogger(__name__)

PAIR_SUFFIXES = (".tsv", ".csv", ".jsonl")
TEXT_FIELDS = ("sentence1", "sentence2")
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


def read_pairs(path: str | Path, with_scores: bool = False) -> list[tuple]:
    """(sentence1, sentence2[, negative]) tuples, or (sentence1, sentence2, score) when `with_scores`."""
    path = Path(path)
    examples: list[tuple] = []
    dropped = 0
    for line_no, record in _records(path):
        if not with_scores and "score" in record:
            raise InputFileError(f"{path}:{line_no}: a 'score' column, but this method trains on positive pairs; "
                                 "train on scored pairs with the `sts` method, or keep only the positive pairs "
                                 "(a 0/1 'label' column)")
        if not with_scores and "label" in record and not _is_positive(path, line_no, record["label"]):
            dropped += 1
            continue
        missing = [f for f in (*TEXT_FIELDS, *(("score",) if with_scores else ())) if f not in record]
        if missing:
            raise InputFileError(f"{path}:{line_no}: no field {', '.join(map(repr, missing))} "
                                 f"(found: {', '.join(record)}); pair files need sentence1, sentence2"
                                 f"{', score' if with_scores else ''}")
        texts = [record[f] for f in TEXT_FIELDS]
        if not all(isinstance(t, str) and t.strip() for t in texts):
            raise InputFileError(f"{path}:{line_no}: sentence1 and sentence2 must be non-empty strings")
        if with_scores:
            try:
                score = float(record["score"])
            except (TypeError, ValueError):
                raise InputFileError(f"{path}:{line_no}: score {record['score']!r} is not a number") from None
            if not math.isfinite(score):
                raise InputFileError(f"{path}:{line_no}: score {record['score']!r} is not finite")
            examples.append((*texts, score))
        elif record.get("negative"):
            examples.append((*texts, str(record["negative"])))
        else:
            examples.append(tuple(texts))
    if dropped:
        logger.info("%s: %d positive pairs (label 1); %d rows labelled 0 or unlabelled left out", path,
                    len(examples), dropped)
    if not examples:
        raise InputFileError(f"{path} holds no {'positive ' if dropped else ''}sentence pairs")
    arities = {len(e) for e in examples}
    if len(arities) > 1:
        raise InputFileError(f"{path}: some rows have a negative and some do not; give every row one or none")
    return examples


def _is_positive(path: Path, line_no: int, label: Any) -> bool:
    """Whether a row's 0/1 label marks a positive pair (an empty label: unlabelled, not positive)."""
    text = "" if label is None else str(label).strip().lower()
    if text in POSITIVE_LABELS:
        return True
    if text in NEGATIVE_LABELS or not text:
        return False
    raise InputFileError(f"{path}:{line_no}: label {label!r} is not 0 or 1; positive pairs are the rows labelled 1 "
                         "(class-labelled pairs train with the `pause` method)")
