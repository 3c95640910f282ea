"""A labels run's record: what `sentforge labels` keeps in OUTPUT/labels.json for the start model's dev
evaluation and for each run as it finishes, fails or is skipped, and what report.json holds for it (with its
paired gain over the start model).

Every module reads a record through these fields. The JSON keeps the layout earlier versions wrote (the same
keys in the same order, a trained run's `stopped` written even when null), so that an output directory written
by an earlier version resumes, and its files are rewritten byte for byte.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from sentforge.support.errors import ConfigError

Status = Literal["done", "skipped", "failed"]
DONE = "done"


@dataclass(frozen=True, kw_only=True)
class LabelsRun:
    """The fields in the order of their JSON; a field left None is not written (`stopped` aside). The start
    model's evaluation has no size, repeat or steps (`dev_s`: its dev evaluation's seconds); a skipped run has
    its reason; a failed one its reason and wall seconds; a finished one its dev score, labels, training rows
    (`examples`), steps done and planned, why its training stopped early (None: it did not), its time limit, the
    `sentforge train` command that retrains it, its wall seconds and, on a cluster, its worker. `dev_gain`: the
    paired gain over the start model, in report.json only."""

    size: int | None = None
    repeat: int | None = None
    status: Status
    dev: float | None = None
    dev_s: float | None = None
    labels: int | None = None
    examples: int | None = None
    steps: int | None = None
    planned_steps: int | None = None
    stopped: str | None = None
    time_limit_s: float | None = None
    command: str | None = None
    reason: str | None = None
    wall_s: float | None = None
    worker: dict[str, Any] | None = None
    dev_gain: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        return self.status == DONE

    def update(self, **changes: Any) -> LabelsRun:
        """A copy with `changes`."""
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        # A trained run's summary says why its training stopped early, or null: both are kept.
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None or (f.name == "stopped" and self.steps is not None)}

    @classmethod
    def from_json(cls, saved: Mapping[str, Any]) -> LabelsRun:
        """The record from its JSON (labels.json, report.json)."""
        unknown = set(saved) - {f.name for f in fields(cls)}
        if unknown:
            raise ConfigError(f"a labels run record holds unknown entries {', '.join(sorted(unknown))}; "
                              "was it written by a newer sentforge?")
        return cls(**saved)
