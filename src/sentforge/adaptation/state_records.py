"""The typed records of OUTPUT/adapt.json's sections (adapt_state.py): the start model's measured costs, each
trained candidate's probe, and what the time left at the end was spent on. Each writes the JSON it reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

Record = TypeVar("Record", bound="_Saved")


class _Saved:
    """A record read from its JSON's keys (each record's `to_json` writes them in its order)."""

    @classmethod
    def from_json(cls: type[Record], saved: dict[str, Any]) -> Record:
        return cls(**saved)


@dataclass(frozen=True)
class MeasuredCosts(_Saved):
    """Seconds measured on the first start model (planning.Costs): a dev evaluation, a test evaluation, encoding
    one text, and a load: the start model's, raised to the slowest candidate load since (None in a state
    written before loads were timed); with a --cross-encoder, loading it and re-ranking the dev and test data
    (pipeline.measured_rerank_seconds; None without one, or in a state written before it was timed); one paired
    bootstrap interval on the start model's per-unit dev scores (the selection computes a few per candidate; None
    before they are saved, or in a state written before it was timed); the cross-encoder's seconds per pair (None
    without one, or in a state written before it was kept)."""

    dev_s: float
    test_s: float
    per_text_s: float
    load_s: float | None = None
    rerank_s: float | None = None
    interval_s: float | None = None
    pair_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"dev_s": self.dev_s, "test_s": self.test_s, "per_text_s": self.per_text_s,
                **({} if self.load_s is None else {"load_s": self.load_s}),
                **({} if self.rerank_s is None else {"rerank_s": self.rerank_s}),
                **({} if self.interval_s is None else {"interval_s": self.interval_s}),
                **({} if self.pair_s is None else {"pair_s": self.pair_s})}


@dataclass(frozen=True)
class Probe(_Saved):
    """A trained candidate's probe (planning.py, step 2): its seconds per step, steps and wall seconds; the dev
    evaluation cadence its training fixed (kept for the runs that resume it); the cluster worker that ran it
    (--engine ray: its wall time is in the side-by-side runs')."""

    seconds_per_step: float
    steps: int
    wall_s: float
    worker: dict[str, Any] | None = None
    eval_every: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"seconds_per_step": self.seconds_per_step, "steps": self.steps, "wall_s": self.wall_s,
                **({} if self.worker is None else {"worker": self.worker}),
                **({} if self.eval_every is None else {"eval_every": self.eval_every})}


@dataclass(frozen=True)
class Leftover(_Saved):
    """planning.py's step 7: the seconds left once every schedule had ended, and the candidate continued with
    them (None: the run ends early, `why`) for a schedule of `steps` steps (None in a state saved before
    continuations were planned to the time left: --max-epochs of its data)."""

    seconds: float
    continued: str | None = None
    why: str = ""
    steps: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 1), "continued": self.continued, "why": self.why,
                **({} if self.steps is None else {"steps": self.steps})}
