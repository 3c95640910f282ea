"""Read one text per record from .txt, .jsonl, .csv or .tsv files, with errors that name the line.

`iter_texts` streams a file record by record (memory bounded by one record); `read_texts` is its list.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from sentforge.errors import InputFileError

TEXT_SUFFIXES = (".txt", ".jsonl", ".csv", ".tsv")


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputFileError(f"input file not found: {path}")
    if path.is_dir():
        raise InputFileError(f"input path is a directory, expected a file: {path}")


def iter_decoded_lines(path: Path) -> Iterator[str]:
    """Lines of a UTF-8 file without their line endings, read lazily; a byte error names the line."""
    _check_file(path)
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise InputFileError(f"{path}:{line_no}: not valid UTF-8 (byte {err.start + 1} of the line)") from None
            if line_no == 1:
                text = text.removeprefix("\ufeff")
            yield text.rstrip("\r\n")


def decoded_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 file without their line endings; a byte error names the line."""
    return list(iter_decoded_lines(path))


def check_text_file(path: str | Path) -> Path:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TEXT_SUFFIXES:
        raise InputFileError(f"{path}: unsupported file type {suffix or '(none)'}; use one of {', '.join(TEXT_SUFFIXES)}")
    _check_file(path)
    return path


def iter_texts(path: str | Path, field: str | None = None, column: str | None = None) -> Iterator[str]:
    """Texts of a file, one per record, in file order, read lazily.

    .txt: one text per line (blank lines are kept so that row i of the output is line i).
    .jsonl: one JSON object per line, text under `field` (default "text").
    .csv/.tsv: a header row, text under `column` (default "text"); quoted fields may span lines,
    and a quote left open at the end of the file is an error naming the line where it opened.
    """
    path = check_text_file(path)
    suffix = path.suffix.lower()
    lines = iter_decoded_lines(path)
    if suffix == ".txt":
        return lines
    if suffix == ".jsonl":
        return _iter_jsonl(path, lines, field or "text")
    return _iter_table(path, lines, column or "text", "\t" if suffix == ".tsv" else ",")


def read_texts(path: str | Path, field: str | None = None, column: str | None = None) -> list[str]:
    """All texts of a file as a list (see `iter_texts`)."""
    return list(iter_texts(path, field, column))


def iter_jsonl_objects(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-empty JSON line; anything but a JSON object names its line."""
    for line_no, line in enumerate(lines, 1):
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


def _iter_jsonl(path: Path, lines: Iterable[str], field: str) -> Iterator[str]:
    for line_no, record in iter_jsonl_objects(path, lines):
        if field not in record:
            raise InputFileError(f"{path}:{line_no}: no field {field!r} (found: {', '.join(record)}); "
                                 "choose one with --field")
        if not isinstance(record[field], str):
            raise InputFileError(f"{path}:{line_no}: field {field!r} is {type(record[field]).__name__}, not a string")
        yield record[field]


def _iter_table(path: Path, lines: Iterable[str], column: str, delimiter: str) -> Iterator[str]:
    # strict: a quote left open at end of file raises instead of swallowing the rest of the file.
    reader = csv.reader((line + "\n" for line in lines), delimiter=delimiter, strict=True)
    start = 1  # line where the record being read begins (records may span lines inside quotes)
    try:
        header = next(reader, None)
        if header is None:
            return
        if column not in header:
            raise InputFileError(f"{path}: no column {column!r} in the header (columns: {', '.join(header)}); "
                                 "choose one with --column")
        index = header.index(column)
        start = reader.line_num + 1
        for row in reader:
            if row and index >= len(row):
                raise InputFileError(f"{path}:{start}: {len(row)} fields, column {column!r} is field {index + 1}")
            if row:
                yield row[index]
            start = reader.line_num + 1
    except csv.Error as err:
        raise InputFileError(f"{path}:{start}: malformed row starting here ({err}); "
                             "is a quote left unterminated?") from None
