"""What a trained candidate's recipe run (runner.RecipeRun: dev evaluation every K steps, its own cadence, see
racing.py; its best checkpoint kept; resumable from its checkpoints) reads: its training data and settings, the
run directory's steps and evaluations; and the `sentforge train` line that reproduces it.

TSDAE before MNRL: TSDAE's own dev score says little about how good a start it is for supervised training. The
`tsdae` candidate saves its encoder at a few step counts (the ladder, LADDER_STEPS) when `tsdae+mnrl` is
planned; `tsdae+mnrl` then runs MNRL from each rung reached and from TSDAE's kept checkpoint (`rungs`; the runs
are candidates/ladder.py's).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.method import Candidate
from sentforge.adaptation.result import CandidateResult, TrainedResult
from sentforge.harness.schedule import run_length
from sentforge.recipes.api import snapshot_dir
from sentforge.recipes.command import train_command
from sentforge.recipes.run_dir import SUMMARY_FILE, read_summary

LADDER_STEPS = (100, 300, 1000)


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
    """(the file the candidate's recipe reads, its number of examples: of class-labelled texts, the rows the
    setfit recipe draws from them per epoch)."""
    kind = candidate.method.data
    if kind == "unlabelled":
        return inputs.unlabelled, len(inputs.texts)
    if kind == "silver":
        from sentforge.adaptation.silver_data import silver_data

        return silver_data(candidate, inputs)
    if kind == "margins":
        from sentforge.adaptation.margin_data import margin_data

        return margin_data(candidate, inputs)
    if kind == "scored":
        from sentforge.adaptation.silver_data import scored_data

        return scored_data(inputs)
    if kind == "classes":
        from sentforge.recipes.setfit import training_rows

        return inputs.classes.path, training_rows(len(inputs.classes.examples))
    labelled = inputs.labelled
    if kind == "partial":
        return labelled.path, len(labelled.partial)
    return labelled.positives_file, len(labelled.positives)


def recipe_settings(candidate: Candidate, examples: int, settings: TrainSettings) -> dict[str, Any]:
    """The recipe's settings: the paper's, a batch no larger than the data, up to `max_epochs` epochs (fewer when
    the method declares fewer)."""
    method = candidate.method
    own = {**dict(method.options), **settings.overrides.get(method.name, {})}
    epochs = min(settings.max_epochs, method.epochs or settings.max_epochs)
    length = run_length(method.recipe, examples, epochs, own.get("batch_size"), own.get("steps"))
    # batch_size second, as the reproducing `sentforge train` line has always listed it
    return {"pooling": "keep", "batch_size": length["batch_size"], **own, **length}


def warmup_steps(candidate: Candidate, steps: int, settings: TrainSettings) -> int:
    """The learning-rate warm-up of the candidate's recipe over `steps` (the trainer's rule: warmup_steps, else
    warmup_ratio of the schedule), adapt's overrides included."""
    from sentforge.recipes import get_recipe

    values = {**get_recipe(candidate.method.recipe).training, **settings.overrides.get(candidate.method.name, {})}
    return int(values.get("warmup_steps") or round(values.get("warmup_ratio", 0.0) * steps))


def needs_training(run_dir: Path, extend: bool = False, probed: int | None = None) -> bool:
    """Whether RecipeRun.train trains: not when `run_dir` holds a finished run, its probe excepted."""
    return extend or not (run_dir / SUMMARY_FILE).is_file() or (probed is not None and steps_taken(run_dir) <= probed)


def steps_taken(run_dir: Path) -> int:
    """The steps the recipe run in `run_dir` has taken (its summary's)."""
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


def ladder_steps(planned_steps: int) -> list[int]:
    """The ladder's step counts below a TSDAE schedule of `planned_steps` (its end is the kept checkpoint)."""
    return [step for step in LADDER_STEPS if step < planned_steps]


def rungs(tsdae: TrainedResult, tsdae_dir: Path) -> list[tuple[int, str]]:
    """(TSDAE steps, the encoder to start MNRL from) for each snapshot reached and TSDAE's kept checkpoint,
    fewest steps first."""
    found = {step: str(snapshot_dir(tsdae_dir, step)) for step in LADDER_STEPS
             if step <= tsdae.steps and snapshot_dir(tsdae_dir, step).is_dir()}
    found.setdefault(tsdae.best_step, tsdae.model_path)  # a snapshot of the same step is the same encoder
    return sorted(found.items())


def rung_name(steps: int) -> str:
    return f"after-tsdae-{steps}"
