"""Read one text per record from .txt, .jsonl, .csv or .tsv files, with errors that name the line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from sentforge.errors import InputFileError

TEXT_SUFFIXES = (".txt", ".jsonl", ".csv", ".tsv")


def decoded_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 file without their line endings; a byte error names the line."""
    if not path.exists():
        raise InputFileError(f"input file not found: {path}")
    if path.is_dir():
        raise InputFileError(f"input path is a directory, expected a file: {path}")
    lines = []
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise InputFileError(f"{path}:{line_no}: not valid UTF-8 (byte {err.start + 1} of the line)") from None
            if line_no == 1:
                text = text.removeprefix("\ufeff")
            lines.append(text.rstrip("\r\n"))
    return lines


def read_texts(path: str | Path, field: str | None = None, column: str | None = None) -> list[str]:
    """Texts of a file, one per record, in file order.

    .txt: one text per line (blank lines are kept so that row i of the output is line i).
    .jsonl: one JSON object per line, text under `field` (default "text").
    .csv/.tsv: a header row, text under `column` (default "text").
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TEXT_SUFFIXES:
        raise InputFileError(f"{path}: unsupported file type {suffix or '(none)'}; use one of {', '.join(TEXT_SUFFIXES)}")
    lines = decoded_lines(path)
    if suffix == ".txt":
        return lines
    if suffix == ".jsonl":
        return _read_jsonl(path, lines, field or "text")
    return _read_table(path, lines, column or "text", "\t" if suffix == ".tsv" else ",")


def jsonl_objects(path: Path, lines: list[str]) -> list[tuple[int, dict]]:
    """(line number, object) of each non-empty JSON line; anything but a JSON object names its line."""
    records = []
    for line_no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputFileError(f"{path}:{line_no}: invalid JSON ({err.msg})") from None
        if not isinstance(record, dict):
            raise InputFileError(f"{path}:{line_no}: expected a JSON object, got {type(record).__name__}")
        records.append((line_no, record))
    return records


def _read_jsonl(path: Path, lines: list[str], field: str) -> list[str]:
    texts = []
    for line_no, record in jsonl_objects(path, lines):
        if field not in record:
            raise InputFileError(f"{path}:{line_no}: no field {field!r} (found: {', '.join(record)}); "
                                 "choose one with --field")
        if not isinstance(record[field], str):
            raise InputFileError(f"{path}:{line_no}: field {field!r} is {type(record[field]).__name__}, not a string")
        texts.append(record[field])
    return texts


def _read_table(path: Path, lines: list[str], column: str, delimiter: str) -> list[str]:
    if not lines:
        return []
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter)
    header = next(reader)
    if column not in header:
        raise InputFileError(f"{path}: no column {column!r} in the header (columns: {', '.join(header)}); "
                             "choose one with --column")
    index = header.index(column)
    texts = []
    for row in reader:
        if not row:
            continue
        if index >= len(row):
            raise InputFileError(f"{path}:{reader.line_num}: {len(row)} fields, column {column!r} is field {index + 1}")
        texts.append(row[index])
    return texts
