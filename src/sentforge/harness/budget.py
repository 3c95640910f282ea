"""A run's wall-clock budget: what remains of it, counting the time spent by earlier calls of the same
run (a resumed run does not start its budget again)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from sentforge.support.errors import ConfigError


def check_budget_minutes(minutes: float) -> None:
    """The one rule of --budget-minutes (adapt, labels): a time greater than 0."""
    if not minutes > 0:
        raise ConfigError(f"--budget-minutes must be > 0, got {minutes:g}")


@dataclass
class Budget:
    total_s: float
    spent_before_s: float  # by earlier calls of the same run (resume)
    started: float = field(default_factory=time.monotonic)

    def remaining(self) -> float:
        return self.total_s - self.spent_before_s - (time.monotonic() - self.started)
