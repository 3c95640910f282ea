"""A candidate's result: what adapt records for it in OUTPUT/adapt.json as it finishes, and reports in
report.json, one type per outcome: `NotRun` (skipped, failed or not applicable, with the reason),
`StartResult`, `TrainedResult` (a recipe run), `DistilResult` (the distillation's recipe run), `MetaResult` and
`StaticResult` (a static model distilled from an encoder candidate), `PipelineResult` (a bi-encoder and a
cross-encoder re-ranking its top K); racing's `RaceDecision` and the TSDAE
ladder's `LadderRung` inside a trained one. Each finished type names the kind it records (`KIND`, the "kind" of
its JSON); a candidate kind (candidates/) declares its result type.

Every module reads a result through these fields; a field that its kind does not have cannot be set. The JSON
keeps the layout earlier versions wrote (the same keys, in the same order for each kind), so that an output
directory written by an earlier version resumes, and its report.json reads, unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from sentforge.adaptation.speed import SpeedRecord
from sentforge.support.errors import ConfigError
from sentforge.evaluation.paired import PairedInterval

Status = Literal["done", "skipped", "failed", "not applicable"]
DONE, SKIPPED, FAILED, NOT_APPLICABLE = "done", "skipped", "failed", "not applicable"


@dataclass(frozen=True)
class RaceDecision:
    """Racing's decision to stop a candidate: why, against which model, the interval that decided it (rounded
    as report.json writes it) and the evaluated dev score; once taken, at which step, after how many minutes of
    the candidate's training and of the whole run (OUTPUT/adapt.json and report.json, in this key order)."""

    reason: Literal["below the start", "below the leader"]
    against: str
    gain: PairedInterval
    dev: float | None = None
    step: int | None = None
    candidate_minutes: float | None = None
    adapt_minutes: float | None = None

    def to_json(self) -> dict[str, Any]:
        values = {"step": self.step, "reason": self.reason, "against": self.against, "gain": self.gain.to_json(),
                  "dev": self.dev, "candidate_minutes": self.candidate_minutes, "adapt_minutes": self.adapt_minutes}
        return {key: value for key, value in values.items() if value is not None}

    @classmethod
    def from_json(cls, saved: dict[str, Any]) -> RaceDecision:
        return cls(**{**saved, "gain": PairedInterval(**saved["gain"])})


@dataclass(frozen=True)
class LadderRung:
    """tsdae+mnrl: MNRL from one rung of the TSDAE ladder, its dev score and steps, and racing's decision."""

    after_steps: int
    dev: float
    steps: int
    race: RaceDecision | None = None

    def to_json(self) -> dict[str, Any]:
        return {"after_steps": self.after_steps, "dev": self.dev, "steps": self.steps,
                **({"race": self.race.to_json()} if self.race else {})}

    @classmethod
    def from_json(cls, saved: dict[str, Any]) -> LadderRung:
        race = saved.get("race")
        return cls(**{**saved, "race": None if race is None else RaceDecision.from_json(race)})


# What a field holds in JSON when it is not a plain value: read back with these.
_READERS = {"race": RaceDecision.from_json, "speed": SpeedRecord.from_json, "dev_gain": lambda d: PairedInterval(**d),
            "ladder": lambda rungs: [LadderRung.from_json(r) for r in rungs]}
_NULLABLE = {"model", "stopped"}  # written as null rather than left out (a meta-embedding has no start model)


def _json_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    return value.to_json() if hasattr(value, "to_json") else value


@dataclass(frozen=True)
class CandidateResult:
    """kind, method (method.py), the start model's spec (None for a meta-embedding) and the status; each
    outcome's own fields are its subclass's. `LAYOUT`: the keys of its JSON, in their order."""

    kind: str
    method: str
    status: Status
    model: str | None = None
    LAYOUT: ClassVar[tuple[str, ...]] = ()

    @property
    def done(self) -> bool:
        return self.status == DONE

    @property
    def trained(self) -> bool:
        """A finished candidate that trained steps of a recipe (not the distillation): TrainedResult's."""
        return False

    def update(self, **changes: Any) -> CandidateResult:
        """A copy with `changes`."""
        return dataclasses.replace(self, **changes)

    def layout(self) -> tuple[str, ...]:
        return self.LAYOUT

    def to_json(self) -> dict[str, Any]:
        return {key: _json_value(getattr(self, key)) for key in self.layout()
                if getattr(self, key) is not None or key in _NULLABLE}

    @staticmethod
    def from_json(saved: Mapping[str, Any]) -> CandidateResult:
        """The result of its status and kind, from its JSON (adapt.json, report.json)."""
        kind = saved.get("kind")
        cls = finished_type(kind) if saved.get("status") == DONE else NotRun
        names = {f.name for f in fields(cls)}
        unknown = set(saved) - names
        if unknown:
            raise ConfigError(f"a {saved.get('status')} {kind} result holds unknown entries "
                              f"{', '.join(sorted(unknown))}; was it written by a newer sentforge?")
        return cls(**{key: _READERS[key](value) if key in _READERS and value is not None else value
                      for key, value in saved.items()})


