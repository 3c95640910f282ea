"""Read one text per record from .txt, .jsonl, .csv or .tsv files, with errors that name the line.

`iter_texts` streams a file record by record (memory bounded by one record); `read_texts` is its list.
`iter_records` also says where each record begins, and reads on from such a position, so that another
process can read any part of a file without reading what comes before it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from sentforge.support.errors import InputFileError

TEXT_SUFFIXES = (".txt", ".jsonl", ".csv", ".tsv")


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputFileError(f"input file not found: {path}")
    if path.is_dir():
        raise InputFileError(f"input path is a directory, expected a file: {path}")


class Position(NamedTuple):
    """Where a record begins: the byte offset and the number (from 1) of its first line."""

    offset: int
    line: int


FILE_START = Position(0, 1)


class _Lines:
    """Decoded lines of an open UTF-8 file without their line endings, from any position; `position` is
    where the next line begins, `last` where the line last returned began."""

    def __init__(self, path: Path, handle: BinaryIO) -> None:
        self.path, self.handle = path, handle
        self.seek(FILE_START)

    def seek(self, position: Position) -> None:
        self.handle.seek(position.offset)
        self.offset, self.line = position
        self.last = position

    @property
    def position(self) -> Position:
        return Position(self.offset, self.line)

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        raw = self.handle.readline()
        if not raw:
            raise StopIteration
        self.last = Position(self.offset, self.line)
        self.offset += len(raw)
        self.line += 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputFileError(f"{self.path}:{self.last.line}: not valid UTF-8 "
                                 f"(byte {err.start + 1} of the line)") from None
        if self.last.offset == 0:
            text = text.removeprefix("\ufeff")
        return text.rstrip("\r\n")


def iter_decoded_lines(path: Path) -> Iterator[str]:
    """Lines of a UTF-8 file without their line endings, read lazily; a byte error names the line."""
    _check_file(path)
    with open(path, "rb") as handle:
        yield from _Lines(path, handle)


def decoded_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 file without their line endings; a byte error names the line."""
    return list(iter_decoded_lines(path))


def check_text_file(path: str | Path) -> Path:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TEXT_SUFFIXES:
        raise InputFileError(f"{path}: unsupported file type {suffix or '(none)'}; "
                             f"use one of {', '.join(TEXT_SUFFIXES)}")
    _check_file(path)
    return path


def iter_texts(path: str | Path, field: str | None = None, column: str | None = None) -> Iterator[str]:
    """Texts of a file, one per record, in file order, read lazily.

    .txt: one text per line (blank lines are kept so that row i of the output is line i).
    .jsonl: one JSON object per line, text under `field` (default "text").
    .csv/.tsv: a header row, text under `column` (default "text"); quoted fields may span lines,
    and a quote left open at the end of the file is an error naming the line where it opened.
    """
    return (text for _, text in iter_records(path, field, column))


def iter_records(path: str | Path, field: str | None = None, column: str | None = None,
                 start: Position = FILE_START) -> Iterator[tuple[Position, str]]:
    """(where the record begins, its text) for each record of a file (see `iter_texts`), read lazily from
    `start`: the file's beginning or a position this function yielded before (a .csv/.tsv header is
    still read from the file's beginning)."""
    path = check_text_file(path)
    return _iter_records(path, path.suffix.lower(), field, column, start)


def _iter_records(path: Path, suffix: str, field: str | None, column: str | None,
                  start: Position) -> Iterator[tuple[Position, str]]:
    with open(path, "rb") as handle:
        lines = _Lines(path, handle)
        if suffix in (".csv", ".tsv"):
            yield from _iter_table(path, lines, column or "text", "\t" if suffix == ".tsv" else ",", start)
            return
        lines.seek(start)
        if suffix == ".txt":
            yield from ((lines.last, text) for text in lines)
        else:
            yield from _iter_jsonl(path, lines, field or "text")


def read_texts(path: str | Path, field: str | None = None, column: str | None = None) -> list[str]:
    """All texts of a file as a list (see `iter_texts`)."""
    return list(iter_texts(path, field, column))


def count_texts(path: str | Path, texts: Iterable[str], option: str = "") -> int:
    """How many of a file's `texts` there are, blank ones included (they keep their rows); a file without a
    text that is not blank is refused, its `option` (e.g. "--corpus") named: it has nothing to encode."""
    rows = nonblank = 0
    for text in texts:
        rows += 1
        nonblank += bool(text.strip())
    if not nonblank:
        name = f"{option} {path}" if option else str(path)
        raise InputFileError(f"{name}: holds no texts" + (f" (only {rows} blank {'text' if rows == 1 else 'texts'})"
                                                             if rows else ""))
    return rows


def iter_jsonl_objects(path: Path, lines: Iterable[str], first_line: int = 1) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-empty JSON line; anything but a JSON object names its line."""
    for line_no, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputFileError(f"{path}:{line_no}: invalid JSON ({err.msg})") from None
        if not isinstance(record, dict):
            raise InputFileError(f"{path}:{line_no}: expected a JSON object, got {type(record).__name__}")
        yield line_no, record


def jsonl_objects(path: Path, lines: list[str]) -> list[tuple[int, dict]]:
    return list(iter_jsonl_objects(path, lines))


def _iter_jsonl(path: Path, lines: _Lines, field: str) -> Iterator[tuple[Position, str]]:
    for line_no, record in iter_jsonl_objects(path, lines, lines.line):
        if field not in record:
            raise InputFileError(f"{path}:{line_no}: no field {field!r} (found: {', '.join(record)}); "
                                 "choose one with --field")
        if not isinstance(record[field], str):
            raise InputFileError(f"{path}:{line_no}: field {field!r} is {type(record[field]).__name__}, not a string")
        yield lines.last, record[field]


def _iter_table(path: Path, lines: _Lines, column: str, delimiter: str,
                start: Position) -> Iterator[tuple[Position, str]]:
    # strict: a quote left open at end of file raises instead of swallowing the rest of the file.
    # The reader pulls lines only as a record needs them, so `lines.position` before a record is its start.
    reader = csv.reader((line + "\n" for line in lines), delimiter=delimiter, strict=True)
    begin = lines.position
    try:
        header = next(reader, None)
        if header is None:
            return
        if column not in header:
            raise InputFileError(f"{path}: no column {column!r} in the header (columns: {', '.join(header)}); "
                                 "choose one with --column")
        index = header.index(column)
        if start != FILE_START:
            lines.seek(start)
        begin = lines.position
        for row in reader:
            if row and index >= len(row):
                raise InputFileError(f"{path}:{begin.line}: {len(row)} fields, column {column!r} is field {index + 1}")
            if row:
                yield begin, row[index]
            begin = lines.position
    except csv.Error as err:
        raise InputFileError(f"{path}:{begin.line}: malformed row starting here ({err}); "
                             "is a quote left unterminated?") from None
