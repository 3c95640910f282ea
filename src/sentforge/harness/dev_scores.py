"""The dev scores of a run: a task's main score (timed), each run's per-unit dev scores (each query's AP, or
each pair's similarity), and the paired gain of one run over another on the same units
(`sentforge.evaluation.paired`).

A run's per-unit scores are saved as it finishes (OUTPUT/dev-items/NAME.npz), so that a resumed call compares
the runs without encoding the dev set again.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.evaluation.paired import ItemScores, PairedInterval, paired_bootstrap
from sentforge.support.io import atomic_file

ITEMS_DIR = "dev-items"
RESAMPLES = 5000
CONFIDENCE = 0.95


def items_path(output: Path, name: str) -> Path:
    return output / ITEMS_DIR / f"{name}.npz"


def save_items(output: Path, name: str, items: ItemScores) -> None:
    path = items_path(output, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "wb") as handle:
        np.savez(handle, **items.to_npz())


def load_items(output: Path, name: str) -> ItemScores:
    with np.load(items_path(output, name), allow_pickle=False) as arrays:
        return ItemScores.from_npz(arrays)


def paired_gain(base: ItemScores, other: ItemScores, seed: int) -> PairedInterval:
    """other − base on the dev units, with the interval."""
    return rounded(paired_bootstrap(base, other, RESAMPLES, CONFIDENCE, seed))


def rounded(interval: PairedInterval) -> PairedInterval:
    """The interval as the reports and state files write it, so that it reads the same after a resume."""
    return PairedInterval(**interval.to_json())


def dev_gains(output: Path, names: list[str], base: str, seed: int) -> dict[str, dict[str, Any]]:
    """{run: its dev gain over `base` with the interval (as JSON)}, from the saved per-unit scores."""
    reference = load_items(output, base)
    return {name: paired_gain(reference, load_items(output, name), seed).to_json() for name in names}


def main_score(task: Any, encoder: Any) -> tuple[float, float]:
    """(the task's main metric for `encoder`, seconds)."""
    metrics, seconds = task_metrics(task, encoder)
    return float(metrics[task.metadata.main_metric]), seconds


def scored_with_items(task: Any, encoder: Any) -> tuple[dict[str, Any], ItemScores, float]:
    """(every metric, the per-unit scores, seconds) of a task that gives both from one pass
    (`evaluate_with_items`: class-labelled data)."""
    started = time.monotonic()
    metrics, items = task.evaluate_with_items(encoder)
    return metrics, items, time.monotonic() - started


def task_metrics(task: Any, encoder: Any) -> tuple[dict[str, Any], float]:
    """(every metric of the task for `encoder`, seconds)."""
    started = time.monotonic()
    metrics = task.evaluate(encoder)
    return metrics, time.monotonic() - started


def metric_of(task: Any) -> str:
    return task.metadata.main_metric