_IDENTITY = ("kind", "method", "model", "status")


@dataclass(frozen=True)
class NotRun(CandidateResult):
    """Skipped (the budget, or what it builds on did not run), failed (with the seconds it ran) or not
    applicable (no data for it)."""

    reason: str | None = None
    wall_s: float | None = None

    def layout(self) -> tuple[str, ...]:
        if self.status == NOT_APPLICABLE:
            return "kind", "status", "reason", "method"
        return (*_IDENTITY, "reason", *(("wall_s",) if self.status == FAILED else ()))


@dataclass(frozen=True)
class Finished(CandidateResult):
    """What every finished candidate has: its model, dev score, evaluations, wall seconds, test score (with
    test data), its cost to run (speed.py) and its dev gain over the reference start model (select.py)."""

    model_path: str | None = None
    dev: float | None = None
    evaluations: list[dict[str, Any]] | None = None  # [{"step", "score"}]
    wall_s: float | None = None
    test: float | None = None
    test_metric: str | None = None
    macro_f1: dict[str, float] | None = None  # class-labelled data: {"dev", "test"} macro-F1 (x100) of its head
    speed: SpeedRecord | None = None
    dev_gain: PairedInterval | None = None
    KIND: ClassVar[str] = ""

    @property
    def chosen_on_dev(self) -> bool:
        """Whether its dev score is the best of several settings it evaluated on dev (a trained candidate's
        checkpoints, a pipeline's weights), saved as evaluations (intervals.py)."""
        return self.trained

    def load(self, device: str | None = None) -> Any:
        """The candidate's model."""
        from sentforge.loading import load

        return load(self.model_path, device=device)

    def timed_model(self, device: str | None = None) -> Any:
        """What the speed measurement encodes with: the model itself (a pipeline: its cost per query)."""
        return self.load(device)


@dataclass(frozen=True)
class StartResult(Finished):
    KIND = "start"
    LAYOUT = (*_IDENTITY, "dev", "model_path", "evaluations", "test", "test_metric", "macro_f1", "wall_s", "speed",
              "dev_gain")


@dataclass(frozen=True)
class TrainedResult(Finished):
    """A recipe run (trained.py): the model it started from, its steps, time limit, the commands that reproduce
    it; tsdae+mnrl its ladder; distil its teacher and member; a continuation the candidate it continues."""

    start: str | None = None
    best_step: int | None = None
    steps: int | None = None
    planned_steps: int | None = None
    stopped: str | None = None  # the trainer's stop reason (the time limit, racing)
    examples: int | None = None
    commands: list[str] | None = None
    time_limit_s: float | None = None
    eval_every: int | None = None
    race: RaceDecision | None = None  # racing's decision to stop it (racing.py)
    after_steps: int | None = None  # tsdae+mnrl: the TSDAE steps of the rung it kept
    ladder: list[LadderRung] | None = None
    chain_steps: int | None = None
    share_s: float | None = None  # the seconds of the budget it was given
    extensions: int | None = None  # how often the time left extended it (planning.py)
    teacher: str | None = None  # distil: the meta-embedding distilled, and its member trained
    member: str | None = None
    seconds_per_step: float | None = None
    continues: str | None = None  # trained on from that candidate's kept model with the time left (planning.py)
    worker: dict[str, Any] | None = None  # --engine ray: the worker that trained it (harness/ray_runs.py)
    KIND = "train"
    LAYOUT = (*_IDENTITY, "model_path", "start", "dev", "best_step", "steps", "planned_steps", "stopped", "examples",
              "evaluations", "commands", "time_limit_s", "eval_every", "wall_s", "race", "after_steps", "ladder",
              "chain_steps", "share_s", "extensions", "teacher", "member", "seconds_per_step", "continues", "worker",
              "test", "test_metric", "macro_f1", "speed", "dev_gain")

    @property
    def trained(self) -> bool:
        return self.done


