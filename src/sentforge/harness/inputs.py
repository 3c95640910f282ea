"""The input files of a run as its state records them: path and sha256, so that a rerun whose files
changed is refused instead of mixing results of two data sets."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def file_digest(path: str | os.PathLike) -> str:
    """sha256 of a file, or of every file under a folder (a BEIR dataset), in name order."""
    path = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file()):
        digest.update(str(file.relative_to(path) if file != path else "").encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def input_record(path: str | os.PathLike | None) -> dict[str, str] | None:
    """{"path", "sha256"} of an input file or folder; None for an input not given."""
    return None if path is None else {"path": str(path), "sha256": file_digest(path)}
