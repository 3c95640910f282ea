"""The pieces of work of an adapt run's candidates: the context every candidate kind runs in (`RunContext`), one
recipe run of a trained candidate, probed or trained (`RecipeRun`), the probes of the trained candidates still to
run, the record of a finished candidate (its test score and per-unit dev scores), and the speed measurement of
the finished ones (speed.py). The candidate kinds that use them are candidates/'s."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sentforge.adaptation.adapt_state import RUNS_DIR, AdaptState
from sentforge.adaptation.inputs import READING, AdaptInputs
from sentforge.adaptation.method import Candidate
from sentforge.adaptation.planning import Planner, RunLimits
from sentforge.adaptation.step_clock import StepClock
from sentforge.adaptation.racing import Race, race_of_run
from sentforge.adaptation.result import DONE, FAILED, CandidateResult, StartResult, TrainedResult, load_candidate
from sentforge.adaptation.speed import measure
from sentforge.adaptation.state_records import Probe
from sentforge.adaptation.trained import (TrainSettings, needs_training, read_evaluations, recipe_settings,
                                         reproducing_command, steps_taken, timed, training_data)
from sentforge.support.errors import SentforgeError
from sentforge.harness.dev_scores import items_path, main_score, metric_of, paired_gain, save_items, task_metrics
from sentforge.harness.run_state import Heartbeat
from sentforge.recipes.run_dir import METRICS_LOG, TRAINING_DIR, read_summary

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunContext:
    """What every candidate kind runs with: the state (results, probes, races, measured costs), the inputs, the
    time plan, the training settings, the --member encoders, the members of each meta-embedding, and the
    callbacks called after every training step of every trained candidate."""

    state: AdaptState
    inputs: AdaptInputs
    plan: Planner
    train: TrainSettings
    members: tuple[str, ...] = ()
    meta_members: int = 2
    callbacks: tuple[Callable[[Any], None], ...] = ()


@dataclass(frozen=True)
class RecipeRun:
    """One recipe run of a trained candidate, from `start` into `run_dir`, within `share` seconds of its wall time
    (and `stop_at` steps at most, the planned schedule unchanged), raced at its dev evaluations (racing.py).
    extend: continue a run that a time limit stopped; options: the recipe's own (distil's teacher); snapshots:
    the steps at which TSDAE saves its encoder (the ladder); before_s: the recipe's time before its first step
    (augsbert's scoring of its silver pairs). `probe` runs its first steps, `train` runs it to its end."""

    candidate: Candidate
    start: str
    run_dir: Path
    share: float
    extend: bool = False
    options: Mapping[str, Any] | None = None
    snapshots: tuple[int, ...] = ()
    stop_at: int | None = None
    before_s: float = 0.0

    def probe(self, context: RunContext, clock: StepClock) -> tuple[int, float]:
        """The run's first steps, until `clock` stops it: (steps, wall seconds)."""
        prior = context.state.prior_elapsed(self.candidate.name)
        limits = context.plan.limits(self.candidate, self.share, prior, probe=True)
        heartbeat, race, callbacks = self._callbacks(context, prior, limits, clock)
        data, examples = training_data(self.candidate, context.inputs)
        self._run_recipe(context, limits, callbacks, race, data, recipe_settings(self.candidate, examples,
                                                                                 context.train))
        return steps_taken(self.run_dir), round(heartbeat.elapsed(), 2)

    def train(self, context: RunContext) -> TrainedResult:
        """The run to its end (or taken up when it is finished): the candidate's result, with the cost per step
        its limits were planned at."""
        state, name = context.state, self.candidate.name
        # A run that racing stopped is finished, its probe's included: it is taken up, never continued.
        probe = state.probes.get(name)
        probed = None if state.races.get(self._key(context)) or probe is None else probe.steps
        prior = state.prior_elapsed(name) if needs_training(self.run_dir, self.extend, probed) else 0.0
        # The deadline holds the candidate's whole wall time, its loading and what follows its last step.
        limits = context.plan.limits(self.candidate, self.share, prior, self.before_s)
        if probe is not None and probe.eval_every is None:
            state.probes[name] = replace(probe, eval_every=limits.eval_every)  # fixed for the runs that resume it
            state.save()
        _, race, callbacks = self._callbacks(context, prior, limits)
        result = timed(lambda: self._train_or_take_up(context, limits, callbacks, race, probed), prior)
        if result.trained:
            result = result.update(seconds_per_step=limits.seconds_per_step)
        return result.update(race=state.races.get(self._key(context)))

    def _train_or_take_up(self, context: RunContext, limits: RunLimits, callbacks: list[Callable[[Any], None]],
                          race: Race | None, probed: int | None) -> TrainedResult:
        """Train (or resume, or take up the finished run in its run directory) and return the candidate's result:
        its dev score (the best evaluated checkpoint's), every evaluation, steps, the reproducing command.
        `probed`: the steps of the candidate's probe (planning.py) in the run directory, a run to continue rather
        than to take up as finished."""
        inputs, settings = context.inputs, context.train
        data, examples = training_data(self.candidate, inputs)
        values = {**recipe_settings(self.candidate, examples, settings), **(self.options or {})}
        if needs_training(self.run_dir, self.extend, probed):
            self._run_recipe(context, limits, callbacks, race, data, values)
        summary = read_summary(self.run_dir)
        evaluations = read_evaluations(self.run_dir / METRICS_LOG, metric_of(inputs.dev))
        best = summary.get("best")
        if best is None:  # stopped before its first evaluation: the model of its last step is the candidate
            from sentforge.encoder import Encoder

            value, _ = main_score(inputs.dev, Encoder.load(self.run_dir))
            best = {"step": summary["steps"], "value": value}
            evaluations.append({"step": summary["steps"], "score": value})
        command = reproducing_command(self.candidate.method.recipe, self.start, data, self.run_dir, inputs.dev_path,
                                      values, settings, limits.time_limit, limits.eval_every, resume=self.extend,
                                      snapshots=self.snapshots)
        return self.candidate.outcome(DONE, model_path=str(self.run_dir), start=str(self.start), dev=best["value"],
                                      best_step=best["step"], steps=summary["steps"], planned_steps=values["steps"],
                                      stopped=summary.get("stopped"), examples=examples, evaluations=evaluations,
                                      commands=[command], time_limit_s=round(limits.time_limit, 1),
                                      eval_every=limits.eval_every)

    def _run_recipe(self, context: RunContext, limits: RunLimits, callbacks: list[Callable[[Any], None]],
                    race: Race | None, data: Path, values: dict[str, Any]) -> None:
        """The recipe run with its limits, dev evaluator (`race`, else the dev task) and callbacks, resumed from
        its last checkpoint when one is there."""
        from sentforge.recipes.api import run_recipe

        inputs, settings = context.inputs, context.train
        run_recipe(self.candidate.method.recipe, self.start, data, self.run_dir, reading=READING,
                   evaluator=race or inputs.dev, eval_every=limits.eval_every, select=metric_of(inputs.dev),
                   checkpoint_every=limits.eval_every, keep_last=1,
                   resume=self.extend or (self.run_dir / TRAINING_DIR).is_dir(), device=settings.device,
                   seed=settings.seed, time_limit=limits.time_limit, show_progress=settings.show_progress,
                   callbacks=callbacks, snapshots=self.snapshots, **values)

    def _key(self, context: RunContext) -> str:
        """The run's name in the state's races: its path under OUTPUT/runs."""
        return self.run_dir.relative_to(context.state.output / RUNS_DIR).as_posix()

    def _callbacks(self, context: RunContext, prior: float, limits: RunLimits,
                   *own: Callable[[Any], None]) -> tuple[Heartbeat, Race | None, list[Callable[[Any], None]]]:
        """The heartbeat (the candidate's elapsed time), the racing evaluator (racing.py; None with racing off),
        and the trainer callbacks: the heartbeat, racing's, the deadline (planning.py), `own`, and the
        context's."""
        state = context.state
        heartbeat = state.heartbeat(self.candidate.name, prior, self.stop_at)
        race = race_of_run(state, context.inputs.dev, self.candidate.name, self._key(context), self.run_dir,
                           context.train.seed, context.plan.budget, heartbeat.elapsed, limits.judged_from) \
            if context.train.race else None
        return heartbeat, race, [heartbeat, *([race.after_step] if race else []), limits.deadline(heartbeat.elapsed),
                                 *own, *context.callbacks]


def probe_pending(context: RunContext, equal_s: float, reserve_s: float = 0.0) -> None:
    """Probe every trained candidate still to run and not yet probed, each within `equal_s` seconds
    (planning.py): the state keeps its seconds per step, its steps and wall seconds; a probe that fails
    records that candidate as failed. A probe after the first starts only while the time left (less
    `reserve_s`) still holds `equal_s`: on a slow machine the first steps may take more than their share."""
    plan, state = context.plan, context.state
    for index, probed in enumerate(plan.to_probe()):
        left = plan.available() - reserve_s
        if index and left < equal_s:
            logger.info("%s not probed: %.0f s of the budget left, less than a probe's %.0f s", probed.name,
                        max(left, 0), equal_s)
            break
        try:
            state.probed(probed.name, probe_candidate(context, probed, equal_s))
        except SentforgeError as err:  # the probed candidate's failure, not the one about to run
            record(context, probed, failed(context, probed, err))


def probe_candidate(context: RunContext, candidate: Candidate, equal_s: float) -> Probe:
    """The probe of one trained candidate within `equal_s` seconds: its seconds per step, steps and wall
    seconds (planning.py)."""
    plan = context.plan
    clock = StepClock(plan.probe_cadence())
    run = RecipeRun(candidate, candidate.model, context.state.run_dir(candidate.name), equal_s,
                    snapshots=tuple(plan.snapshots(candidate)))
    steps, wall_s = run.probe(context, clock)
    return Probe(clock.seconds_per_step() or wall_s / steps, steps, wall_s)


def record(context: RunContext, candidate: Candidate, result: CandidateResult) -> None:
    """Test and per-unit dev scores of a finished candidate (with class-labelled data, the macro-F1 of both),
    then its result in the state."""
    from sentforge.evaluation.own.classes import ClassesTask

    state, inputs = context.state, context.inputs
    if result.done and inputs.test is not None and result.test is None:
        metrics, seconds = task_metrics(inputs.test, load_candidate(result, context.train.device))
        result = result.update(test=float(metrics[metric_of(inputs.test)]), test_metric=metric_of(inputs.test),
                               wall_s=round(result.wall_s + seconds, 2), **macro_f1_of(result, "test", metrics))
    if result.done and not items_path(state.output, candidate.name).is_file():
        started = time.monotonic()
        model = load_candidate(result, context.train.device)
        if not isinstance(result, StartResult):  # read from its run directory: the loads planned take its time
            state.measured_load(time.monotonic() - started)
        if isinstance(inputs.dev, ClassesTask):
            metrics, items = inputs.dev.evaluate_with_items(model)
            result = result.update(**macro_f1_of(result, "dev", metrics))
        else:
            items = inputs.dev.item_scores(model)
        save_items(state.output, candidate.name, items)
        if isinstance(result, StartResult) and state.measured.interval_s is None:
            started = time.monotonic()
            paired_gain(items, items, state.settings["seed"])  # its cost, not its value: the selection's are planned
            state.measured_interval(time.monotonic() - started)
    state.record(candidate.name, result)
    if result.done:
        logger.info("%s: dev %s %.2f (%.0f s)", candidate.name, metric_of(inputs.dev), result.dev, result.wall_s)
    else:
        logger.info("%s: %s (%s)", candidate.name, result.status, result.reason)


def macro_f1_of(result: CandidateResult, split: str, metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The result's macro-F1 of class-labelled data with `split`'s added ({} for other data)."""
    if "macro_f1" not in metrics:
        return {}
    return {"macro_f1": {**(result.macro_f1 or {}), split: float(metrics["macro_f1"])}}


def measure_speeds(context: RunContext, names: list[str], texts: list[str], seconds: float) -> None:
    """The finished candidates' encode speeds, parameters and dimensions (speed.py), timed together within
    about `seconds` and kept in the state: a rerun measures again only when a candidate finished since
    (then all of them, so that every speed comes from the same interleaved rounds)."""
    state = context.state
    if all(state.results[name].speed is not None for name in names):
        return
    speeds = measure(lambda name: state.results[name].timed_model(context.train.device), names, texts, seconds)
    for name in names:
        state.results[name] = state.results[name].update(speed=speeds[name])
        speed = speeds[name]
        low, high = speed.texts_per_second_iqr
        logger.info("%s: %.1f texts/s (median of %d interleaved passes over %d texts; interquartile range "
                    "%.1f-%.1f)%s", name, speed.texts_per_second, speed.rounds, speed.texts, low, high,
                    f", as {speed.same_as}" if speed.same_as else "")
    state.save()


def failed(context: RunContext, candidate: Candidate, err: SentforgeError) -> CandidateResult:
    """A candidate that failed (logged), with the seconds it ran."""
    logger.warning("%s failed: %s", candidate.name, err)
    return candidate.outcome(FAILED, reason=str(err), wall_s=context.state.prior_elapsed(candidate.name))
