"""Each run's per-unit dev scores (each query's AP, or each pair's similarity), and the paired gain of one
run over another on the same units (`sentforge.evaluation.paired`).

A run's scores are saved as it finishes (OUTPUT/dev-items/NAME.npz), so that a resumed call compares the
runs without encoding the dev set again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sentforge.evaluation.paired import ItemScores, paired_bootstrap
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


def paired_gain(base: ItemScores, other: ItemScores, seed: int) -> dict[str, Any]:
    """other − base on the dev units, with the interval (PairedInterval.to_json())."""
    return paired_bootstrap(base, other, RESAMPLES, CONFIDENCE, seed).to_json()


def dev_gains(output: Path, names: list[str], base: str, seed: int) -> dict[str, dict[str, Any]]:
    """{run: its dev gain over `base` with the interval}, from the saved per-unit scores."""
    reference = load_items(output, base)
    return {name: paired_gain(reference, load_items(output, name), seed) for name in names}
