"""Each candidate's dev gain over the start model with a paired bootstrap interval.

A candidate's per-unit dev scores (each query's AP, or each pair's similarity) are saved as it finishes
(OUTPUT/dev-items/NAME.npz), so that a resumed run needs no re-encoding, and at every dev evaluation of its
training (OUTPUT/dev-items/evaluations/RUN/step-N.npz), so that a selection rule that weighs the checkpoints
(how much of a dev score is the luck of choosing the best of many) can be applied to a finished run; at the
end every candidate is
compared with the reference start model, and the leader with the other candidates, on the same units
(`sentforge.evaluation.paired`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sentforge.evaluation.paired import ItemScores, paired_bootstrap
from sentforge.io import atomic_file

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


def save_evaluation_items(output: Path, run: str, step: int, items: ItemScores) -> None:
    """The per-unit dev scores of the checkpoint at `step` of the training run `run` (its path under runs/)."""
    save_items(output, f"evaluations/{run}/step-{step:06d}", items)


def evaluation_items(output: Path, run: str) -> dict[int, ItemScores]:
    """{step: per-unit dev scores} of every saved evaluation of the training run `run`."""
    folder = output / ITEMS_DIR / "evaluations" / run
    return {int(path.stem.removeprefix("step-")): load_items(output, f"evaluations/{run}/{path.stem}")
            for path in sorted(folder.glob("step-*.npz"))}


def load_items(output: Path, name: str) -> ItemScores:
    with np.load(items_path(output, name), allow_pickle=False) as arrays:
        return ItemScores.from_npz(arrays)


def paired_gain(base: ItemScores, other: ItemScores, seed: int) -> dict[str, Any]:
    """other − base on the dev units, with the interval (PairedInterval.to_json())."""
    return paired_bootstrap(base, other, RESAMPLES, CONFIDENCE, seed).to_json()


def dev_gains(output: Path, names: list[str], base: str, seed: int) -> dict[str, dict[str, Any]]:
    """{candidate: its dev gain over `base` with the interval}, from the saved per-unit scores."""
    reference = load_items(output, base)
    return {name: paired_gain(reference, load_items(output, name), seed) for name in names}
