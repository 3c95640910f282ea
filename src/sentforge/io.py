"""Safe file output: atomic writes and guarded output directories."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.errors import OutputExistsError


def check_output_file(path: str | os.PathLike, overwrite: bool) -> Path:
    """Refuse to replace an existing file unless `overwrite` is set."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise OutputExistsError(f"output file {path} already exists; pass --overwrite to replace it")
    if path.is_dir():
        raise OutputExistsError(f"output path {path} is a directory, expected a file")
    return path


def check_output_dir(path: str | os.PathLike, overwrite: bool) -> Path:
    """Refuse a non-empty output directory unless `overwrite` is set."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputExistsError(f"output path {path} exists and is not a directory")
    if path.is_dir() and any(path.iterdir()) and not overwrite:
        raise OutputExistsError(f"output directory {path} is not empty; pass --overwrite to replace it")
    return path


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb") -> Iterator[Any]:
    """Open a temporary file beside `path`; rename it over `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def save_npy(path: str | os.PathLike, array: np.ndarray) -> None:
    with atomic_file(path, "wb") as handle:
        np.save(handle, array)


def save_json(path: str | os.PathLike, obj: Any) -> None:
    with atomic_file(path, "w") as handle:
        json.dump(obj, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary directory that replaces `path` as a whole when the block succeeds.

    A crash inside the block leaves `path` untouched (old contents, or absent), never half-written.
    """
    path = Path(path)
    check_output_dir(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    try:
        yield tmp
        if path.exists():
            trash = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".old"))
            os.replace(path, trash / "old")
            os.replace(tmp, path)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
