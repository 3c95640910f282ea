"""The probe: the first steps of a trained candidate's own run, timed, before its time limit is planned.

The probe adds no training: the run stops after PROBE_STEPS steps, the trainer saves a checkpoint there, and the
candidate's run then resumes from it, ending with the weights of a run never stopped. Timing starts at the end
of the first step, so model loading and the first step's warm-up do not count; an interval that ends at a dev
evaluation is left out, as the evaluations are planned on their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

PROBE_STEPS = 3


class StepClock:
    """A trainer callback that records when each step ends and stops the run after `steps` of them."""

    def __init__(self, eval_every: int, steps: int = PROBE_STEPS, clock: Callable[[], float] = time.perf_counter):
        self.eval_every, self.steps, self.clock = eval_every, steps, clock
        self.ends: list[tuple[int, float]] = []

    def __call__(self, state: Any) -> None:
        self.ends.append((state.step, self.clock()))
        if len(self.ends) >= self.steps:
            state.should_stop = True

    def seconds_per_step(self) -> float | None:
        """Mean seconds of the timed steps (with their evaluations only when every step has one); None when
        fewer than two steps ended (a schedule shorter than the probe)."""
        intervals = [(step, (end - before) / (step - previous))
                     for (previous, before), (step, end) in zip(self.ends, self.ends[1:])]
        plain = [seconds for step, seconds in intervals if step % self.eval_every] or [s for _, s in intervals]
        return sum(plain) / len(plain) if plain else None
