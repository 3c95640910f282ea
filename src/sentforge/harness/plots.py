"""The report's figures are optional: matplotlib is the `plots` extra. Without it a figure is skipped
with a logged message that says why."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from sentforge.io import atomic_file

logger = logging.getLogger(__name__)


def pyplot(path: Path) -> Any:
    """matplotlib's pyplot on the file backend, or None (logged: `path` is not drawn) when the `plots`
    extra is absent."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.info("matplotlib is not installed (the `plots` extra): %s not drawn", path.name)
        return None
    return plt


def save_figure(plt: Any, figure: Any, path: Path, dpi: int) -> None:
    """Lay out `figure`, write it to `path` as a PNG (atomically) and close it."""
    figure.tight_layout()
    with atomic_file(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=dpi)
    plt.close(figure)
