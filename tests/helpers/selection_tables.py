"""Hand-made candidate tables for the selection tests: per-unit dev scores whose paired intervals are known by
construction, and the speed records that say what a candidate costs to run."""

from __future__ import annotations

import numpy as np

from sentforge.adaptation.result import CandidateResult
from sentforge.adaptation.speed import SpeedRecord
from sentforge.evaluation.paired import ItemScores

UNITS = 40
SWING = np.tile([1.0, -1.0], UNITS // 2)  # a per-unit swing whose mean is 0


def units(values) -> ItemScores:
    return ItemScores("mean", np.asarray(values, dtype=float))


def speed(texts_per_second, parameters, dim=384, encoders=1) -> SpeedRecord:
    return SpeedRecord(parameters, dim, encoders, texts_per_second)


L6, L3 = speed(300.0, 22_700_000), speed(600.0, 17_400_000)


def typed(results: dict[str, dict]) -> dict[str, CandidateResult]:
    """Results from {name: their values}: a trained candidate's unless the values say otherwise."""
    return {name: CandidateResult.from_json({"kind": "train", "method": name.rsplit(".", 1)[-1],
                                             **{key: value.to_json() if isinstance(value, SpeedRecord) else value
                                                for key, value in values.items()}})
            for name, values in results.items()}


def table(rows, starts=("l6.start",)):
    """(results, items) from {name: (per-unit dev scores, speed record, steps)}: each result's dev is the mean
    of its scores, its kind "start" for `starts`, "meta" for names that begin with meta, else "train"."""
    results, items = {}, {}
    for name, (scores, cost, steps) in rows.items():
        kind = "start" if name in starts else "meta" if name.startswith("meta") else "train"
        results[name] = {"status": "done", "kind": kind, "dev": float(np.mean(scores)), "speed": cost,
                         **({"steps": steps} if kind == "train" else {})}
        items[name] = units(scores)
    return typed(results), items


BASE = np.full(UNITS, 50.0)
