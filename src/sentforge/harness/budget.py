"""A run's wall-clock budget: what remains of it, counting the time spent by earlier calls of the same
run (a resumed run does not start its budget again)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Budget:
    total_s: float
    spent_before_s: float  # by earlier calls of the same run (resume)
    started: float = field(default_factory=time.monotonic)

    def remaining(self) -> float:
        return self.total_s - self.spent_before_s - (time.monotonic() - self.started)
