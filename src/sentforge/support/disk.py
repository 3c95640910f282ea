"""What a finished run leaves on disk: its training checkpoints (optimizer state and a copy of the model,
kept only so that an interrupted run can resume) are removed once the run is done, and reports give the
output's size."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

logger = logging.getLogger(__name__)

CHECKPOINTS = Path("training") / "checkpoints"  # where a recipe run keeps them (training/trainer.py)


def remove_checkpoints(run_dir: str | Path) -> int:
    """Delete the training checkpoints of a finished recipe run under `run_dir` (nested runs included);
    the bytes freed."""
    freed = 0
    for checkpoints in sorted(Path(run_dir).rglob(CHECKPOINTS.name)):
        if checkpoints.is_dir() and checkpoints.parent.name == CHECKPOINTS.parent.name:
            size = directory_size(checkpoints)
            shutil.rmtree(checkpoints)
            freed += size
            logger.debug("removed %s (%s)", checkpoints, human_size(size))
    return freed


def directory_size(path: str | Path) -> int:
    """Bytes of every file under `path` (links not followed)."""
    return sum(p.lstat().st_size for p in Path(path).rglob("*") if p.is_file() and not p.is_symlink())


def human_size(size: int) -> str:
    """e.g. 1.4 GB, 212 MB, 18 kB (decimal units, as `du --si`)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} B"
