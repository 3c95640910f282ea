"""A probe's clock as a trainer callback (planning.py, step 2): the first PROBE_STEPS steps of a trained
candidate's own run, timed, give its seconds per step."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sentforge.training.state import TrainerState

PROBE_STEPS = 3


class StepClock:
    """A trainer callback that records when each step ends and stops the run after `steps` of them."""

    def __init__(self, eval_every: int, steps: int = PROBE_STEPS, clock: Callable[[], float] = time.perf_counter):
        self.eval_every, self.steps, self.clock = eval_every, steps, clock
        self.ends: list[tuple[int, float]] = []

    def __call__(self, state: TrainerState) -> None:
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
