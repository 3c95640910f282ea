"""One `sentforge.adapt` call's settings (`AdaptConfig`), checked once (`check`) before any input is read or
anything written; what the state keeps of them (`settings`: OUTPUT/adapt.json's, which a rerun must match,
and report.json's) and what every trained candidate shares (`train`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sentforge.adaptation.adapt_state import AdaptState
from sentforge.adaptation.candidates import METHODS, check_methods
from sentforge.adaptation.select import check_rule
from sentforge.adaptation.trained import TrainSettings
from sentforge.data.classes import is_classes_file
from sentforge.harness.ray_runs import RunResources, check_engine
from sentforge.harness.run_state import check_budget_minutes, input_record
from sentforge.support.errors import ConfigError

KEEP = ("selected", "all")  # --keep: only OUTPUT/model (and the report), or every candidate's model too
PathLike = str | os.PathLike


@dataclass(frozen=True)
class AdaptConfig:
    """What `sentforge.adapt` was asked (its parameters, docs in run.adapt); after `check`, `output` is the
    checked output folder, `candidates` the chosen methods in priority order (every one when None was given)
    and `overrides` a copy."""

    models: tuple[PathLike, ...]
    unlabelled: PathLike | None
    dev: PathLike
    output: PathLike
    labelled: PathLike | None
    test: PathLike | None
    cross_encoder: PathLike | None
    budget_minutes: float
    members: tuple[str, ...]
    seed: int
    eval_every: int | None
    candidates: tuple[str, ...] | None
    max_epochs: int
    meta_members: int
    device: str | None
    show_progress: bool | None
    overrides: Mapping[str, Mapping[str, Any]] | None
    select_rule: str
    keep_dev_texts: bool
    race: bool
    keep_checkpoints: bool
    min_texts_per_second: float | None
    keep: str
    callbacks: tuple[Callable[[Any], None], ...]
    engine: str
    address: str | None
    cpus_per_run: int
    gpus_per_run: float

    def check(self) -> AdaptConfig:
        """The configuration checked, each value in the order the command line takes them: the output (what it
        holds is the state's to judge: a rerun of the same call resumes there), the settings, the candidates,
        the selection rule, the engine and --keep; a ConfigError names the first bad one."""
        output = AdaptState.check_output(self.output, [
            ("--unlabelled", self.unlabelled), ("--dev", self.dev), ("--labelled", self.labelled),
            ("--test", self.test), ("--cross-encoder", self.cross_encoder), *(("--model", m) for m in self.models),
            *(("--member", m) for m in self.members)])
        if not self.models:
            raise ConfigError("--model: give at least one start model")
        check_budget_minutes(self.budget_minutes)
        for name, value in (("--eval-every", 1 if self.eval_every is None else self.eval_every),
                            ("--max-epochs", self.max_epochs)):
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive whole number, got {value}")
        if self.meta_members < 0:
            raise ConfigError(f"--meta-members must be 0 or more, got {self.meta_members}")
        overrides = {k: dict(v) for k, v in (self.overrides or {}).items()}
        untrained = [name for name in overrides if name not in METHODS or not METHODS[name].kind.trained]
        if untrained:
            raise ConfigError(f"overrides: {', '.join(untrained)} are not trained candidates; choose from "
                              f"{', '.join(name for name, m in METHODS.items() if m.kind.trained)}")
        check_teacher(self.cross_encoder)
        methods = check_methods(None if self.candidates is None else list(self.candidates), self.classes,
                                teacher=self.cross_encoder is not None)
        check_rule(self.select_rule)
        check_engine(self.engine, self.address, self.resources)
        if self.keep not in KEEP:
            raise ConfigError(f"--keep: unknown value {self.keep!r}; choose from {', '.join(KEEP)}")
        return replace(self, output=output, candidates=tuple(methods), overrides=overrides)

    @property
    def classes(self) -> bool:
        """Whether --labelled holds class-labelled texts (its first row: text and label), whose default
        candidates are the class ones (candidates/)."""
        return self.labelled is not None and os.path.isfile(self.labelled) and is_classes_file(self.labelled)

    @property
    def resources(self) -> RunResources:
        """What one trained candidate takes of a Ray cluster (--engine ray)."""
        return RunResources(self.cpus_per_run, self.gpus_per_run)

    @property
    def model_specs(self) -> list[str]:
        return [str(m) for m in self.models]

    def settings(self) -> dict[str, Any]:
        """What OUTPUT/adapt.json keeps of the call (in this key order: report.json repeats it): the inputs with
        their identity, and every setting a rerun must match."""
        return {"models": self.model_specs, "unlabelled": input_record(self.unlabelled),
                "dev": input_record(self.dev), "labelled": input_record(self.labelled),
                "test": input_record(self.test), "members": [str(m) for m in self.members],
                "candidates": list(self.candidates), "seed": self.seed, "device": self.device,
                "select": self.select_rule, "keep_dev_texts": self.keep_dev_texts, "race": self.race,
                "budget_minutes": self.budget_minutes, "eval_every": self.eval_every, "max_epochs": self.max_epochs,
                "meta_members": self.meta_members, "overrides": self.overrides,
                # only when given, so that the settings of runs without one stay as they were
                **({} if self.cross_encoder is None else {"cross_encoder": input_record(self.cross_encoder)})}

    def train(self) -> TrainSettings:
        """What every trained candidate shares."""
        return TrainSettings(self.eval_every, self.max_epochs, self.seed, self.device, self.show_progress,
                             self.overrides, self.race)


def check_teacher(cross_encoder: PathLike | None) -> None:
    """Refuse a --cross-encoder that is not a cross-encoder directory (a bi-encoder, a file), before any model
    loads."""
    from sentforge.cross_encoder import is_cross_encoder_dir

    if cross_encoder is not None and not is_cross_encoder_dir(cross_encoder):
        raise ConfigError(f"--cross-encoder {cross_encoder}: not a cross-encoder directory (a config.json of a "
                          "...ForSequenceClassification model, no modules.json); train one with `sentforge train "
                          "cross-encoder`")
