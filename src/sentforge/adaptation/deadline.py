"""A trained candidate's deadline as a trainer callback (planning.py, step 6): its share holds its whole wall
time, so the run stops after the step past which the next step and what follows the last one would not fit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sentforge.training.stopping import TIME_LIMIT

if TYPE_CHECKING:
    from sentforge.training.state import TrainerState


class Deadline:
    """A trainer callback that stops the run (the time limit's stop reason) after the step past which the
    candidate's `elapsed()` seconds (its earlier runs' included) and `after_s` (Costs.after_step_s) would pass
    its `share`: the next step and what follows the last one then fit in it."""

    def __init__(self, share: float, after_s: float, elapsed: Callable[[], float]) -> None:
        self.share, self.after_s, self.elapsed = share, after_s, elapsed

    def __call__(self, state: TrainerState) -> None:
        if not state.should_stop and state.step < state.total_steps and self.elapsed() + self.after_s >= self.share:
            state.should_stop, state.stop_reason = True, TIME_LIMIT
