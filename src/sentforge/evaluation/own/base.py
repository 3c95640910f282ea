"""What every task built from a user's file shares: metadata made per instance, files named as given."""

from __future__ import annotations

import logging
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from sentforge.data.pairs import _records
from sentforge.support.errors import InputFileError
from sentforge.evaluation.task import Task, TaskMetadata

FAMILY = "own"
logger = logging.getLogger(__name__)


class OwnDataTask(Task):
    """A task whose data is already read (so bad input fails before any model loads); `files` are the
    paths it was read from, relative to the working directory or absolute."""

    def __init__(self, name: str, kind: str, main_metric: str, files: Sequence[Path], seed: int = 1111) -> None:
        super().__init__(Path(), seed)
        self.metadata = TaskMetadata(name=name, family=FAMILY, main_metric=main_metric,
                                     description=f"{kind} read from {', '.join(map(str, files))}",
                                     files=tuple(str(f) for f in files), extra={"kind": kind})


def records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) of each row of a .tsv/.csv (header row) or .jsonl file; at least one."""
    rows = _records(path)
    if not rows:
        raise InputFileError(f"{path}: no rows")
    return rows


def require_fields(path: Path, line_no: int, record: dict[str, Any], fields: Sequence[str]) -> None:
    """Every one of `fields` is in `record`; else an error naming the first missing one and those present."""
    missing = [f for f in fields if f not in record]
    if missing:
        raise InputFileError(f"{path}:{line_no}: no column {missing[0]!r} (present: {', '.join(record) or 'none'}); "
                             f"this kind needs {', '.join(fields)}")


def text_field(path: Path, line_no: int, record: dict[str, Any], field: str) -> str:
    value = record[field]
    if not isinstance(value, str) or not value.strip():
        raise InputFileError(f"{path}:{line_no}: {field} must be a non-empty string, not {value!r}")
    return value.strip()


def distinct_rows(path: Path, keys: Sequence[Hashable], unit: str) -> list[int]:
    """The index of the first row of each distinct key, in file order; a warning names the file when rows repeat.

    A repeated row is one unit counted twice: the score would weigh it twice and every paired interval on the
    file would be narrower than its evidence (by about √2 when every row is doubled).
    """
    first: dict[Hashable, int] = {}
    repeats: list[tuple[int, int]] = []
    for row, key in enumerate(keys):
        if key in first:
            repeats.append((row, first[key]))
        else:
            first[key] = row
    if repeats:
        row, earlier = repeats[0]
        logger.warning("%s: %d of its %d rows repeat an earlier row (row %d repeats row %d); each distinct %s is "
                       "counted once: %d units", path, len(repeats), len(keys), row + 1, earlier + 1, unit, len(first))
    return list(first.values())
