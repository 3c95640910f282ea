"""`sentforge.adapt`: adapt one or more start encoders to a domain and keep the best model by a dev score.

    import sentforge
    result = sentforge.adapt("all-MiniLM-L6-v2", "domain-texts.txt", "dev.jsonl", "adapted",
                             labelled="pairs.jsonl", test="test.jsonl", budget_minutes=60)
    result["selected"], result["candidates"][result["selected"]]["dev"]

See docs/adapt.md for the candidates and the budget, resume and selection rules.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from sentforge.adaptation import shares
from sentforge.adaptation.budget import Budget, Costs
from sentforge.adaptation.candidates import METHODS, Candidate, check_methods, plan_candidates
from sentforge.adaptation.distil import distil_plan
from sentforge.adaptation.extension import cut_candidates
from sentforge.adaptation.front import pareto_front
from sentforge.adaptation.hygiene import apply_hygiene
from sentforge.adaptation.inputs import AdaptInputs, file_digest, read_inputs
from sentforge.adaptation.intervals import items_path, load_items, save_items
from sentforge.adaptation.ladder import rung_name, rungs
from sentforge.adaptation.meta import MAX_FIT_TEXTS, member_specs, run_meta
from sentforge.adaptation.needs import Needs
from sentforge.adaptation.probe import StepClock
from sentforge.adaptation.racing import Race, Reference
from sentforge.adaptation.report import write_report
from sentforge.adaptation.scoring import main_score, metric_of
from sentforge.adaptation.select import MODEL_DIR, best_start, check_rule, load_candidate, select, write_selected
from sentforge.adaptation.speed import check_speed_bound, measure, speed_sample
from sentforge.adaptation.state import RUNS_DIR, STATE_FILE, AdaptState
from sentforge.adaptation.trained import TrainSettings, probe_trained, run_trained, timed, to_train
from sentforge.disk import CHECKPOINTS, directory_size, remove_checkpoints
from sentforge.errors import ConfigError, SentforgeError
from sentforge.output_guard import guard_output, locked_output
from sentforge.recipes.best import BEST_FILE
from sentforge.recipes.run_dir import TRAINING_DIR

logger = logging.getLogger(__name__)

ADAPT = "adapt"  # the command family named in the lock
META_RESERVE_SHARE = 0.25  # the most of the budget kept for the meta-embeddings while trained candidates wait


@locked_output(ADAPT)
def adapt(model: str | Sequence[str], unlabelled: str | os.PathLike, dev: str | os.PathLike,
          output: str | os.PathLike, *, labelled: str | os.PathLike | None = None,
          test: str | os.PathLike | None = None,
          budget_minutes: float = 60.0, members: Sequence[str] = (), seed: int = 0,
          eval_every: int | None = None, candidates: Sequence[str] | None = None, max_epochs: int = 10,
          meta_members: int = 2, device: str | None = None, show_progress: bool | None = None,
          overrides: dict[str, dict[str, Any]] | None = None, select_rule: str = "significant",
          keep_dev_texts: bool = False, race: bool = True, keep_checkpoints: bool = False,
          min_texts_per_second: float | None = None,
          callbacks: Sequence[Callable[[Any], None]] = ()) -> dict[str, Any]:
    """Run the candidates within the budget, write OUTPUT (model/, report.md, report.json, dev-curve.png,
    runs/, adapt.json) and return the report (what report.json holds).

    model: one start model spec or several. unlabelled: domain texts (one per line, or a corpus file).
    labelled: positive pairs (sentence1, sentence2[, negative]), or pairs with a `label` column, some
    rows empty (PAUSE). dev / test: own evaluation data (sentforge.evaluation.load_dataset); test is
    reported only. members: extra encoders for the meta-embeddings. candidates: method names to run
    (the start model is always one). overrides: recipe settings per method, e.g. {"simcse": {"lr": 1e-5}}.
    select_rule: "significant" (a candidate replaces the start model only when its dev gain's 95 % paired
    bootstrap interval lies above 0; among those, the highest dev score, unless a candidate that costs less
    to run is not significantly worse than it on the same dev units) or "best" (the highest dev score).
    min_texts_per_second: only candidates that encode at least this many of your texts per second here are
    eligible (refused before the run when no start model does); it only affects the choice, so a rerun with
    another value chooses again from the finished candidates. keep_dev_texts: train on unlabelled texts and
    pairs that are dev or test texts (or near copies); by default they are dropped before any training.
    eval_every: steps between the dev evaluations of a trained candidate; None: about every 2.5 minutes of
    its training at its probed cost per step (racing.py). race: stop a trained candidate at a dev evaluation
    where it is significantly below the start model (or below the leader and no longer improving), its time
    going to the others.
    keep_checkpoints: keep the candidates' training checkpoints once the run is done (by default each
    candidate keeps its model and metrics; an interrupted run keeps them to resume).
    callbacks: called with the TrainerState after every training step (of every trained candidate).
    A rerun of the same call resumes; a different call on the same output is refused.
    """
    models = [model] if isinstance(model, (str, os.PathLike)) else list(model)
    # What is already in `output` is the state's to judge: a rerun of the same call resumes there.
    output = guard_output(output, [("--unlabelled", unlabelled), ("--dev", dev), ("--labelled", labelled),
                                   ("--test", test), *(("--model", m) for m in models),
                                   *(("--member", m) for m in members)], ADAPT, False, state_file=STATE_FILE)
    settings = _checked_settings(models, budget_minutes, eval_every, max_epochs, meta_members, overrides)
    methods = check_methods(None if candidates is None else list(candidates))
    check_rule(select_rule)
    inputs = read_inputs(unlabelled, dev, labelled, test)
    _check_models([str(m) for m in (*models, *members)])
    speed_texts = speed_sample(inputs.dev.texts(), inputs.texts, seed)
    check_speed_bound([str(m) for m in models], speed_texts, min_texts_per_second, device)
    state = AdaptState(output, {
        "models": [str(m) for m in models], "unlabelled": _file(unlabelled), "dev": _file(dev),
        "labelled": None if labelled is None else _file(labelled), "test": None if test is None else _file(test),
        "members": [str(m) for m in members], "candidates": methods, "seed": seed, "device": device,
        "select": select_rule, "keep_dev_texts": keep_dev_texts, "race": race, **settings})
    resumed = state.open()
    if resumed:
        logger.info("resuming the adapt run in %s (%d candidates finished)", output, len(state.results))
    inputs, hygiene = apply_hygiene(inputs, output / "data", keep_dev_texts)
    planned, left_out = plan_candidates(
        [str(m) for m in models], methods, bool(inputs.labelled and inputs.labelled.positives),
        bool(inputs.labelled and inputs.labelled.partial))
    for name, reason in left_out.items():
        if hygiene["applied"] and labelled is not None:
            reason += " left after dev hygiene (see report.md)"
        state.results.setdefault(name, {"kind": "train", "status": "not applicable", "reason": reason,
                                        "method": name.rsplit(".", 1)[-1]})
    budget = Budget(budget_minutes * 60.0, state.spent())
    train = TrainSettings(eval_every, max_epochs, seed, device, show_progress, settings["overrides"], race)
    runner = _Runner(state, inputs, budget, train, list(members), meta_members, list(callbacks), planned)
    progress = tqdm(planned, desc="adapt", unit="candidate", disable=show_progress is False, dynamic_ncols=True)
    for candidate in progress:
        if candidate.method.kind == "meta":  # the meta-embeddings combine the trained candidates as extended
            runner.extend_cut()
        progress.set_postfix_str(candidate.name, refresh=True)
        runner.run(candidate)
    runner.extend_cut()
    progress.close()
    return _finish(state, inputs, [c.name for c in planned] + list(left_out), budget_minutes, budget, hygiene,
                   keep_checkpoints, speed_texts, min_texts_per_second)


class _Runner:
    """Runs one candidate after another, recording each result in the state as it finishes."""

    def __init__(self, state: AdaptState, inputs: AdaptInputs, budget: Budget, train: TrainSettings,
                 members: list[str], meta_members: int, callbacks: list, planned: list[Candidate]) -> None:
        self.state, self.inputs, self.budget, self.train = state, inputs, budget, train
        self.members, self.meta_members, self.callbacks, self.planned = members, meta_members, callbacks, planned
        self.needs = Needs(state, inputs, train, planned)

    def run(self, candidate: Candidate) -> None:
        if candidate.name in self.state.results:
            logger.info("%s: finished earlier, reused", candidate.name)
            return
        kind = candidate.method.kind
        base = {"kind": kind, "method": candidate.method.name, "model": candidate.model}
        run = {"start": self._start, "train": self._trained, "meta": self._meta, "distil": self._distil}[kind]
        try:  # the start model's errors (a bad --model) stop the run: every choice is measured against it
            result = run(candidate)
        except SentforgeError as err:  # e.g. a recipe that cannot train on this data: the others still run
            if kind == "start":
                raise
            logger.warning("%s failed: %s", candidate.name, err)
            result = {"status": "failed", "reason": str(err), "wall_s": self.state.prior_elapsed(candidate.name)}
        self._record(candidate, base | result)

    def _record(self, candidate: Candidate, result: dict[str, Any]) -> None:
        """Test and per-unit dev scores of a finished candidate, then its result in the state."""
        if result["status"] == "done" and result["kind"] == "train":
            result["seconds_per_step"] = self.needs.step_cost(candidate)
        if result["status"] == "done" and self.inputs.test is not None and "test" not in result:
            result |= self._test(result)
        if result["status"] == "done" and not items_path(self.state.output, candidate.name).is_file():
            save_items(self.state.output, candidate.name,
                       self.inputs.dev.item_scores(load_candidate(result, self.train.device)))
        self.state.record(candidate.name, result)
        if result["status"] == "done":
            logger.info("%s: dev %s %.2f (%.0f s)", candidate.name, metric_of(self.inputs.dev), result["dev"],
                        result["wall_s"])
        else:
            logger.info("%s: %s (%s)", candidate.name, result["status"], result["reason"])

    def extend_cut(self) -> None:
        """Resume the candidates the time limit cut with the time left (see extension.py); the meta-embeddings
        still to run keep their reserve."""
        while True:
            costs = self._costs()
            available = self.budget.remaining() - self._meta_reserve(costs)
            # (a finished run's removed checkpoints leave nothing to resume from)
            cut = [c for c in cut_candidates(self.planned, self.state.results)
                   if (Path(self.state.results[c.name]["model_path"]) / CHECKPOINTS).is_dir()]
            if not cut or available < costs.trained_minimum:
                return
            candidate, earlier = cut[0], self.state.results[cut[0].name]
            logger.info("%s: extended with %.0f s of the budget left (stopped at step %d of %d)", candidate.name,
                        available / len(cut), earlier["steps"], earlier["planned_steps"])
            result = self._trained(candidate, share=available / len(cut), extend=True)
            items_path(self.state.output, candidate.name).unlink(missing_ok=True)
            kept = {key: earlier[key] for key in ("kind", "method", "model")}
            self._record(candidate, {**kept, **result, "commands": earlier["commands"] + result["commands"][-1:],
                                     "wall_s": round(earlier["wall_s"] + result["wall_s"], 2),
                                     "share_s": round(earlier.get("share_s", 0.0) + result["share_s"], 1),
                                     "extensions": earlier.get("extensions", 0) + 1})
            if result["steps"] == earlier["steps"]:  # no step fitted: give up rather than loop
                return

    def _start(self, candidate: Candidate) -> dict[str, Any]:
        from sentforge.loading import load

        started = time.monotonic()
        encoder = load(candidate.model, device=self.train.device)
        value, dev_s = main_score(self.inputs.dev, encoder)
        texts = len(set(self.inputs.dev.texts())) or 1
        result = {"status": "done", "dev": value, "model_path": str(candidate.model), "evaluations": []}
        test_s = 0.0
        if self.inputs.test is not None:
            result["test"], test_s = main_score(self.inputs.test, encoder)
            result["test_metric"] = metric_of(self.inputs.test)
        measured = self.state.measured
        measured.setdefault("dev_s", dev_s)
        measured.setdefault("test_s", test_s)
        measured.setdefault("per_text_s", dev_s / texts)
        return result | {"wall_s": round(time.monotonic() - started, 2)}

    def _costs(self) -> Costs:
        m = self.state.measured
        return Costs(m["dev_s"], m["test_s"], m["per_text_s"])

    def _meta_reserve(self, costs: Costs) -> float:
        members = self.meta_members + len(self.members)
        pending = [c for c in self.planned if c.method.kind == "meta" and c.name not in self.state.results]
        reserve = len(pending) * costs.meta_estimate(members, min(len(self.inputs.texts), MAX_FIT_TEXTS))
        # A meta-embedding combines trained candidates: it never takes more than its part from them; past
        # that it runs only on the time they leave.
        return reserve if reserve <= META_RESERVE_SHARE * self.budget.total_s else 0.0

    def _trained(self, candidate: Candidate, share: float | None = None, extend: bool = False,
                 start: str | None = None, options: dict[str, Any] | None = None) -> dict[str, Any]:
        if share is None:
            share, why = self._share(candidate)
            if share is None:
                return {"status": "skipped", "reason": why}
        result = self._trained_within(candidate, share, extend, start, options)
        return result if result["status"] != "done" else result | {"share_s": round(share, 1)}

    def _trained_within(self, candidate: Candidate, share: float, extend: bool, start: str | None,
                        options: dict[str, Any] | None) -> dict[str, Any]:
        if candidate.after is None:
            return self._train_run(candidate, share, start or candidate.model, self.state.run_dir(candidate.name),
                                   extend, options, self.needs.snapshots(candidate))
        before = self.state.results.get(candidate.after, {})
        if before.get("status") != "done":
            return {"status": "skipped", "reason": f"it starts from {candidate.after}, which did not run"}
        if extend:
            earlier = self.state.results[candidate.name]
            result = self._train_run(candidate, share, earlier["start"], Path(earlier["model_path"]), extend=True)
            return result | {"chain_steps": earlier["after_steps"] + result["steps"],
                             "after_steps": earlier["after_steps"]}
        return self._ladder(candidate, before, share)

    def _share(self, candidate: Candidate) -> tuple[float | None, str]:
        """The candidate's share of the time left, planned (shares.py) from the needs of the trained candidates
        still to run once its own probe has measured its steps; None (and why) when it cannot get the minimum."""
        costs = self._costs()
        left = [c for c in self.planned if c.method.kind == "train" and c.name not in self.state.results]
        reserve = self._meta_reserve(costs)
        equal, why = self.budget.share(len(left), reserve, costs)
        if equal is None and not any(r.get("kind") == "train" and r["status"] == "done"
                                     for r in self.state.results.values()):
            # A meta-embedding combines trained candidates: the first one does not give way to it.
            reserve = 0.0
            equal, why = self.budget.share(len(left), reserve, costs)
        if equal is None:
            return None, why
        # Every candidate still to run is probed before the first plan (each within an equal share): a need
        # planned from another candidate's cost per step would be off by the ratio of their steps' costs.
        for probed in [c for c in left if c.after is None and c.name not in self.state.probes]:
            clock = StepClock(self.needs.probe_cadence())
            probe = self._train_run(probed, equal, probed.model, self.state.run_dir(probed.name),
                                    snapshots=self.needs.snapshots(probed), probe=clock)
            self.state.probed(probed.name, {"seconds_per_step": clock.seconds_per_step()
                                            or probe["wall_s"] / probe["steps"], **probe})
        needs = [self.needs.seconds(c, costs) for c in left]
        share = shares.plan(self.budget.remaining() - reserve, needs, costs.trained_minimum)[left.index(candidate)]
        if share is None:
            return None, (f"{max(self.budget.remaining() - reserve, 0):.0f} s of the budget left; a trained candidate "
                          f"needs at least {costs.trained_minimum:.1f} s")
        return share + self.state.prior_elapsed(candidate.name), ""

    def _ladder(self, candidate: Candidate, before: dict[str, Any], share: float) -> dict[str, Any]:
        """MNRL from each TSDAE rung (ladder.py), sharing `share`; the rungs are compared at the MNRL steps the
        first one reached, and the best on dev among those that reached them is the candidate."""
        started = time.monotonic()
        steps = rungs(before, self.state.run_dir(candidate.after))
        tried: list[dict[str, Any]] = []
        for index, (after_steps, start) in enumerate(steps):
            left = share - (time.monotonic() - started)
            # _train_run takes the candidate's time so far off its share: the earlier rungs' time is in it.
            rung_share = self.state.prior_elapsed(candidate.name) + left / (len(steps) - index)
            result = self._train_run(candidate, rung_share, start,
                                     self.state.run_dir(candidate.name) / rung_name(after_steps),
                                     stop_at=tried[0]["steps"] if tried else None)
            tried.append(result | {"after_steps": after_steps})
        compared = [r for r in tried if r["steps"] == tried[0]["steps"]]  # a rung cut short is not compared
        best = max(compared, key=lambda r: r["dev"])  # the first, fewest TSDAE steps, on a tie
        ladder = [{"after_steps": r["after_steps"], "dev": r["dev"], "steps": r["steps"]} for r in tried]
        return best | {"ladder": ladder, "chain_steps": best["after_steps"] + best["steps"],
                       "wall_s": round(sum(r["wall_s"] for r in tried), 2),
                       "commands": before["commands"] + best["commands"]}

    def _cadence(self, candidate: Candidate, time_limit: float) -> int:
        """The candidate's evaluation cadence, fixed at its first run and kept with its probe, so that a
        resumed run evaluates at the same steps whatever time it has left."""
        probe = self.state.probes.get(candidate.name)
        if probe is not None and "eval_every" in probe:
            return int(probe["eval_every"])
        cadence = self.needs.cadence(candidate, time_limit)
        if probe is not None:
            probe["eval_every"] = cadence
            self.state.save()
        return cadence

    def _train_run(self, candidate: Candidate, share: float, start: str, run_dir: Path, extend: bool = False,
                   options: dict[str, Any] | None = None, snapshots: list[int] = (),
                   stop_at: int | None = None, probe: StepClock | None = None) -> dict[str, Any]:
        """One recipe run of `candidate` from `start` into `run_dir` within `share` seconds (and `stop_at`
        steps at most, the planned schedule unchanged), raced at its dev evaluations (racing.py); with `probe`,
        only its first steps: {steps, wall_s}."""
        costs = self._costs()
        key = run_dir.relative_to(self.state.output / RUNS_DIR).as_posix()
        raced = self.state.races.get(key)
        # A run that racing stopped is finished, its probe's included: it is taken up, never continued.
        probed = None if raced else self.state.probes.get(candidate.name, {}).get("steps")
        prior = self.state.prior_elapsed(candidate.name) if probe or to_train(run_dir, extend, probed) else 0.0
        # Room for the evaluation at the step that crosses the limit and for the test evaluation.
        time_limit = max(share - prior - costs.dev_s - costs.test_s, costs.dev_s, 1.0)
        started = time.monotonic()

        def elapsed() -> float:
            return prior + time.monotonic() - started

        def beat(state: Any) -> None:
            self.state.beat(candidate.name, elapsed())
            if stop_at is not None and state.step >= stop_at:
                state.should_stop = True

        race = self._race(candidate, run_dir, key, elapsed)
        callbacks = [beat, *([race.after_step] if race else []), *([probe] if probe else []), *self.callbacks]
        self.state.beat(candidate.name, prior, force=True)
        if probe is not None:
            steps = probe_trained(candidate, start, self.inputs, run_dir, self.train,
                                  time_limit, self.needs.probe_cadence(), callbacks, snapshots, race)
            return {"steps": steps, "wall_s": round(elapsed(), 2)}
        cadence = self._cadence(candidate, time_limit)
        result = timed(lambda: run_trained(candidate, start, self.inputs, run_dir, self.train, time_limit, cadence,
                                           callbacks, extend, options, snapshots, probed, race), prior)
        raced = self.state.races.get(key)
        return {"status": "done", "model_path": str(run_dir), "start": str(start), **result,
                **({"race": raced} if raced else {})}

    def _race(self, candidate: Candidate, run_dir: Path, key: str, elapsed: Callable[[], float]) -> Race | None:
        """The racing evaluator of this run: against the best start model and the leader (the other finished
        candidate with the highest dev score) on the dev units; None when racing is off."""
        if not self.train.race:
            return None
        done = {name: r for name, r in self.state.results.items()
                if r.get("status") == "done" and name != candidate.name
                and items_path(self.state.output, name).is_file()}
        starts = [name for name, r in done.items() if r["kind"] == "start"]
        if not starts:
            return None
        start = best_start(done, starts)
        leader = max(done, key=lambda name: done[name]["dev"])
        # The candidate's best so far: its start model's score, or what this run reached before it was resumed.
        saved = run_dir / TRAINING_DIR / BEST_FILE
        best = max(done[start]["dev"], json.loads(saved.read_text(encoding="utf-8"))["value"]) \
            if saved.is_file() else done[start]["dev"]

        def record(decision: dict[str, Any]) -> None:
            minutes = (self.budget.total_s - self.budget.remaining()) / 60
            self.state.raced(key, {**decision, "adapt_minutes": round(minutes, 2)})

        return Race(self.inputs.dev, Reference(start, load_items(self.state.output, start)),
                    Reference(leader, load_items(self.state.output, leader)), best, self.train.seed, record, elapsed,
                    self.state.races.get(key))

    def _distil(self, candidate: Candidate) -> dict[str, Any]:
        meta, member, why = distil_plan(self.state.results)
        if meta is None:
            return {"status": "skipped", "reason": why}
        teacher = self.state.results[meta]["model_path"]
        result = self._trained(candidate, share=self.budget.remaining(), start=self.state.results[member]["model_path"],
                               options={"teacher": teacher})
        return result | {"teacher": meta, "member": member} if result["status"] == "done" else result

    def _meta(self, candidate: Candidate) -> dict[str, Any]:
        members = member_specs(self.state.results, self.meta_members, self.members)
        if len(members) < 2:
            return {"status": "skipped", "reason": f"a meta-embedding needs at least 2 members; {len(members)} "
                                                   "candidate(s) and --member encoder(s) available"}
        costs = self._costs()
        estimate = costs.meta_estimate(len(members), min(len(self.inputs.texts), MAX_FIT_TEXTS))
        if self.budget.remaining() < estimate:
            return {"status": "skipped", "reason": f"{max(self.budget.remaining(), 0):.0f} s of the budget left; "
                                                   f"it needs about {estimate:.0f} s"}
        run_dir = self.state.run_dir(candidate.name)
        result = timed(lambda: run_meta(candidate.method.meta, members, self.inputs.unlabelled, self.inputs.dev,
                                        run_dir, self.state.output / "cache", self.train.device, self.train.seed),
                       self.state.prior_elapsed(candidate.name))
        return {"status": "done", "model_path": str(run_dir), **result}

    def _test(self, result: dict[str, Any]) -> dict[str, Any]:
        value, seconds = main_score(self.inputs.test, load_candidate(result, self.train.device))
        return {"test": value, "test_metric": metric_of(self.inputs.test),
                "wall_s": round(result["wall_s"] + seconds, 2)}


def _finish(state: AdaptState, inputs: AdaptInputs, order: list[str], budget_minutes: float, budget: Budget,
            hygiene: dict[str, Any], keep_checkpoints: bool, speed_texts: list[str],
            min_texts_per_second: float | None) -> dict[str, Any]:
    results = {name: state.results[name] for name in order}
    starts = [name for name in order if results[name]["kind"] == "start"]
    done = [name for name in order if results[name]["status"] == "done"]
    _measure_speeds(state, done, speed_texts)
    items = {name: load_items(state.output, name) for name in done}
    selection = select(results, starts, state.settings["select"], items, state.settings["seed"], min_texts_per_second)
    chosen = selection.chosen
    for name in done:
        results[name]["dev_gain"] = selection.gains[name]
    start_of = results[chosen]["model"] or results[starts[0]]["model"]
    start_name = next(name for name in starts if results[name]["model"] == start_of)
    metric = metric_of(inputs.dev)
    write_selected(state.output, chosen, results[chosen], results[start_name], metric, inputs.dev.name,
                   None if inputs.test is None else inputs.test.name,
                   sum(r["status"] == "done" for r in results.values()))
    report = {"selected": chosen, "selection": selection.to_json(state.settings["select"], min_texts_per_second),
              "front": pareto_front(results), "speed_texts": len(speed_texts),
              "hygiene": hygiene, "model": str(state.output / MODEL_DIR), "metric": metric,
              "test_metric": None if inputs.test is None else metric_of(inputs.test),
              "dev": inputs.dev.name, "test": None if inputs.test is None else inputs.test.name,
              "budget_minutes": budget_minutes, "wall_s": round(budget.total_s - budget.remaining(), 2),
              "settings": state.settings, "candidates": results, "keep_checkpoints": keep_checkpoints}
    if not keep_checkpoints:  # every candidate is done: resuming needs them no more
        remove_checkpoints(state.output / RUNS_DIR)
    report["output_bytes"] = directory_size(state.output)
    write_report(state.output, report)
    logger.info("selected %s: dev %s %.2f", chosen, metric, results[chosen]["dev"])
    return report


def _measure_speeds(state: AdaptState, names: list[str], texts: list[str]) -> None:
    """Each finished candidate's encode speed, parameters and dimension (speed.py), kept in the state so that
    a rerun measures only the candidates finished since."""
    for name in names:
        result = state.results[name]
        if "speed" not in result:
            measured = {other: state.results[other]["speed"] for other in names if "speed" in state.results[other]}
            result["speed"] = measure(load_candidate(result, state.settings["device"]), texts, measured)
            state.save()
            logger.info("%s: %.1f texts/s on %d texts", name, result["speed"]["texts_per_second"], len(texts))


def _checked_settings(models: list, budget_minutes: float, eval_every: int | None, max_epochs: int, meta_members: int,
                      overrides: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    if not models:
        raise ConfigError("--model: give at least one start model")
    if not budget_minutes > 0:
        raise ConfigError(f"--budget-minutes must be positive, got {budget_minutes}")
    for name, value in (("--eval-every", 1 if eval_every is None else eval_every), ("--max-epochs", max_epochs)):
        if not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} must be a positive whole number, got {value}")
    if meta_members < 0:
        raise ConfigError(f"--meta-members must be 0 or more, got {meta_members}")
    overrides = {k: dict(v) for k, v in (overrides or {}).items()}
    untrained = [name for name in overrides if name not in METHODS or METHODS[name].kind != "train"]
    if untrained:
        raise ConfigError(f"overrides: {', '.join(untrained)} are not trained candidates; choose from "
                          f"{', '.join(name for name, m in METHODS.items() if m.kind == 'train')}")
    return {"budget_minutes": budget_minutes, "eval_every": eval_every, "max_epochs": max_epochs,
            "meta_members": meta_members, "overrides": overrides}


def _check_models(specs: list[str]) -> None:
    """Load every model once before anything is written, so that a bad spec leaves no output behind."""
    from sentforge.loading import load

    for spec in specs:
        load(spec)


def _file(path: str | os.PathLike) -> dict[str, str]:
    return {"path": str(path), "sha256": file_digest(path)}
