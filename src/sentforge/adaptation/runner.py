"""Running the candidates of an adapt run, one at a time, each result recorded in the state as it finishes.

A start model is scored; a trained candidate is probed and given its share of the time (planning.py), then
trained by its recipe (trained.py, tsdae+mnrl over the TSDAE ladder, ladder.py), raced at its dev evaluations
(racing.py); a meta-embedding is fitted (meta.py); the leading meta-embedding is distilled (distil.py).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sentforge.adaptation.candidates import Candidate
from sentforge.adaptation.distil import distil_plan
from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.intervals import save_evaluation_items
from sentforge.adaptation.ladder import rung_name, rungs
from sentforge.adaptation.meta import MAX_FIT_TEXTS, member_specs, run_meta
from sentforge.adaptation.planning import Deadline, Planner, StepClock, after_teacher
from sentforge.adaptation.racing import Race, Reference
from sentforge.adaptation.result import DONE, FAILED, SKIPPED, CandidateResult
from sentforge.adaptation.select import best_start, load_candidate
from sentforge.adaptation.speed import measure
from sentforge.adaptation.state import RUNS_DIR, AdaptState
from sentforge.adaptation.trained import TrainSettings, needs_training, probe_run, timed, train_or_take_up
from sentforge.support.errors import SentforgeError
from sentforge.harness.dev_items import items_path, load_items, save_items
from sentforge.harness.scoring import main_score, metric_of
from sentforge.recipes.best import BEST_FILE
from sentforge.recipes.run_dir import TRAINING_DIR

logger = logging.getLogger(__name__)


class Runner:
    """`run(candidate)` its result, `record(candidate, result)`, `extend_cut()` the candidates the time limit
    cut; `callbacks` are called after every training step of every trained candidate."""

    def __init__(self, state: AdaptState, inputs: AdaptInputs, plan: Planner, train: TrainSettings,
                 members: list[str], meta_members: int, callbacks: list) -> None:
        self.state, self.inputs, self.plan, self.train = state, inputs, plan, train
        self.members, self.meta_members, self.callbacks = members, meta_members, callbacks

    def run(self, candidate: Candidate) -> CandidateResult:
        kind = candidate.method.kind
        run = {"start": self._start_model, "train": self._trained_candidate, "meta": self._meta_embedding,
               "distil": self._distillation}[kind]
        try:  # the start model's errors (a bad --model) stop the run: every choice is measured against it
            return run(candidate)
        except SentforgeError as err:  # e.g. a recipe that cannot train on this data: the others still run
            if kind == "start":
                raise
            logger.warning("%s failed: %s", candidate.name, err)
            return _outcome(candidate, FAILED, reason=str(err), wall_s=self.state.prior_elapsed(candidate.name))

    def record(self, candidate: Candidate, result: CandidateResult) -> None:
        """Test and per-unit dev scores of a finished candidate, then its result in the state."""
        if result.done and result.kind == "train":
            result = result.update(seconds_per_step=self.plan.step_cost(candidate))
        if result.done and self.inputs.test is not None and result.test is None:
            result = self._tested(result)
        if result.done and not items_path(self.state.output, candidate.name).is_file():
            started = time.monotonic()
            model = load_candidate(result, self.train.device)
            if result.kind != "start":  # a model read from its run directory: the loads planned take its time
                measured = self.state.measured
                measured["load_s"] = max(measured.get("load_s", 0.0), round(time.monotonic() - started, 3))
            save_items(self.state.output, candidate.name, self.inputs.dev.item_scores(model))
        self.state.record(candidate.name, result)
        if result.done:
            logger.info("%s: dev %s %.2f (%.0f s)", candidate.name, metric_of(self.inputs.dev), result.dev,
                        result.wall_s)
        else:
            logger.info("%s: %s (%s)", candidate.name, result.status, result.reason)

    def probe_pending(self, equal_s: float, reserve_s: float = 0.0) -> None:
        """Probe every trained candidate still to run and not yet probed, each within `equal_s` seconds
        (planning.py): the state keeps its seconds per step, its steps and wall seconds; a probe that fails
        records that candidate as failed. A probe after the first starts only while the time left (less
        `reserve_s`) still holds `equal_s`: on a slow machine the first steps may take more than their share."""
        for index, probed in enumerate(self.plan.to_probe()):
            left = self.plan.available() - reserve_s
            if index and left < equal_s:
                logger.info("%s not probed: %.0f s of the budget left, less than a probe's %.0f s", probed.name,
                            max(left, 0), equal_s)
                break
            clock = StepClock(self.plan.probe_cadence())
            try:
                steps, wall_s = self._recipe_run(probed, equal_s, probed.model, self.state.run_dir(probed.name),
                                                 snapshots=self.plan.snapshots(probed), probe=clock)
            except SentforgeError as err:  # the probed candidate's failure, not the one about to run
                logger.warning("%s failed: %s", probed.name, err)
                self.record(probed, _outcome(probed, FAILED, reason=str(err),
                                             wall_s=self.state.prior_elapsed(probed.name)))
                continue
            self.state.probed(probed.name, {"seconds_per_step": clock.seconds_per_step() or wall_s / steps,
                                            "steps": steps, "wall_s": wall_s})

    def extend_cut(self) -> None:
        """Resume the candidates the time limit cut with the time left (planning.py)."""
        while (extension := self.plan.extension()) is not None:
            candidate, share = extension
            earlier = self.state.results[candidate.name]
            logger.info("%s: extended with %.0f s of the budget left (stopped at step %d of %d)", candidate.name,
                        share, earlier.steps, earlier.planned_steps)
            result = self._trained_within(candidate, share, extend=True)
            items_path(self.state.output, candidate.name).unlink(missing_ok=True)
            self.record(candidate, result.update(
                commands=earlier.commands + result.commands[-1:], wall_s=round(earlier.wall_s + result.wall_s, 2),
                share_s=round((earlier.share_s or 0.0) + result.share_s, 1), extensions=(earlier.extensions or 0) + 1))
            if result.steps == earlier.steps:  # no step fitted: give up rather than loop
                return

    def measure_speeds(self, names: list[str], texts: list[str], seconds: float) -> None:
        """The finished candidates' encode speeds, parameters and dimensions (speed.py), timed together within
        about `seconds` and kept in the state: a rerun measures again only when a candidate finished since
        (then all of them, so that every speed comes from the same interleaved rounds)."""
        if all(self.state.results[name].speed is not None for name in names):
            return
        speeds = measure(lambda name: load_candidate(self.state.results[name], self.train.device), names, texts,
                         seconds)
        for name in names:
            self.state.results[name] = self.state.results[name].update(speed=speeds[name])
            speed = speeds[name]
            low, high = speed["texts_per_second_iqr"]
            logger.info("%s: %.1f texts/s (median of %d interleaved passes over %d texts; interquartile range "
                        "%.1f-%.1f)%s", name, speed["texts_per_second"], speed["rounds"], speed["texts"], low, high,
                        f", as {speed['same_as']}" if "same_as" in speed else "")
        self.state.save()

    def _start_model(self, candidate: Candidate) -> CandidateResult:
        from sentforge.loading import load

        started = time.monotonic()
        encoder = load(candidate.model, device=self.train.device)
        load_s = time.monotonic() - started
        value, dev_s = main_score(self.inputs.dev, encoder)
        texts = len(set(self.inputs.dev.texts())) or 1
        result = _outcome(candidate, DONE, dev=value, model_path=str(candidate.model), evaluations=[])
        test_s = 0.0
        if self.inputs.test is not None:
            test, test_s = main_score(self.inputs.test, encoder)
            result = result.update(test=test, test_metric=metric_of(self.inputs.test))
        measured = self.state.measured
        measured.setdefault("dev_s", dev_s)
        measured.setdefault("test_s", test_s)
        measured.setdefault("per_text_s", dev_s / texts)
        measured.setdefault("load_s", load_s)
        return result.update(wall_s=round(time.monotonic() - started, 2))

    def _trained_candidate(self, candidate: Candidate) -> CandidateResult:
        """Probe the pending candidates, plan this one's share of the time left, train it within it."""
        room = self.plan.room()
        if room.equal_s is None:
            return _outcome(candidate, SKIPPED, reason=room.why)
        self.probe_pending(room.equal_s, room.reserve_s)
        if candidate.name in self.state.results:  # it failed in its probe
            return self.state.results[candidate.name]
        share, why = self.plan.share(candidate, room.reserve_s)
        if share is None:
            return _outcome(candidate, SKIPPED, reason=why)
        return self._trained_within(candidate, share)

    def _trained_within(self, candidate: Candidate, share: float, extend: bool = False, start: str | None = None,
                        options: dict[str, Any] | None = None, before_s: float = 0.0) -> CandidateResult:
        """The candidate trained within `share` seconds: one recipe run, or for tsdae+mnrl the ladder (or the
        extension of the rung it kept). `before_s`: what the recipe takes before its first step (distil's
        teacher encoding)."""
        if candidate.after is None:
            result = self._recipe_run(candidate, share, start or candidate.model, self.state.run_dir(candidate.name),
                                      extend, options, self.plan.snapshots(candidate), before_s=before_s)
        else:
            before = self.state.results.get(candidate.after)
            if before is None or not before.done:
                return _outcome(candidate, SKIPPED, reason=f"it starts from {candidate.after}, which did not run")
            if extend:
                earlier = self.state.results[candidate.name]
                result = self._recipe_run(candidate, share, earlier.start, Path(earlier.model_path), extend=True)
                result = result.update(chain_steps=earlier.after_steps + result.steps, after_steps=earlier.after_steps,
                                       ladder=earlier.ladder)
            else:
                result = self._ladder(candidate, before, share)
        return result.update(share_s=round(share, 1))

    def _ladder(self, candidate: Candidate, before: CandidateResult, share: float) -> CandidateResult:
        """MNRL from each TSDAE rung (ladder.py), sharing `share`; the rungs are compared at the MNRL steps the
        first one reached, and the best on dev among those that reached them is the candidate."""
        started, prior = time.monotonic(), self.state.prior_elapsed(candidate.name)
        steps = rungs(before, self.state.run_dir(candidate.after))
        tried: list[CandidateResult] = []
        for index, (after_steps, start) in enumerate(steps):
            left = share - (time.monotonic() - started)
            # _recipe_run takes the candidate's time so far off its share: the earlier rungs' time is in it.
            rung_share = self.state.prior_elapsed(candidate.name) + left / (len(steps) - index)
            result = self._recipe_run(candidate, rung_share, start,
                                      self.state.run_dir(candidate.name) / rung_name(after_steps),
                                      stop_at=tried[0].steps if tried else None)
            tried.append(result.update(after_steps=after_steps))
        compared = [r for r in tried if r.steps == tried[0].steps]  # a rung cut short is not compared
        best = max(compared, key=lambda r: r.dev)  # the first, fewest TSDAE steps, on a tie
        ladder = [{"after_steps": r.after_steps, "dev": r.dev, "steps": r.steps, **({"race": r.race} if r.race else {})}
                  for r in tried]
        # Each rung's wall_s holds the earlier rungs' time too (its prior): the ladder's time is measured here.
        return best.update(ladder=ladder, chain_steps=best.after_steps + best.steps,
                           wall_s=round(prior + time.monotonic() - started, 2),
                           commands=before.commands + best.commands)

    def _cadence(self, candidate: Candidate, time_limit: float) -> int:
        """The candidate's evaluation cadence, fixed at its first run and kept with its probe, so that a
        resumed run evaluates at the same steps whatever time it has left."""
        probe = self.state.probes.get(candidate.name)
        if probe is not None and "eval_every" in probe:
            return int(probe["eval_every"])
        cadence = self.plan.cadence(candidate, time_limit)
        if probe is not None:
            probe["eval_every"] = cadence
            self.state.save()
        return cadence

    def _recipe_run(self, candidate: Candidate, share: float, start: str, run_dir: Path, extend: bool = False,
                    options: dict[str, Any] | None = None, snapshots: list[int] = (),
                    stop_at: int | None = None, probe: StepClock | None = None, before_s: float = 0.0
                    ) -> CandidateResult | tuple[int, float]:
        """One recipe run of `candidate` from `start` into `run_dir` within `share` seconds of its wall time
        (and `stop_at` steps at most, the planned schedule unchanged), raced at its dev evaluations (racing.py):
        its result; with `probe`, only its first steps: (steps, wall seconds). `before_s`: the recipe's time
        before its first step."""
        costs = self.plan.costs()
        key = run_dir.relative_to(self.state.output / RUNS_DIR).as_posix()
        raced = self.state.races.get(key)
        # A run that racing stopped is finished, its probe's included: it is taken up, never continued.
        probed = None if raced else self.state.probes.get(candidate.name, {}).get("steps")
        prior = self.state.prior_elapsed(candidate.name) if probe or needs_training(run_dir, extend, probed) else 0.0
        if probe is not None:  # room for the evaluation at a step that crosses the limit and for a test
            after_s = costs.load_s  # its checkpoint
            time_limit = max(share - prior - costs.dev_s - costs.test_s, costs.dev_s, 1.0)
        else:  # the deadline holds the candidate's whole wall time, its loading and what follows its last step
            after_s = costs.after_step_s(self.plan.step_cost(candidate))
            # the trainer's own limit, counted from its first step (the reproducing command's --time-limit)
            time_limit = max(share - prior - before_s - after_s, costs.dev_s, 1.0)
        heartbeat = self.state.heartbeat(candidate.name, prior, stop_at)
        elapsed = heartbeat.elapsed
        race = self._race(candidate, run_dir, key, elapsed, self.plan.first_judged_step(candidate, time_limit))
        deadline = Deadline(share, after_s, elapsed)
        callbacks = [heartbeat, *([race.after_step] if race else []), deadline, *([probe] if probe else []),
                     *self.callbacks]
        if probe is not None:
            steps = probe_run(candidate, start, self.inputs, run_dir, self.train, time_limit,
                              self.plan.probe_cadence(), callbacks, snapshots, race)
            return steps, round(elapsed(), 2)
        cadence = self._cadence(candidate, time_limit)
        result = timed(lambda: train_or_take_up(candidate, start, self.inputs, run_dir, self.train, time_limit,
                                                cadence, callbacks, extend, options, snapshots, probed, race), prior)
        return result.update(race=self.state.races.get(key))

    def _race(self, candidate: Candidate, run_dir: Path, key: str, elapsed: Callable[[], float],
              judged_from: int) -> Race | None:
        """The racing evaluator of this run: against the best start model and the leader (the other finished
        candidate with the highest dev score) on the dev units; None when racing is off."""
        if not self.train.race:
            return None
        done = {name: r for name, r in self.state.results.items()
                if r.done and name != candidate.name and items_path(self.state.output, name).is_file()}
        starts = [name for name, r in done.items() if r.kind == "start"]
        if not starts:
            return None
        start = best_start(done, starts)
        leader = max(done, key=lambda name: done[name].dev)
        # The candidate's best so far: its start model's score, or what this run reached before it was resumed.
        saved = run_dir / TRAINING_DIR / BEST_FILE
        best = max(done[start].dev, json.loads(saved.read_text(encoding="utf-8"))["value"]) \
            if saved.is_file() else done[start].dev

        def record(decision: dict[str, Any]) -> None:
            budget = self.plan.budget
            self.state.raced(key, {**decision, "adapt_minutes": round((budget.total_s - budget.remaining()) / 60, 2)})

        return Race(self.inputs.dev, Reference(start, load_items(self.state.output, start)),
                    Reference(leader, load_items(self.state.output, leader)), best, self.train.seed, record, elapsed,
                    self.state.races.get(key), judged_from,
                    lambda step, items: save_evaluation_items(self.state.output, key, step, items))

    def _distillation(self, candidate: Candidate) -> CandidateResult:
        meta, member, why = distil_plan(self.state.results)
        if meta is None:
            return _outcome(candidate, SKIPPED, reason=why)
        costs, texts = self.plan.costs(), len(self.inputs.texts)
        teacher_s = costs.encode_estimate(len(self.state.results[meta].members or []), texts)
        available = self.plan.available(costs)
        share, why = after_teacher(available, teacher_s, costs.trained_minimum, texts)
        if share is None:
            return _outcome(candidate, SKIPPED, reason=why)
        # Its share holds the teacher's encoding: the deadline counts it, whatever it takes.
        result = self._trained_within(candidate, available, start=self.state.results[member].model_path,
                                      options={"teacher": self.state.results[meta].model_path}, before_s=teacher_s)
        return result.update(teacher=meta, member=member) if result.done else result

    def _meta_embedding(self, candidate: Candidate) -> CandidateResult:
        members = member_specs(self.state.results, self.meta_members, self.members)
        if len(members) < 2:
            return _outcome(candidate, SKIPPED, reason=f"a meta-embedding needs at least 2 members; {len(members)} "
                                                       "candidate(s) and --member encoder(s) available")
        estimate = self.plan.costs().meta_estimate(len(members), min(len(self.inputs.texts), MAX_FIT_TEXTS))
        remaining = self.plan.available()
        if remaining < estimate:
            return _outcome(candidate, SKIPPED, reason=f"{max(remaining, 0):.0f} s of the budget left; it needs "
                                                       f"about {estimate:.0f} s")
        run_dir = self.state.run_dir(candidate.name)
        return timed(lambda: _outcome(candidate, DONE, model_path=str(run_dir), **run_meta(
            candidate.method.meta, members, self.inputs.unlabelled, self.inputs.dev, run_dir,
            self.state.output / "cache", self.train.device, self.train.seed)), self.state.prior_elapsed(candidate.name))

    def _tested(self, result: CandidateResult) -> CandidateResult:
        value, seconds = main_score(self.inputs.test, load_candidate(result, self.train.device))
        return result.update(test=value, test_metric=metric_of(self.inputs.test),
                             wall_s=round(result.wall_s + seconds, 2))


def _outcome(candidate: Candidate, status: str, **values: Any) -> CandidateResult:
    return CandidateResult(candidate.method.kind, candidate.method.name, status, candidate.model, **values)
