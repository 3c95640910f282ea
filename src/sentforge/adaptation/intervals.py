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
CROSS_FIT_SPLITS = 10  # random halvings averaged: one split alone adds its own luck


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


def candidate_evaluations(output: Path, name: str) -> list[ItemScores]:
    """The per-unit dev scores of every evaluated checkpoint of candidate `name`: of its own run, and for
    tsdae+mnrl of every rung of its ladder (each run's checkpoints in step order)."""
    runs = [name, *sorted(path.relative_to(output / ITEMS_DIR / "evaluations").as_posix()
                          for path in (output / ITEMS_DIR / "evaluations" / name).glob("after-tsdae-*"))]
    return [items for run in runs for _, items in sorted(evaluation_items(output, run).items())]


def cross_fitted(evaluations: list[ItemScores], seed: int, splits: int = CROSS_FIT_SPLITS) -> ItemScores:
    """Per-unit dev scores of the rule "keep the best evaluated checkpoint" that no choice has seen: the dev
    units are split in two halves; the checkpoint chosen on one half (the earliest on a tie) scores the
    other, and each unit's value is its mean over `splits` seeded splits. Their metric estimates what the
    kept checkpoint scores on new data, where the best of many checkpoints' dev score overstates it (the
    more checkpoints, the more). Pair similarities are standardised per checkpoint first, so that units
    scored by different checkpoints rank together (AP and Spearman depend only on each model's order)."""
    first = evaluations[0]
    if len(evaluations) == 1:
        return first
    units = len(first)
    values = [np.asarray(e.values, dtype=np.float64) for e in evaluations]
    if first.statistic != "mean":
        values = [(v - v.mean()) / (v.std() or 1.0) for v in values]
    rng = np.random.default_rng(seed)
    mixed = np.zeros(units)
    for _ in range(splits):
        order = rng.permutation(units)
        halves = order[: units // 2], order[units // 2:]
        for chosen_on, scored_on in (halves, halves[::-1]):
            scores = [e.resampled(chosen_on[None, :])[0] for e in evaluations]
            mixed[scored_on] += values[int(np.argmax(scores))][scored_on]
    return ItemScores(first.statistic, mixed / splits, first.targets)


def selection_items(output: Path, candidates: dict[str, Any], rule: str, seed: int) -> dict[str, ItemScores]:
    """{finished candidate: the per-unit dev scores the rule weighs}: its kept model's, or with the rule
    "cross-fitted" a trained candidate's cross-fitted scores over all its evaluated checkpoints (when they
    were kept: racing on)."""
    items = {}
    for name, result in candidates.items():
        evaluations = candidate_evaluations(output, name) if rule == "cross-fitted" and result.trained else []
        items[name] = cross_fitted(evaluations, seed) if evaluations else load_items(output, name)
    return items


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
