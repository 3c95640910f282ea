"""A run's report files: report.json (everything the run returns) and report.md (the same for reading)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sentforge.support.io import atomic_file, save_json

REPORT_JSON, REPORT_MD = "report.json", "report.md"


def write_report_files(output: Path, report: dict[str, Any], markdown: str) -> None:
    """Write both atomically: an interrupted write leaves the earlier files whole."""
    save_json(output / REPORT_JSON, report)
    with atomic_file(output / REPORT_MD, "w") as handle:
        handle.write(markdown)
