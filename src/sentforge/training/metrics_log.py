"""The training log: `metrics.jsonl` in the output directory, one JSON object per logged step,
evaluation and event (start, checkpoint, resume, end), written by the main process."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

from sentforge.support.io import atomic_file
from sentforge.support import distributed

logger = logging.getLogger(__name__)

METRICS_FILE = "metrics.jsonl"


class MetricsLog:
    """Appends records to `output_dir/metrics.jsonl` (nothing is written without an output directory)."""

    def __init__(self, output_dir: Path | None) -> None:
        self.path = output_dir / METRICS_FILE if output_dir is not None else None

    def write(self, record: dict[str, Any]) -> None:
        logger.debug("%s", record)
        if self.path is None or not distributed.is_main_process():
            return
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(_finite_json(record), allow_nan=False) + "\n")

    def remove(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def truncate_after(self, step: int) -> None:
        """Drop the records after `step`: a resumed run writes them again."""
        if self.path is None or not self.path.exists():
            return
        kept = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by the crash
                continue
            if record.get("step", 0) <= step:
                kept.append(line)
        with atomic_file(self.path, "w") as handle:
            handle.write("".join(f"{line}\n" for line in kept))


def _finite_json(value: Any) -> Any:
    """`value` with non-finite floats as strings ("nan", "inf"): JSON has no NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _finite_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_json(item) for item in value]
    return value


def progress_line(record: dict[str, Any], total_steps: int) -> str:
    """One log line of a training window: step, loss, rate and throughput."""
    parts = [f"step {record['step']}/{total_steps}"]
    if "loss" in record:
        parts.append(f"loss {record['loss']:.4f}")
    parts.append(f"lr {record['lr']:.3g}")
    if record.get("steps_per_s"):
        parts.append(f"{record['steps_per_s']:.2f} steps/s ({record['examples_per_s']:.1f} examples/s)")
    if record.get("tokens_per_s"):
        parts.append(f"{record['tokens_per_s']:.0f} tokens/s")
    return ", ".join(parts)
