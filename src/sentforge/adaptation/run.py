"""`sentforge.adapt`: adapt one or more start encoders to a domain and keep the best model by a dev score.

    import sentforge
    result = sentforge.adapt("all-MiniLM-L6-v2", "domain-texts.txt", "dev.jsonl", "adapted",
                             labelled="pairs.jsonl", test="test.jsonl", budget_minutes=60)
    result.selected, result.candidates[result.selected].dev  # or report.json's keys: result["selected"]

See docs/adapt.md for the candidates and the budget, resume and selection rules.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sentforge.adaptation.adapt_state import RUNS_DIR, AdaptState
from sentforge.adaptation.candidate_runs import run_candidates
from sentforge.adaptation.candidates import METHODS, plan_candidates
from sentforge.adaptation.config import AdaptConfig
from sentforge.adaptation.hygiene import Hygiene, apply_hygiene, check_data_left, find_overlap
from sentforge.adaptation.inputs import DATA_DIR, AdaptInputs, read_inputs
from sentforge.adaptation.intervals import selection_items
from sentforge.adaptation.parallel import run_on_cluster
from sentforge.adaptation.planning import Planner
from sentforge.adaptation.report import AdaptReport, test_regret, unresolved, write_report
from sentforge.adaptation.pipeline import RERANKER_DIR, write_reranker
from sentforge.adaptation.result import NOT_APPLICABLE, CandidateResult, PipelineResult, StartResult
from sentforge.adaptation.runner import RunContext, measure_speeds
from sentforge.adaptation.front import better_and_faster, off_front_within_noise, pareto_front
from sentforge.adaptation.handover import MODEL_DIR, write_selected
from sentforge.adaptation.select import select
from sentforge.adaptation.speed import check_speed_bound, speed_sample, within_noise_of_bound
from sentforge.support.disk import directory_size, human_size, remove_checkpoints
from sentforge.support.errors import ConfigError
from sentforge.harness.dev_scores import metric_of
from sentforge.harness.ray_runs import RayRuns
from sentforge.harness.run_state import Budget
from sentforge.support.output_guard import locked_output

logger = logging.getLogger(__name__)

CACHE_DIR = "cache"
CHECKPOINT_MODELS = 3  # a training checkpoint holds the model and the optimizer's two moments (Adam): 3 models
DISK_NOTE_BYTES = 10 ** 9  # a run that may need more is announced in the log before it starts


@locked_output(AdaptState.kind)
def adapt(model: str | Sequence[str], unlabelled: str | os.PathLike | None, dev: str | os.PathLike,
          output: str | os.PathLike, *, labelled: str | os.PathLike | None = None,
          test: str | os.PathLike | None = None, cross_encoder: str | os.PathLike | None = None,
          budget_minutes: float = 60.0, members: Sequence[str] = (), seed: int = 0,
          eval_every: int | None = None, candidates: Sequence[str] | None = None, max_epochs: int = 10,
          meta_members: int = 2, device: str | None = None, show_progress: bool | None = None,
          overrides: dict[str, dict[str, Any]] | None = None, select_rule: str = "labels-first",
          keep_dev_texts: bool = False, race: bool = True, keep_checkpoints: bool = False,
          min_texts_per_second: float | None = None, keep: str = "selected",
          callbacks: Sequence[Callable[[Any], None]] = (), started: float | None = None, engine: str = "local",
          address: str | None = None, cpus_per_run: int = 1, gpus_per_run: float = 0.0) -> AdaptReport:
    """Run the candidates within the budget, write OUTPUT (model/, report.md, report.json, dev-curve.png,
    runs/, adapt.json) and return the report (AdaptReport: what report.json holds).

    model: one start model spec or several. unlabelled: domain texts (one per line, or a corpus file; None with
    class-labelled `labelled` texts, which then stand in). labelled: positive pairs (sentence1, sentence2[,
    negative]), pairs with a `label` column, some rows empty (PAUSE), or class-labelled texts (text, label): then
    dev and test are class-labelled too, every candidate is scored by the accuracy of a logistic-regression head
    fitted on its vectors of the labelled texts, the default candidates are the start model, tsdae, setfit and
    tsdae+setfit, and OUTPUT/model is the chosen encoder with that head (sentforge.SentenceClassifier.load).
    dev / test: own evaluation data (sentforge.evaluation.load_dataset); test is reported only. cross_encoder:
    a trained cross-encoder directory (sentforge.load_cross_encoder), trained without dev or test texts: with
    labelled pairs it adds the `augsbert` candidate (candidates/augsbert.py) to the default ones. members: extra
    encoders for the meta-embeddings. candidates: method names to run (the start model is always one). overrides: recipe
    settings per method, e.g. {"simcse": {"lr": 1e-5}}.
    select_rule: "labels-first" (a candidate replaces the start model only when its dev gain's 95 % paired
    bootstrap interval lies above 0; among those, the highest dev score, unless a candidate not significantly
    worse than it on the same dev units learnt from the labelled pairs where it did not, or, of the same kind of
    signal, costs less to run or as much but was made in fewer training stages), "simplest" (the same without
    the labels), "significant" (the same without the labels and the training stages), "cross-fitted"
    (significant's rule on the cross-fitted dev scores of the trained candidates' checkpoints: select.py) or
    "best" (the highest dev score).
    min_texts_per_second: only candidates that encode at least this many of your texts per second here are
    eligible (refused before the run when no start model does); it only affects the choice, so a rerun with
    another value chooses again from the finished candidates. keep_dev_texts: train on unlabelled texts and
    pairs that are dev or test texts (or near copies); by default they are dropped before any training.
    eval_every: steps between the dev evaluations of a trained candidate; None: about every 2.5 minutes of
    its training at its probed cost per step (racing.py). race: stop a trained candidate at a dev evaluation
    where it is more than a point below the start model (or below the leader by more than a point and no
    longer improving; 95 % paired intervals), its time going to the others.
    keep_checkpoints: keep the candidates' training checkpoints once the run is done (by default each
    candidate keeps its model and metrics; an interrupted run keeps them to resume). keep: "selected" (the
    default: once the report is written, only OUTPUT/model, the report, the data and the per-unit dev scores, a
    small fraction of the candidates' gigabytes; a rerun then chooses again only the same model) or "all" (every
    candidate's model under OUTPUT/runs as well).
    The budget is the wall time of the whole call, from its start (or `started`, a time.monotonic() value: the
    command line gives its own start, so that loading the libraries counts too) to the report.
    callbacks: called with the TrainerState after every training step (of every trained candidate).
    engine: "local" (one candidate after another in this process) or "ray": the trained candidates' probes and
    trainings side by side, each a Ray task on the cluster at `address` (default: RAY_ADDRESS, or a new local
    cluster) with `cpus_per_run` CPUs (its torch threads) and `gpus_per_run` GPUs, as many at once as the cluster
    holds; OUTPUT and the inputs on storage every node sees; `callbacks` are then called in the workers'
    processes (parallel.py, docs/scale.md).
    A rerun of the same call resumes, with either engine; a different call on the same output is refused.
    """
    started = time.monotonic() if started is None else started  # the budget counts from here
    config = AdaptConfig(
        models=(model,) if isinstance(model, (str, os.PathLike)) else tuple(model), unlabelled=unlabelled, dev=dev,
        output=output, labelled=labelled, test=test, cross_encoder=cross_encoder,
        budget_minutes=budget_minutes, members=tuple(members),
        seed=seed, eval_every=eval_every, candidates=None if candidates is None else tuple(candidates),
        max_epochs=max_epochs, meta_members=meta_members, device=device, show_progress=show_progress,
        overrides=overrides, select_rule=select_rule, keep_dev_texts=keep_dev_texts, race=race,
        keep_checkpoints=keep_checkpoints, min_texts_per_second=min_texts_per_second, keep=keep,
        callbacks=tuple(callbacks), engine=engine, address=address, cpus_per_run=cpus_per_run,
        gpus_per_run=gpus_per_run)
    return run_adapt(config.check(), started)


def run_adapt(config: AdaptConfig, started: float) -> AdaptReport:
    """adapt's pipeline for a checked `config`, its budget counted from `started` (a time.monotonic() value)."""
    # 1. Inputs: read and checked before any model loads (inputs.py); the state resumes a rerun (adapt_state.py).
    inputs = read_inputs(config.unlabelled, config.dev, config.labelled, config.test)
    # What dev hygiene will drop is known before anything is written, so that a run it leaves without training
    # data fails here (hygiene.py).
    overlap = find_overlap(inputs, config.keep_dev_texts)
    check_data_left(inputs, overlap, [METHODS[name] for name in config.candidates])
    model_bytes = _check_models([str(m) for m in (*config.models, *config.members)])
    speed_texts = speed_sample(inputs.dev.texts(), inputs.texts, config.seed)
    check_speed_bound(config.model_specs, speed_texts, config.min_texts_per_second, config.device,
                      outrun=any(METHODS[name].kind.outruns_start for name in config.candidates))
    state = AdaptState(config.output, config.settings(), started)
    cluster = contextlib.nullcontext() if config.engine == "local" else RayRuns(config.address, config.resources)
    # An unreachable cluster fails before anything is written; leaving it disconnects. Ctrl-C saves this call's time.
    with cluster, state.saved_if_interrupted():
        if config.engine == "ray":
            cluster.slots()  # so do resources that no node of it holds
        resumed = state.open()
        if resumed:
            logger.info("resuming the adapt run in %s (%d candidates finished)", config.output, len(state.results))

        # 2. Hygiene: dev and test texts out of the training data (hygiene.py).
        inputs, hygiene = apply_hygiene(inputs, config.output / DATA_DIR, config.keep_dev_texts, overlap)
        inputs = dataclasses.replace(inputs, data_dir=config.output / DATA_DIR, cross_encoder=(
            None if config.cross_encoder is None else Path(config.cross_encoder)))

        # 3. Plan: the candidates the data allows (candidates/), the time plan (planning.py).
        planned, left_out = plan_candidates(
            config.model_specs, list(config.candidates), bool(inputs.labelled and inputs.labelled.positives),
            bool(inputs.labelled and inputs.labelled.partial), bool(inputs.classes and inputs.classes.examples),
            inputs.cross_encoder is not None, bool(inputs.labelled and inputs.labelled.negatives))
        for candidate, reason in left_out:
            if hygiene.applied and config.labelled is not None:
                reason += " left after dev hygiene"
            state.results.setdefault(candidate.name, candidate.outcome(NOT_APPLICABLE, reason=reason))
        budget = Budget(config.budget_minutes * 60.0, state.spent(), started)
        train = config.train()
        plan = Planner(state, inputs, train, planned, budget, config.meta_members + len(config.members), speed_texts)
        context = RunContext(state, inputs, plan, train, config.members, config.meta_members, config.callbacks)
        if not resumed:
            _log_disk_need(config.output, plan, model_bytes[config.model_specs[0]], config.keep)

        # 4. Each candidate by its kind (candidates/), in turn (candidate_runs.py): a trained one probes those
        # still to run, then runs within its planned share (with --engine ray side by side on the cluster's
        # workers: parallel.py); 5. the candidates the time limit cut are extended; the time still left goes to
        # the leader's continuation when its dev evaluations say more steps may help (it joins `planned`).
        if config.engine == "ray":
            run_on_cluster(context, planned, cluster, config.show_progress)
        run_candidates(context, planned, config.show_progress)

    # 6. Select (speed.py, select.py) and 7. report (report.py).
    order = [c.name for c in planned] + [candidate.name for candidate, _ in left_out]
    # The measurement takes the time left but the report's (planning.py, step 5).
    done = [name for name in order if state.results[name].done]
    measure_speeds(context, done, speed_texts, budget.remaining() - plan.costs().report_estimate(len(done)))
    placed = None if config.engine == "local" else {"address": config.address, "cpus_per_run": config.cpus_per_run,
                                                    "gpus_per_run": config.gpus_per_run, "slots": cluster.slots_seen}
    return _select_and_report(config, state, inputs, order, budget, hygiene, len(speed_texts), placed)


def _select_and_report(config: AdaptConfig, state: AdaptState, inputs: AdaptInputs, order: list[str], budget: Budget,
                       hygiene: Hygiene, speed_texts: int, cluster: dict[str, Any] | None) -> AdaptReport:
    """Choose the model (select.py), save it as OUTPUT/model (handover.py) and write the report (report.py);
    `cluster`: where the trained candidates ran with --engine ray."""
    results = {name: state.results[name] for name in order}
    starts = [name for name in order if isinstance(results[name], StartResult)]
    done = [name for name in order if results[name].done]
    rule, seed = state.settings["select"], state.settings["seed"]
    items = selection_items(state.output, {name: results[name] for name in done}, rule, seed)
    selection = select(results, starts, rule, items, seed, config.min_texts_per_second)
    chosen = selection.chosen
    results = {name: r.update(dev_gain=selection.gains[name]) if r.done else r for name, r in results.items()}
    # A pipeline's first stage is saved as OUTPUT/model, its cross-encoder beside it (pipeline.py).
    pipeline = results[chosen] if isinstance(results[chosen], PipelineResult) else None
    encoder = pipeline.first_stage if pipeline else chosen
    start_of = results[encoder].model or results[starts[0]].model
    start_name = next(name for name in starts if results[name].model == start_of)
    metric = metric_of(inputs.dev)
    if _removed(results[encoder]):  # --keep selected removed the candidates' models at the end of an earlier call
        _check_same_choice(state.output, chosen)
    else:
        write_selected(state.output, encoder, results[encoder], results[start_name], metric, inputs.dev.name,
                       None if inputs.test is None else inputs.test.name, len(done),
                       None if inputs.classes is None else (inputs.classes.examples, inputs.dev.seed))
        if pipeline:
            write_reranker(state.output, pipeline.cross_encoder, pipeline.top_k, pipeline.weight)
    if not pipeline:  # an earlier call on this output that chose a pipeline wrote it
        shutil.rmtree(state.output / RERANKER_DIR, ignore_errors=True)
    speeds = {name: r.speed for name, r in results.items() if r.done and r.speed}
    measured = [s.texts for s in speeds.values() if s.texts is not None]
    trained = {name: results[name] for name in done if results[name].chosen_on_dev}
    fitted = ({name: items[name] for name in trained} if rule == "cross-fitted"  # computed above
              else selection_items(state.output, trained, "cross-fitted", seed))
    if not config.keep_checkpoints:  # every candidate is done: resuming needs them no more
        remove_checkpoints(state.output / RUNS_DIR)
    output_bytes_all = directory_size(state.output)
    if config.keep == "selected":  # model/ holds the chosen one
        for folder in (RUNS_DIR, CACHE_DIR):
            shutil.rmtree(state.output / folder, ignore_errors=True)
    report = AdaptReport(
        selected=chosen, selection=selection, front=pareto_front(results),
        off_front_within_noise=off_front_within_noise(results), selected_off_front=better_and_faster(results, chosen),
        speed_bound_within_noise=within_noise_of_bound(speeds, config.min_texts_per_second),
        speed_texts=measured[0] if measured else speed_texts, hygiene=hygiene, model=str(state.output / MODEL_DIR),
        metric=metric, test_metric=None if inputs.test is None else metric_of(inputs.test), dev=inputs.dev.name,
        test=None if inputs.test is None else inputs.test.name, budget_minutes=config.budget_minutes,
        settings=state.settings, candidates=results, keep_checkpoints=config.keep_checkpoints, keep=config.keep,
        test_regret=test_regret({name: r.to_json() for name, r in results.items()}, chosen),
        dev_cross_fitted={name: round(scores.score(), 4) for name, scores in fitted.items()},
        output_bytes_all=output_bytes_all, output_bytes=directory_size(state.output),
        wall_s=round(budget.total_s - budget.remaining(), 2),  # all but writing the report's files
        leftover=state.leftover, cluster=cluster, class_items=_class_items(inputs))
    write_report(state.output, report)
    logger.info("selected %s: dev %s %.2f", chosen, metric, results[chosen].dev)
    if rivals := unresolved(report):
        logger.warning("the dev set does not tell %s from %s (paired interval around 0): on new data the choice "
                       "may not hold; see report.md", chosen, ", ".join(rivals))
    return report


def _class_items(inputs: AdaptInputs) -> dict[str, int] | None:
    """The dev (and test) texts scored, with class-labelled data (report.md's accuracy intervals)."""
    if inputs.classes is None:
        return None
    tasks = {"dev": inputs.dev, "test": inputs.test}
    return {split: len(task.evaluated) for split, task in tasks.items() if task is not None}


def _check_models(specs: list[str]) -> dict[str, int]:
    """Load every model once before anything is written, so that a bad spec leaves no output behind; the bytes
    of each one's weights (4 per parameter; 0 when it does not expose them)."""
    from sentforge.adaptation.speed import parameters
    from sentforge.loading import load

    return {spec: 4 * (parameters(load(spec)) or 0) for spec in specs}


def disk_need(model_bytes: int, runs: int, snapshots: int, metas: int, members: int) -> tuple[int, int, int]:
    """(the most bytes the output may hold during the run, what it keeps with --keep all, with --keep selected)
    for `runs` trained runs of a model of `model_bytes` (each with one training checkpoint until the run ends),
    `snapshots` saved encoders (the TSDAE ladder's) and `metas` meta-embeddings of `members` members (each
    member a copy of a model); upper bounds (every planned candidate runs, OUTPUT/model the largest one)."""
    selected = model_bytes * (members if metas else 1)
    kept = model_bytes * (runs + snapshots + metas * members) + selected
    return kept + CHECKPOINT_MODELS * model_bytes * runs, kept, selected


def _log_disk_need(output: os.PathLike, plan: Planner, model_bytes: int, keep: str) -> None:
    """Say before a run that may need much disk what it may hold and keep (DISK_NOTE_BYTES; a warning past the
    free space)."""
    uses = [c.method.kind.disk(c, plan) for c in plan.planned]
    runs = sum(use.runs for use in uses)
    peak, kept, selected = disk_need(model_bytes, runs, sum(use.snapshots for use in uses),
                                     sum(use.metas for use in uses), plan.meta_members)
    free = shutil.disk_usage(output).free
    if peak < DISK_NOTE_BYTES and peak < free:
        return
    log = logger.warning if peak >= free else logger.info
    log("disk: %s may hold up to %s while the candidates run (%d training runs of a %s model, each with a training "
        "checkpoint of about %d times that until the run ends; %s free) and keeps up to %s with --keep all, %s with "
        "--keep selected (this run: --keep %s)", output, human_size(peak), runs, human_size(model_bytes),
        CHECKPOINT_MODELS, human_size(free), human_size(kept), human_size(selected), keep)


def _removed(result: CandidateResult) -> bool:
    """Whether the candidate's model was removed (--keep selected): a trained or fitted one whose run directory
    is gone (a start model is its spec)."""
    return (not isinstance(result, StartResult) and result.model_path is not None
            and not Path(result.model_path).exists())


def _check_same_choice(output: Path, chosen: str) -> None:
    """A rerun after --keep selected can keep its model, not choose another one: OUTPUT/model holds the chosen
    candidate only if an earlier report selected it."""
    import json

    earlier = output / "report.json"
    selected = json.loads(earlier.read_text(encoding="utf-8")).get("selected") if earlier.is_file() else None
    if selected != chosen:
        raise ConfigError(f"this rerun chooses {chosen}, whose model an earlier call removed (--keep selected kept "
                          f"only {selected}'s, in {output / MODEL_DIR}); to choose among the candidates again, run "
                          "the command anew into another --output with --keep all")
