"""The per-unit dev scores of a candidate's evaluated checkpoints, and the cross-fitted scores of the rule
"keep the best evaluated checkpoint".

At every dev evaluation of a candidate's training, its per-unit dev scores are saved
(OUTPUT/dev-items/evaluations/RUN/step-N.npz, beside each finished run's own: `harness/dev_scores.py`), so
that a selection rule that weighs the checkpoints (how much of a dev score is the luck of choosing the best
of many) can be applied to a finished run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sentforge.evaluation.paired import ItemScores
from sentforge.harness.dev_scores import ITEMS_DIR, load_items, save_items

CROSS_FIT_SPLITS = 10  # random halvings averaged: one split alone adds its own luck


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
    were kept: racing on), and a pipeline's over its weights (pipeline.py)."""
    items = {}
    for name, result in candidates.items():
        evaluations = candidate_evaluations(output, name) if rule == "cross-fitted" and result.chosen_on_dev else []
        items[name] = cross_fitted(evaluations, seed) if evaluations else load_items(output, name)
    return items
