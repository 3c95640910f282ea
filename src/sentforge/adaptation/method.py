"""A candidate as every step reads it: its `Method` (one row of the table the candidate kinds declare,
candidates/) and the `Candidate` that runs it from one start model.

A method names its kind (the class of candidates/ that runs it and says what it needs and costs); every step
asks the kind, never compares its name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sentforge.adaptation.result import DONE, CandidateResult, NotRun, Status

if TYPE_CHECKING:
    from sentforge.adaptation.candidates.base import CandidateKind


@dataclass(frozen=True)
class Method:
    """One method of a candidate kind.

    kind: the candidate kind that runs it (candidates/). priority: its place in the default order, the order of
    priority when the budget cannot fit every candidate. recipe: the training recipe; data: what it trains on
    ("unlabelled", "positives", "partial", "classes", "scored": the 0/1-labelled pairs scored 1 and 0, "silver":
    those and silver pairs, scored, or "margins": a teacher's score margins around the positive pairs);
    after: the method whose candidate model it starts from (None: the start model). meta: the meta-embedding
    method of sentforge.meta. options: recipe settings of the method itself ((name, value) pairs). epochs: the
    passes over its data that its source trains, when fewer than --max-epochs (a schedule that long would be
    cut by the time limit inside its warm-up, or with its learning rate barely decayed: SetFit trains one epoch).
    """

    name: str
    kind: type[CandidateKind]
    priority: int
    help: str
    recipe: str | None = None
    data: str | None = None
    after: str | None = None
    meta: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    epochs: int | None = None


@dataclass(frozen=True)
class Candidate:
    name: str  # unique, also the folder of its run under OUTPUT/runs/
    method: Method
    model: str | None  # the start model's spec (None for meta-embeddings)
    model_key: str | None  # the start model's short name in candidate names

    @property
    def after(self) -> str | None:
        """The name of the candidate this one starts from."""
        return None if self.method.after is None else f"{self.model_key}.{self.method.after}"

    def outcome(self, status: Status, **values: Any) -> CandidateResult:
        """The candidate's result of that status (finished: its kind's result type)."""
        kind = self.method.kind.result_type.KIND
        if status == DONE:
            return self.method.kind.result_type(kind, self.method.name, DONE, self.model, **values)
        return NotRun(kind, self.method.name, status, self.model, **values)


CONTINUED = "continued"  # the suffix of a continuation's name


def continuation_of(candidate: Candidate) -> Candidate:
    """The candidate trained on from `candidate`'s kept model with the time left (planning.py, step 7): the same
    recipe, data and settings (its method's overrides), starting from that model instead of a start model, up
    to --max-epochs of its data (its schedule is planned to the time left)."""
    return Candidate(f"{candidate.name}.{CONTINUED}", replace(candidate.method, after=None, epochs=None),
                     candidate.model, candidate.model_key)


def model_keys(models: list[str]) -> list[str]:
    """A short, file-name-safe name per start model (its last path part), numbered when two collide."""
    from sentforge.interface.model_card import display_name

    keys = ["".join(c if c.isalnum() or c in "-_" else "-" for c in display_name(str(m))) for m in models]
    return [f"{key}-{i + 1}" if keys.count(key) > 1 else key for i, key in enumerate(keys)]
