"""Each trained candidate's time limit, planned from what its steps cost.

A candidate's need is its training steps times its measured seconds per step (probe.py), plus its dev
evaluations (one every `eval_every` steps, and one more) and a test evaluation, timed on the start model.
Equal wall-clock slices would give a slow candidate (a large batch, a decoder) too little time to end its
schedule and a fast one more than it can use. The time available is shared in proportion to the needs of the
candidates still to run: when they fit, each gets its need or more (a cost from a few probe steps is a noisy
estimate, and a candidate that ends early leaves its time to the next); otherwise each gets the same fraction
of its need. None gets less than the minimum a trained candidate needs: the lowest-priority ones that cannot
get it are skipped.
Pure arithmetic: run.py measures and calls it again at each candidate's start, with the time then left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean

from sentforge.adaptation.budget import Costs


def need(steps: int, seconds_per_step: float, eval_every: int, costs: Costs, runs: int = 1) -> float:
    """Seconds for `runs` trainings of `steps` steps each (the TSDAE ladder runs MNRL once per rung), their
    dev evaluations, and one test evaluation."""
    return runs * (steps * seconds_per_step + (steps // eval_every + 1) * costs.dev_s) + costs.test_s


def step_cost(name: str, measured: Mapping[str, float], like: str | None = None) -> float:
    """Seconds per step of candidate `name`: its own measurement, else that of `like` (a candidate with the same
    recipe and data), else the mean of those measured so far (0 before any: its evaluations still count)."""
    for key in (name, like):
        if key in measured:
            return measured[key]
    return fmean(measured.values()) if measured else 0.0


def plan(available: float, needs: Sequence[float], minimum: float) -> list[float | None]:
    """The share of each candidate (in priority order) of `available` seconds; None for those skipped."""
    for kept in range(len(needs), 0, -1):
        if kept * minimum <= available:
            return [*_fractions(available, needs[:kept], minimum), *[None] * (len(needs) - kept)]
    return [None] * len(needs)


def _fractions(available: float, needs: Sequence[float], minimum: float) -> list[float]:
    """The same fraction of each need, those below `minimum` raised to it and the rest sharing what is left
    (len(needs) * minimum <= available)."""
    raised: set[int] = set()
    while True:
        rest = available - minimum * len(raised)
        total = sum(value for i, value in enumerate(needs) if i not in raised)
        shares = [minimum if i in raised else (rest * value / total if total > 0 else rest / (len(needs) - len(raised)))
                  for i, value in enumerate(needs)]
        below = {i for i, share in enumerate(shares) if share < minimum} - raised
        if not below:
            return shares
        raised |= below
