"""The time budget of a run that resumes: what remains of it, counting the seconds earlier calls spent
(adapt plans its candidates' time from it in planning.py; labels its runs')."""

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