@dataclass(frozen=True)
class DistilResult(TrainedResult):
    """The distillation's recipe run (its teacher and member set): trained, but on a meta-embedding's vectors,
    not a recipe's own signal."""

    KIND = "distil"

    @property
    def trained(self) -> bool:
        return False


@dataclass(frozen=True)
class MetaResult(Finished):
    """A meta-embedding (meta.py): its members, dimension, the texts of its fit and its `meta fit` line."""

    members: list[str] | None = None
    dim: int | None = None
    examples: int | None = None
    commands: list[str] | None = None
    KIND = "meta"
    LAYOUT = (*_IDENTITY, "model_path", "dev", "members", "dim", "examples", "commands", "evaluations", "wall_s",
              "test", "test_metric", "macro_f1", "speed", "dev_gain")

    def load(self, device: str | None = None) -> Any:
        from sentforge.meta import MetaEncoder

        return MetaEncoder.load(self.model_path, device=device)


@dataclass(frozen=True)
class StaticResult(Finished):
    """A static model distilled from a finished encoder candidate (`distilled_from`) and fitted to its vectors of
    `fitted_texts` unlabelled texts (0: not fitted), within `time_limit_s` seconds; its `sentforge distil` line."""

    distilled_from: str | None = None
    dim: int | None = None
    fitted_texts: int | None = None
    time_limit_s: float | None = None
    commands: list[str] | None = None
    KIND = "static"
    LAYOUT = (*_IDENTITY, "model_path", "dev", "distilled_from", "dim", "fitted_texts", "time_limit_s", "commands",
              "evaluations", "wall_s", "test", "test_metric", "macro_f1", "speed", "dev_gain")


@dataclass(frozen=True)
class PipelineResult(Finished):
    """A bi-encoder candidate (`first_stage`, its model `first_stage_path`) with the cross-encoder at
    `cross_encoder` re-ranking each query's `top_k` (pipeline.py): the cross-encoder's score weighs `weight` in
    the interpolation, chosen on dev among `weights` ([{"weight", "dev"}]); its speed is queries per second, each
    query `pairs_per_query` pairs through the cross-encoder; `pairs_per_second`: the cross-encoder's on dev."""

    first_stage: str | None = None
    first_stage_path: str | None = None
    cross_encoder: str | None = None
    top_k: int | None = None
    weight: float | None = None
    weights: list[dict[str, float]] | None = None
    pairs_per_query: int | None = None
    pairs_per_second: float | None = None
    KIND = "pipeline"
    LAYOUT = (*_IDENTITY, "dev", "first_stage", "first_stage_path", "cross_encoder", "top_k", "weight", "weights",
              "pairs_per_query", "pairs_per_second", "evaluations", "wall_s", "test", "test_metric", "macro_f1",
              "speed", "dev_gain")

    @property
    def chosen_on_dev(self) -> bool:
        return True

    def load(self, device: str | None = None) -> Any:
        """The scorer every ranking and labelled-pairs task evaluates (evaluation/reranker.py)."""
        from sentforge.evaluation.reranker import Reranked

        return Reranked(*self._models(device), self.top_k, weight=self.weight)

    def timed_model(self, device: str | None = None) -> Any:
        from sentforge.adaptation.pipeline import QueryCost

        return QueryCost(*self._models(device), self.pairs_per_query)

    def _models(self, device: str | None) -> tuple[Any, Any]:
        """(the first stage, the cross-encoder), loaded."""
        from sentforge.cross_encoder import load_cross_encoder
        from sentforge.loading import load

        return load(self.first_stage_path, device=device), load_cross_encoder(self.cross_encoder, device)


def finished_type(kind: str | None) -> type[Finished]:
    """The finished result type that records `kind` (a start model's for a result without one: an early version's
    layout)."""
    return next((cls for cls in (TrainedResult, DistilResult, MetaResult, StaticResult, PipelineResult)
                 if cls.KIND == kind), StartResult)


def finished(kind: str, method: str, model: str | None, **values: Any) -> Finished:
    """A finished candidate's result of its kind."""
    return finished_type(kind)(kind, method, DONE, model, **values)


def best_start(results: Mapping[str, CandidateResult], starts: list[str]) -> str:
    """The start model with the highest dev score (the first on a tie)."""
    return max(starts, key=lambda name: results[name].dev)


def load_candidate(result: CandidateResult | Mapping[str, Any], device: str | None = None) -> Any:
    """The model of a finished candidate: its result, or its entry in report.json."""
    if isinstance(result, Mapping):
        result = CandidateResult.from_json(result)
    return result.load(device)
