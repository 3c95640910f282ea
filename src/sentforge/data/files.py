"""Decoding of benchmark files as their reference code reads them: lines, encodings, JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sentforge.support.errors import InputFileError


def read_text(path: Path, encoding: str) -> str:
    """The whole file decoded with `encoding`; a decoding error names the line."""
    try:
        return path.read_bytes().decode(encoding)
    except FileNotFoundError:
        raise InputFileError(f"{path}: file not found") from None
    except UnicodeDecodeError as err:
        line = path.read_bytes()[:err.start].count(b"\n") + 1
        raise InputFileError(f"{path}, line {line}: not valid {encoding} ({err.reason})") from None


def read_lines(path: Path) -> list[str]:
    """UTF-8 lines without line endings. Only newlines separate lines (str.splitlines would also
    break at rare Unicode separators inside a sentence; none occur in the distributed files, so
    this reads them exactly as SentEval does)."""
    lines = read_text(path, "UTF-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def numbered_lines(path: Path, encoding: str) -> list[tuple[int, str]]:
    """(line number, line) pairs, as Python's `for line in file` yields them (universal newlines)."""
    lines = read_text(path, encoding).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    return list(enumerate(lines, start=1))


def read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise InputFileError(f"{path}: file not found") from None
    except json.JSONDecodeError as err:
        raise InputFileError(f"{path}, line {err.lineno}, column {err.colno}: malformed JSON ({err.msg})") from None
    except UnicodeDecodeError as err:
        raise InputFileError(f"{path}: not valid UTF-8 ({err.reason})") from None
