"""A trained candidate: one library recipe run with dev evaluation every K steps (its own cadence, see
racing.py), its best checkpoint kept, resumable from its checkpoints; and the `sentforge train` line that
reproduces it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.adaptation.candidates import Candidate
from sentforge.adaptation.inputs import READING, AdaptInputs
from sentforge.adaptation.result import DONE, CandidateResult
from sentforge.harness.scoring import main_score, metric_of
from sentforge.recipes.command import train_command
from sentforge.recipes.run_dir import METRICS_LOG, SUMMARY_FILE, TRAINING_DIR, read_summary


@dataclass(frozen=True)
class TrainSettings:
    """What every trained candidate shares."""

    eval_every: int | None  # --eval-every; None: each candidate's cadence from its probe (racing.py)
    max_epochs: int
    seed: int
    device: str | None
    show_progress: bool | None
    overrides: dict[str, dict[str, Any]]  # per method: recipe settings replacing adapt's
    race: bool = True  # stop candidates that cannot win at their dev evaluations (racing.py)


def training_data(candidate: Candidate, inputs: AdaptInputs) -> tuple[Path, int]:
    """(the file the candidate's recipe reads, its number of examples)."""
    kind = candidate.method.data
    if kind == "unlabelled":
        return inputs.unlabelled, len(inputs.texts)
    labelled = inputs.labelled
    if kind == "partial":
        return labelled.path, len(labelled.partial)
    return labelled.positives_file, len(labelled.positives)


def recipe_settings(candidate: Candidate, examples: int, settings: TrainSettings) -> dict[str, Any]:
    """The recipe's settings: the paper's, a batch no larger than the data, up to `max_epochs` epochs."""
    from sentforge.recipes import get_recipe

    recipe = get_recipe(candidate.method.recipe)
    values = {"pooling": "keep", "batch_size": min(recipe.training["batch_size"], examples),
              **settings.overrides.get(candidate.method.name, {})}
    values.setdefault("steps", settings.max_epochs * max(examples // values["batch_size"], 1))
    return values


def warmup_steps(candidate: Candidate, steps: int, settings: TrainSettings) -> int:
    """The learning-rate warm-up of the candidate's recipe over `steps` (the trainer's rule: warmup_steps, else
    warmup_ratio of the schedule), adapt's overrides included."""
    from sentforge.recipes import get_recipe

    values = {**get_recipe(candidate.method.recipe).training, **settings.overrides.get(candidate.method.name, {})}
    return int(values.get("warmup_steps") or round(values.get("warmup_ratio", 0.0) * steps))


def train_or_take_up(candidate: Candidate, start: str, inputs: AdaptInputs, run_dir: Path,
                     settings: TrainSettings, time_limit: float, eval_every: int,
                     callbacks: Sequence[Callable[[Any], None]] = (), extend: bool = False,
                     options: dict[str, Any] | None = None, snapshots: Sequence[int] = (), probed: int | None = None,
                     evaluator: Any = None) -> CandidateResult:
    """Train (or resume, or take up the finished run in `run_dir`) and return the candidate's result:
    its dev score (the best evaluated checkpoint's), every evaluation, steps, the reproducing command.
    `extend`: continue a run that a time limit stopped, from its last checkpoint, for `time_limit` more
    seconds (the same weights as a run never stopped). `options`: the recipe's own options (distil's teacher).
    `snapshots`: steps at which the encoder is saved too (the TSDAE ladder). `probed`: the steps of the
    candidate's probe (planning.py) in `run_dir`, a run to continue rather than to take up as finished.
    `evaluator`: the dev evaluator (a racing.Race), the dev task when None."""
    data, examples = training_data(candidate, inputs)
    values = {**recipe_settings(candidate, examples, settings), **(options or {})}
    metric = metric_of(inputs.dev)
    if needs_training(run_dir, extend, probed):
        _call_recipe(candidate, start, data, values, inputs, run_dir, settings, time_limit, eval_every, callbacks,
                     extend, snapshots, evaluator)
    summary = read_summary(run_dir)
    evaluations = read_evaluations(run_dir / METRICS_LOG, metric)
    best = summary.get("best")
    if best is None:  # stopped before its first evaluation: the model of its last step is the candidate
        from sentforge.encoder import Encoder

        value, _ = main_score(inputs.dev, Encoder.load(run_dir))
        best = {"step": summary["steps"], "value": value}
        evaluations.append({"step": summary["steps"], "score": value})
    command = reproducing_command(candidate.method.recipe, start, data, run_dir, inputs.dev_path, values, settings,
                                  time_limit, eval_every, resume=extend, snapshots=snapshots)
    return CandidateResult(candidate.method.kind, candidate.method.name, DONE, candidate.model,
                           model_path=str(run_dir), start=str(start), dev=best["value"], best_step=best["step"],
                           steps=summary["steps"], planned_steps=values["steps"], stopped=summary.get("stopped"),
                           examples=examples, evaluations=evaluations, commands=[command],
                           time_limit_s=round(time_limit, 1), eval_every=eval_every)


def needs_training(run_dir: Path, extend: bool = False, probed: int | None = None) -> bool:
    """Whether train_or_take_up trains: not when `run_dir` holds a finished run, its probe excepted."""
    return extend or not (run_dir / SUMMARY_FILE).is_file() or (probed is not None and _steps(run_dir) <= probed)


def probe_run(candidate: Candidate, start: str, inputs: AdaptInputs, run_dir: Path, settings: TrainSettings,
              time_limit: float, eval_every: int, callbacks: Sequence[Callable[[Any], None]],
              snapshots: Sequence[int] = (), evaluator: Any = None) -> int:
    """Start (or restart) the candidate's run until a callback stops it (planning.StepClock); the steps it
    reached."""
    data, examples = training_data(candidate, inputs)
    _call_recipe(candidate, start, data, recipe_settings(candidate, examples, settings), inputs, run_dir, settings,
                 time_limit, eval_every, callbacks, False, snapshots, evaluator)
    return _steps(run_dir)


def _call_recipe(candidate: Candidate, start: str, data: Path, values: dict[str, Any], inputs: AdaptInputs,
                 run_dir: Path, settings: TrainSettings, time_limit: float, eval_every: int,
                 callbacks: Sequence[Callable[[Any], None]], extend: bool, snapshots: Sequence[int],
                 evaluator: Any = None) -> None:
    """The recipe run, resumed from its last checkpoint when one is there."""
    from sentforge.recipes.api import run_recipe

    run_recipe(candidate.method.recipe, start, data, run_dir, reading=READING, evaluator=evaluator or inputs.dev,
               eval_every=eval_every, select=metric_of(inputs.dev), checkpoint_every=eval_every,
               keep_last=1, resume=extend or (run_dir / TRAINING_DIR).is_dir(), device=settings.device,
               seed=settings.seed, time_limit=time_limit, show_progress=settings.show_progress, callbacks=callbacks,
               snapshots=snapshots, **values)


def _steps(run_dir: Path) -> int:
    return read_summary(run_dir)["steps"]


def read_evaluations(path: Path, metric: str) -> list[dict[str, Any]]:
    """[{"step", "score"}] of every dev evaluation the Trainer logged (a resumed run's included)."""
    if not path.is_file():
        return []
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{"step": r["step"], "score": float(r["eval"][metric])} for r in records if "eval" in r]


def reproducing_command(recipe: str, start: str, data: Path, run_dir: Path, dev: Path, values: dict[str, Any],
                        settings: TrainSettings, time_limit: float, eval_every: int, resume: bool = False,
                        snapshots: Sequence[int] = ()) -> str:
    """The `sentforge train` line that runs this candidate's recipe with the same settings."""
    from sentforge.recipes.registry import get_recipe

    return train_command(recipe, start, data, run_dir, [
        *values.items(), ("split", False if get_recipe(recipe).data == "sentences" else None), ("dev", dev),
        ("eval_every", eval_every), ("checkpoint_every", eval_every), ("keep_last", 1),
        ("time_limit", f"{time_limit:.0f}"), ("seed", settings.seed), ("resume", resume or None),
        ("snapshot_steps", ",".join(map(str, snapshots)) or None), ("device", settings.device)])


def timed(run: Callable[[], CandidateResult], prior_s: float) -> CandidateResult:
    """The result of `run()` with its wall time (plus the seconds of an interrupted earlier call)."""
    started = time.monotonic()
    result = run()
    return result.update(wall_s=round(prior_s + time.monotonic() - started, 2))
