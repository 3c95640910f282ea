"""Scoring a model on the dev or test task: the task's main metric, and how long it took."""

from __future__ import annotations

import time
from typing import Any


def main_score(task: Any, encoder: Any) -> tuple[float, float]:
    """(the task's main metric for `encoder`, seconds)."""
    started = time.monotonic()
    metrics = task.evaluate(encoder)
    return float(metrics[task.metadata.main_metric]), time.monotonic() - started


def metric_of(task: Any) -> str:
    return task.metadata.main_metric
