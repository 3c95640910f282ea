"""A candidate's result: what adapt records for it in OUTPUT/adapt.json as it finishes, and reports in
report.json.

Every module reads a result through these fields. The JSON keeps the layout earlier versions wrote (the
same keys, in the same order for each kind), so that an output directory written by an earlier version
resumes, and its report.json reads, unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any

from sentforge.support.errors import ConfigError

DONE, SKIPPED, FAILED, NOT_APPLICABLE = "done", "skipped", "failed", "not applicable"

_IDENTITY = ("kind", "method", "model", "status")
_TRAINED = (*_IDENTITY, "model_path", "start", "dev", "best_step", "steps", "planned_steps", "stopped", "examples",
            "evaluations", "commands", "time_limit_s", "eval_every", "wall_s", "race", "after_steps", "ladder",
            "chain_steps", "share_s", "extensions", "teacher", "member", "seconds_per_step", "test", "test_metric",
            "speed", "dev_gain")
# The key order of each layout: by status, and for a finished candidate by kind.
_LAYOUTS = {
    NOT_APPLICABLE: ("kind", "status", "reason", "method"),
    SKIPPED: (*_IDENTITY, "reason"),
    FAILED: (*_IDENTITY, "reason", "wall_s"),
    "start": (*_IDENTITY, "dev", "model_path", "evaluations", "test", "test_metric", "wall_s", "speed", "dev_gain"),
    "meta": (*_IDENTITY, "model_path", "dev", "members", "dim", "examples", "commands", "evaluations", "wall_s", "test",
             "test_metric", "speed", "dev_gain"),
    "train": _TRAINED,
    "distil": _TRAINED,
}
_NULLABLE = {"model", "stopped"}  # written as null rather than left out (a meta-embedding has no start model)


@dataclass
class CandidateResult:
    """kind, method (candidates.py), the start model's spec (None for a meta-embedding) and the status: done,
    skipped, failed or not applicable (with the `reason`). A finished candidate has its model (`model_path`),
    dev score, evaluations, wall seconds and, when there is test data, its test score; a trained one its steps,
    time limit and the commands that reproduce it (trained.py); a meta-embedding its members (meta.py)."""

    kind: str
    method: str
    status: str
    model: str | None = None
    reason: str | None = None
    model_path: str | None = None
    start: str | None = None  # the model a trained candidate started from
    dev: float | None = None
    best_step: int | None = None
    steps: int | None = None
    planned_steps: int | None = None
    stopped: str | None = None  # the trainer's stop reason (the time limit, racing)
    examples: int | None = None
    evaluations: list[dict[str, Any]] | None = None  # [{"step", "score"}]
    commands: list[str] | None = None
    time_limit_s: float | None = None
    eval_every: int | None = None
    wall_s: float | None = None
    race: dict[str, Any] | None = None  # racing's decision to stop it (racing.py)
    after_steps: int | None = None  # tsdae+mnrl: the TSDAE steps of the rung it kept (ladder.py)
    ladder: list[dict[str, Any]] | None = None
    chain_steps: int | None = None
    share_s: float | None = None  # the seconds of the budget it was given
    extensions: int | None = None  # how often the time left extended it (planning.py)
    teacher: str | None = None  # distil: the meta-embedding distilled, and its member trained
    member: str | None = None
    members: list[str] | None = None  # a meta-embedding's members
    dim: int | None = None
    seconds_per_step: float | None = None
    test: float | None = None
    test_metric: str | None = None
    speed: dict[str, Any] | None = None  # speed.measure's record
    dev_gain: dict[str, Any] | None = None  # over the reference start model, with its interval

    @property
    def done(self) -> bool:
        return self.status == DONE

    @property
    def trained(self) -> bool:
        """A finished candidate that trained steps of a recipe (not the distillation)."""
        return self.done and self.kind == "train"

    def update(self, **changes: Any) -> CandidateResult:
        """A copy with `changes`."""
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        layout = _LAYOUTS[self.status if self.status != DONE else self.kind]
        outside = [f.name for f in fields(self) if getattr(self, f.name) is not None and f.name not in layout]
        if outside:
            raise ValueError(f"a {self.status} {self.kind} result has no {', '.join(outside)}")
        return {key: getattr(self, key) for key in layout if getattr(self, key) is not None or key in _NULLABLE}

    @classmethod
    def from_json(cls, saved: dict[str, Any]) -> CandidateResult:
        unknown = set(saved) - {f.name for f in fields(cls)}
        if unknown:
            raise ConfigError(f"a candidate result holds unknown entries {', '.join(sorted(unknown))}; was it written "
                              "by a newer sentforge?")
        return cls(**saved)
