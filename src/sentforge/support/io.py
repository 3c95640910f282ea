"""Safe file output: atomic writes and guarded output directories.

Temporary files and directories are created beside their target as `.NAME.<pid>.<random>.tmp`, get
the permissions the umask gives (not mkstemp's private 0600/0700), and are renamed into place only
when complete. One left behind by a killed process (its pid no longer runs) is removed by the next
write to the same target. Without `overwrite`, the final rename never replaces a file that another
process wrote in the meantime.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.support.errors import OutputExistsError, OutputWriteError
from sentforge.support.output_guard import check_existing_dir, pid_alive, write_marker

_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _temp_prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."


def clean_stale_temps(path: Path) -> None:
    """Remove temporaries of `path` left by processes that no longer run (killed mid-write)."""
    with contextlib.suppress(OSError):
        for entry in path.parent.iterdir():
            match = _TEMP.match(entry.name)
            if match and match["name"] == path.name and not pid_alive(int(match["pid"])):
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)


def _publish(tmp: str | Path, path: Path, overwrite: bool) -> None:
    """Rename `tmp` to `path`; without `overwrite`, fail rather than replace a file that appeared meanwhile."""
    if overwrite:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)  # atomic, and fails if `path` exists
    except FileExistsError:
        raise OutputExistsError(f"output file {path} was created by someone else while this run wrote it; "
                                "pass overwrite=True (--overwrite) to replace it") from None
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        # No hard links on this file system: check, then rename (a narrow race remains).
        if path.exists():
            raise OutputExistsError(f"output file {path} already exists; "
                                    "pass overwrite=True (--overwrite) to replace it") from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def check_output_dir(path: str | os.PathLike, overwrite: bool) -> Path:
    """Refuse a non-empty output directory unless `overwrite` is set."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputExistsError(f"output path {path} exists and is not a directory")
    if path.is_dir() and any(path.iterdir()) and not overwrite:
        raise OutputExistsError(f"output directory {path} is not empty; "
                                "pass overwrite=True (--overwrite) to replace it")
    return path


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb", overwrite: bool = True) -> Iterator[Any]:
    """Open a temporary file beside `path`; rename it to `path` only if the block succeeds.
    `overwrite=False` refuses (OutputExistsError) to replace a `path` that exists by then."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_temps(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")
    except OSError as err:  # name the file the user asked for, not the temporary one
        raise OutputWriteError(f"cannot write {path}: {err.strerror or err}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        _publish(tmp, path, overwrite)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(err, OSError):  # a full disk, a lost permission: name the file the user asked for
            raise OutputWriteError(f"cannot write {path}: {err.strerror or err}") from None
        raise


def written_rows(path: str | os.PathLike) -> int:
    """The rows of a written JSONL file: its non-empty lines."""
    return sum(1 for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip())


def save_npy(path: str | os.PathLike, array: np.ndarray, overwrite: bool = True) -> None:
    with atomic_file(path, "wb", overwrite) as handle:
        np.save(handle, array)


def save_json(path: str | os.PathLike, obj: Any, overwrite: bool = True) -> None:
    with atomic_file(path, "w", overwrite) as handle:
        json.dump(obj, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, overwrite: bool = False, kind: str | None = None) -> Iterator[Path]:
    """Yield a temporary directory that replaces `path` as a whole when the block succeeds.

    A crash inside the block leaves `path` untouched (old contents, or absent), never half-written.
    With `kind` (a command family), the directory gets its output marker, and an existing `path` is
    replaced only when that family wrote all of it (sentforge.support.output_guard).
    """
    path = Path(path)
    if kind is None:
        check_output_dir(path, overwrite)
    else:
        check_existing_dir(path, kind, overwrite)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_temps(path)
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp"))
    except OSError as err:  # name the directory the user asked for, not the temporary one
        raise OutputWriteError(f"cannot write {path}: {err.strerror or err}") from None
    try:
        tmp.chmod(0o777 & ~_umask())
        yield tmp
        if kind is not None:
            write_marker(tmp, kind)
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
