"""A run's report files: report.json (everything the run returns), report.md (the same for reading) and its
figures. The figures are optional: matplotlib is the `plots` extra; without it a figure is skipped with a logged
message that says why.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from sentforge.support.io import atomic_file, save_json

logger = logging.getLogger(__name__)

REPORT_JSON, REPORT_MD = "report.json", "report.md"


def write_report_files(output: Path, report: dict[str, Any], markdown: str) -> None:
    """Write both atomically: an interrupted write leaves the earlier files whole."""
    save_json(output / REPORT_JSON, report)
    with atomic_file(output / REPORT_MD, "w") as handle:
        handle.write(markdown)


def on_the_cluster(cluster: dict[str, Any]) -> str:
    """How the runs of report.json's `cluster` (--engine ray) shared it: "up to N at once, each with C CPUs"."""
    gpus = f" and {cluster['gpus_per_run']:g} GPUs" if cluster["gpus_per_run"] else ""
    cpus = f"{cluster['cpus_per_run']} CPU" + ("s" if cluster["cpus_per_run"] != 1 else "")
    return f"up to {cluster['slots']} at once, each with {cpus}{gpus}"


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
