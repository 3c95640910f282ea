"""The time budget: what remains, and whether a candidate fits.

Costs are estimated from the start model's evaluations (the first thing a run does): a trained
candidate needs at least two dev evaluations and one test evaluation; a meta-embedding needs every
member to encode the unlabelled texts once, plus a dev and a test evaluation per member. When the time
left cannot give each trained candidate still to run the minimum, the later ones in priority order are
skipped; an equal share of it bounds each candidate's probe (probe.py), after which shares.py plans the
time limits from the measured costs of their steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sentforge.harness.budget import Budget as RunBudget


@dataclass(frozen=True)
class Costs:
    """Seconds measured on the start model: a dev evaluation, a test evaluation (0 without test data),
    and encoding one text."""

    dev_s: float
    test_s: float
    per_text_s: float

    @property
    def trained_minimum(self) -> float:
        return 2 * self.dev_s + self.test_s

    def meta_estimate(self, members: int, texts: int) -> float:
        return members * (texts * self.per_text_s + self.dev_s + self.test_s)


class Budget(RunBudget):
    """The run harness's budget, and the adapt candidates' shares of it."""

    def share(self, trained_left: int, reserve_s: float, costs: Costs) -> tuple[float | None, str]:
        """(an equal share of the time left for the next trained candidate, or None when it does not fit; why
        not)."""
        available = self.remaining() - reserve_s
        fitting = min(trained_left, math.floor(available / costs.trained_minimum)) if costs.trained_minimum > 0 \
            else trained_left
        if available <= 0 or fitting < 1:
            return None, (f"{max(available, 0):.0f} s of the budget left (after {reserve_s:.0f} s kept for the "
                          f"meta-embeddings); a trained candidate needs at least {costs.trained_minimum:.1f} s "
                          "(two dev evaluations and a test evaluation of the start model)")
        return available / fitting, ""
