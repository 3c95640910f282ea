"""Read labelled sentence pairs for supervised training (MNRL, STS regression) from .tsv, .csv or .jsonl.

Tables have a header row; JSON lines are objects. The fields are `sentence1`, `sentence2`, and
optionally `score` (a number: STS regression needs it) and `negative` (a hard negative for MNRL).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from sentforge.data.texts import decoded_lines, jsonl_objects
from sentforge.errors import InputFileError

PAIR_SUFFIXES = (".tsv", ".csv", ".jsonl")
TEXT_FIELDS = ("sentence1", "sentence2")


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
    for line_no, record in _records(path):
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
    if not examples:
        raise InputFileError(f"{path} holds no sentence pairs")
    arities = {len(e) for e in examples}
    if len(arities) > 1:
        raise InputFileError(f"{path}: some rows have a negative and some do not; give every row one or none")
    return examples
