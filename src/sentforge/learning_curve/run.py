"""`sentforge.labels`: how the dev score grows with the number of labels, and what more would buy.

    import sentforge
    report = sentforge.labels("all-MiniLM-L6-v2", "pairs.jsonl", "dev.jsonl", "curve", target=60.0)
    report["answer"]["at_2x"]["score"], report["answer"]["target"]

For each repeat (a seeded order of the labelled units) and each size (a share of them, nested: the first
n of that order; for class-labelled texts k examples per class, nested per class), the start model is trained
on the subset and scored on dev; then a − b·n^(−c) is fitted to the scores. See docs/labels.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from sentforge.support.disk import directory_size, remove_checkpoints
from sentforge.support.errors import ConfigError, SentforgeError
from sentforge.harness.dev_scores import CONFIDENCE, RESAMPLES, dev_gains, items_path, load_items, metric_of, save_items
from sentforge.harness.ray_runs import FinishedRun, RayRuns, RunResources, check_engine
from sentforge.harness.run_state import Budget, RunState, check_budget_minutes, input_record
from sentforge.harness.schedule import run_length
from sentforge.harness.side_by_side import SideBySide
from sentforge.learning_curve.data import LabelData
from sentforge.learning_curve.read import read_label_data
from sentforge.learning_curve.run_record import DONE, LabelsRun
from sentforge.learning_curve.subsets import DEFAULT_FRACTIONS
from sentforge.support.output_guard import locked_output
from sentforge.recipes.command import train_command
from sentforge.recipes.run_dir import SUMMARY_FILE, TRAINING_DIR

logger = logging.getLogger(__name__)


class LabelsState(RunState):
    """OUTPUT/labels.json, the run harness's state: the settings of the command, and each finished or skipped run.
    A rerun of the same command takes up where it stopped (finished runs are not retrained, the interrupted one
    resumes from its checkpoint); a rerun of a different command on the same output is refused. Runs side by
    side on a Ray cluster count the command's wall time (the harness's `parallel`). Each record is a LabelsRun
    (run_record.py)."""

    kind = "labels"
    state_file = "labels.json"
    results: dict[str, LabelsRun]

    def result_from_json(self, saved: dict[str, Any]) -> LabelsRun:
        return LabelsRun.from_json(saved)

    def result_to_json(self, result: LabelsRun) -> dict[str, Any]:
        return result.to_json()


START = "start"
SUBSETS_DIR = "subsets"


def run_name(size: int, repeat: int) -> str:
    return f"n{size}-r{repeat}"


@locked_output(LabelsState.kind)
def labels(model: str, labelled: str | os.PathLike, dev: str | os.PathLike, output: str | os.PathLike, *,
           method: str | None = None, fractions: Sequence[float] | None = None,
           shots: Sequence[int] | None = None, repeats: int = 3,
           budget_minutes: float = 60.0, target: float | None = None, steps: int | None = None,
           epochs: int = 1, batch_size: int | None = None, max_seq_length: int | None = None,
           flat_points: float | None = None, keep_checkpoints: bool = False, seed: int = 0,
           device: str | None = None, show_progress: bool | None = None,
           callbacks: Sequence[Callable[[Any], None]] = (), engine: str = "local", address: str | None = None,
           cpus_per_run: int = 1, gpus_per_run: float = 0.0) -> dict[str, Any]:
    """Train `model` on nested subsets of `labelled` (`repeats` seeded orders × `fractions` percent),
    score each on `dev`, fit the learning curve; write OUTPUT (report.md, report.json, learning-curve.png,
    runs/, subsets/, labels.json) and return the report (what report.json holds).

    method: mnrl (positive pairs), pause (pairs with some labels empty), sts (scored pairs) or classes
    (class-labelled texts, trained by the setfit recipe and scored by dev accuracy); default: decided by the
    file. fractions: percentages of the labelled pairs (default 5, 10, 25, 50, 100); shots: for classes, the
    examples per class of each size (default 2, 4, 8, 16, up to the largest class). steps: optimizer steps
    of every run (the same training for every size); default: `epochs` epochs of each subset (for classes, of
    the setfit recipe's pairs). batch_size: default the recipe's, at most the subset's size.
    max_seq_length: tokens per text in training and in dev scoring, the start model's too (default: the
    model's). Runs go repeat by repeat; one whose steps are not expected to fit in the time left is skipped.
    target: a dev score (within the dev metric's range); the report says how many labels reach it.
    flat_points: more labels are not worth it when 5× the labels add fewer dev points (default 1).
    keep_checkpoints: keep each finished run's training checkpoints (by default only its model and metrics
    stay; an interrupted run keeps them to resume). A rerun of the same call resumes; `target`,
    `flat_points` and `keep_checkpoints` only shape the answer and the files kept, so a rerun with other
    values answers again without training.
    engine: "local" (one run after another in this process) or "ray": each run a Ray task on the cluster at
    `address` (default: RAY_ADDRESS, or a new local cluster) with `cpus_per_run` CPUs (its torch threads) and
    `gpus_per_run` GPUs, as many at once as the cluster holds; `callbacks` are then called in the workers'
    processes. See docs/scale.md.
    """
    from sentforge.learning_curve.answer import FLAT_POINTS, check_target, short_runs
    from sentforge.learning_curve.report import short_warning

    started = time.monotonic()  # the budget counts this call from here: reading the inputs and the model too
    _check(repeats, budget_minutes, steps, epochs, batch_size, max_seq_length)
    resources = RunResources(cpus_per_run, gpus_per_run)
    check_engine(engine, address, resources)
    # What is already in `output` is the state's to judge: a rerun of the same call resumes there.
    output = LabelsState.check_output(output, [("--labelled", labelled), ("--dev", dev), ("--model", model)])
    data = read_label_data(labelled, method)
    sizes = data.sizes(fractions, shots)
    task = data.dev_task(dev, sizes, seed)
    check_target(target, metric_of(task))
    from sentforge.loading import load  # (the model stack: imported once the options and the data are checked)

    encoder = load(str(model), device=device)  # a bad --model fails before anything is written
    if max_seq_length:  # the start model is scored at the length the runs train and are scored at
        encoder.max_seq_length = max_seq_length
    settings = {"model": str(model), "labelled": input_record(labelled), "dev": input_record(dev),
                "method": data.method, "sizes": sizes,
                "fractions": None if data.method == "classes"
                else [float(f) for f in (DEFAULT_FRACTIONS if fractions is None else fractions)],
                "shots": sizes if data.method == "classes" else None, "repeats": repeats, "steps": steps,
                "epochs": epochs, "batch_size": batch_size, "max_seq_length": max_seq_length, "seed": seed,
                "budget_minutes": budget_minutes, "device": device}
    state = LabelsState(output, settings, started)
    # An unreachable cluster fails before anything is written; Ctrl-C saves this call's time.
    with _cluster(engine, address, resources) as cluster, state.saved_if_interrupted():
        if state.open():
            logger.info("resuming the labels run in %s (%d runs recorded)", output, len(state.results))
        budget = Budget(budget_minutes * 60.0, state.spent(), started)
        runner = _Runner(state, data, task, str(model), budget, device, show_progress, list(callbacks),
                         keep_checkpoints)
        unseen = runner.unseen()
        if unseen:
            logger.warning("--steps %s: the runs of %s never see their whole subset (steps x batch size is smaller)",
                           steps, ", ".join(f"{u['labels']} {data.unit} ({u['seen']} of {u['examples']} rows)"
                                            for u in unseen))
        for note in data.notes(sizes):
            logger.warning("%s: %s", labelled, note)
        short = short_runs(list(runner.planned_steps().items()))
        if short:  # said before the work, which cannot answer the question
            logger.warning("runs too short to learn: %s", short_warning(short, data.unit))
        runner.start(encoder)
        del encoder
        planned = [(size, repeat) for repeat in range(repeats) for size in sizes]
        progress = tqdm(planned, desc="labels", unit="run", disable=show_progress is False, dynamic_ncols=True)
        if cluster is None:
            for size, repeat in progress:
                progress.set_postfix_str(run_name(size, repeat), refresh=True)
                job = runner.plan(size, repeat)
                if job is not None:
                    runner.run_here(job)
        else:
            _run_on_cluster(runner, cluster, planned, progress, Path(dev).resolve())
        progress.close()
    from sentforge.learning_curve.report import build_report, write_report

    names = [run_name(size, repeat) for size, repeat in planned]
    done = [name for name in names if state.results[name].done]
    gains = dev_gains(output, done, START, seed)
    report = build_report(state, names, gains, metric_of(task), task.name, target,
                          FLAT_POINTS if flat_points is None else flat_points, budget,
                          size_gain(output, {name: state.results[name].size for name in done}, seed), unseen,
                          data.unit, data.notes(sizes))
    report["keep_checkpoints"], report["output_bytes"] = keep_checkpoints, directory_size(output)
    if cluster is not None:
        report["cluster"] = {"address": address, "cpus_per_run": cpus_per_run, "gpus_per_run": gpus_per_run,
                             "slots": cluster.slots_seen}
    write_report(output, report)
    return report


def _cluster(engine: str, address: str | None, resources: RunResources) -> Any:
    """The Ray cluster the runs go to (a context manager), or no cluster for the local engine."""
    return contextlib.nullcontext() if engine == "local" else RayRuns(address, resources)


def _run_on_cluster(runner: _Runner, cluster: RayRuns, planned: list[tuple[int, int]], progress: Any,
                    dev: Path) -> None:
    """Run the planned runs side by side on `cluster`, in their order, as many at once as it holds: a run's
    time limit is decided when a slot frees for it, from the wall time left; each finished run is recorded
    as it arrives, with its worker."""
    side = SideBySide(runner.state, cluster)

    def start(size_repeat: tuple[int, int], slots: int) -> bool:
        job = runner.plan(*size_repeat)
        if job is not None:
            side.submit(job.name, job, train_on_worker, job.on_any_node(), str(dev), runner.task.name,
                        runner.callbacks)
        return job is not None

    def finish(run: FinishedRun, job: RunJob) -> None:
        runner.finish(job, run.result, run.wall_s, run.worker, side.elapsed())
        progress.set_postfix_str(f"{run.name} ran on {run.worker['host']} in {run.wall_s:.0f} s; running "
                                 f"{', '.join(side.running) or 'none'}", refresh=False)

    side.drain(planned, start, finish, progress)


def size_gain(output: Path, sizes: dict[str, int], seed: int) -> dict[str, Any] | None:
    """The paired gain of the largest size's runs over the smallest's (each size's runs averaged) with its
    bootstrap interval over the dev units; None with fewer than two sizes."""
    from sentforge.evaluation.paired import paired_bootstrap

    if len(set(sizes.values())) < 2:
        return None
    small, large = min(sizes.values()), max(sizes.values())
    group = {n: [load_items(output, name) for name, size in sizes.items() if size == n] for n in (small, large)}
    gain = paired_bootstrap(group[small], group[large], RESAMPLES, CONFIDENCE, seed)
    return gain.to_json() | {"sizes": [small, large]}


@dataclass(frozen=True)
class RunJob:
    """One run as it trains and is scored, in this process or on a Ray worker: the subset's training file, the
    run directory, the recipe's values and the run's time limit."""

    name: str
    size: int
    repeat: int
    examples: int
    recipe: str
    model: str
    data_file: Path
    output: Path
    run_dir: Path
    values: dict[str, Any]
    seed: int
    time_limit: float
    device: str | None

    def on_any_node(self) -> RunJob:
        """The same run with absolute paths and a model directory's absolute path (a worker runs elsewhere)."""
        model = str(Path(self.model).resolve()) if Path(self.model).exists() else self.model
        return dataclasses.replace(self, model=model, data_file=self.data_file.resolve(),
                                   output=self.output.resolve(), run_dir=self.run_dir.resolve())


def train_run(job: RunJob, task: Any, callbacks: Sequence[Callable[[Any], None]],
              show_progress: bool | None) -> LabelsRun:
    """Train `job` (resuming from its checkpoint) and score it on dev: done with its dev score, steps and why
    its training stopped early, or failed with the reason when the recipe refuses the subset (the rest of its
    record is the coordinator's, `_Runner.finish`)."""
    import json

    from sentforge.recipes.api import run_recipe

    try:
        if not (job.run_dir / SUMMARY_FILE).is_file():
            run_recipe(job.recipe, job.model, job.data_file, job.run_dir, pooling="keep", time_limit=job.time_limit,
                       checkpoint_every=max(job.values["steps"] // 4, 1), keep_last=1,
                       resume=(job.run_dir / TRAINING_DIR).is_dir(), device=job.device, seed=job.seed,
                       show_progress=show_progress, callbacks=callbacks, **job.values)
        summary = json.loads((job.run_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
        if not items_path(job.output, job.name).is_file():
            save_items(job.output, job.name, task.item_scores(trained_model(job.run_dir, job.device)))
    except SentforgeError as err:  # e.g. a subset the recipe cannot train on: the other runs still go
        return LabelsRun(status="failed", reason=str(err))
    return LabelsRun(status=DONE, dev=load_items(job.output, job.name).score(), steps=summary["steps"],
                     stopped=summary.get("stopped"))


def trained_model(run_dir: Path, device: str | None) -> Any:
    """A run's model as dev scores it: a classifier where the run saved a head (setfit), else the encoder."""
    from sentforge.classification.classifier import HEAD_FILE, SentenceClassifier
    from sentforge.loading import load

    if (run_dir / HEAD_FILE).is_file():
        return SentenceClassifier.load(run_dir, device=device)
    return load(str(run_dir), device=device)


def train_on_worker(job: RunJob, dev: str, dev_name: str, callbacks: Sequence[Callable[[Any], None]]
                    ) -> LabelsRun:
    """`train_run` on a Ray worker, which reads the dev set itself (class-labelled dev texts with the run's own
    draw as their training file: the run's classifier brings the head fitted on it)."""
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.own.classes import ClassesTask
    from sentforge.learning_curve.data import dev_kind

    task = (ClassesTask(dev, dev_name, train=job.data_file) if dev_kind(dev) == "classes"
            else load_dataset(dev, name=dev_name))
    return train_run(job, task, callbacks, show_progress=False)


class _Runner:
    def __init__(self, state: LabelsState, data: LabelData, task: Any, model: str, budget: Budget,
                 device: str | None, show_progress: bool | None, callbacks: list, keep_checkpoints: bool) -> None:
        self.state, self.data, self.task, self.model, self.budget = state, data, task, model, budget
        self.device, self.show_progress, self.callbacks = device, show_progress, callbacks
        self.keep_checkpoints = keep_checkpoints

    def unseen(self) -> list[dict[str, Any]]:
        """The sizes whose --steps × batch size cover fewer rows than their subset holds (epochs cover it)."""
        if not self.state.settings["steps"]:
            return []
        found = []
        for size in self.state.settings["sizes"]:
            examples = self._examples(size)
            values = self._values(examples)
            seen = values["steps"] * values["batch_size"]
            if seen < examples:
                found.append({"labels": size, "examples": examples, "seen": seen})
        return found

    def planned_steps(self) -> dict[int, int]:
        """{labels: the optimizer steps planned for a run of that size}."""
        return {size: self._values(self._examples(size))["steps"] for size in self.state.settings["sizes"]}

    def start(self, encoder: Any) -> None:
        """Score the start model on dev (its per-unit scores are every run's reference)."""
        if START in self.state.results:
            return
        started = time.monotonic()
        items = self.task.item_scores(encoder)
        save_items(self.state.output, START, items)
        seconds = time.monotonic() - started
        self.state.record(START, LabelsRun(status=DONE, dev=items.score(), dev_s=round(seconds, 2),
                                           wall_s=round(seconds, 2)))
        logger.info("start model: dev %s %.2f", metric_of(self.task), items.score())

    def plan(self, size: int, repeat: int) -> RunJob | None:
        """The run of `size` labels in `repeat` with its time limit from the budget left now, or None when it
        is recorded already or skipped (recorded as skipped)."""
        name = run_name(size, repeat)
        if name in self.state.results:
            logger.info("%s: recorded earlier, reused", name)
            self._tidy(name)
            return None
        dev_s = self.state.results[START].dev_s
        planned = self._values(self._examples(size))["steps"]
        time_limit, why = time_for_run(self.budget.remaining(), 2 * dev_s, planned, self.state.prior_elapsed(name),
                                       [r for r in self.state.results.values() if r.steps])
        if time_limit is None:
            self.state.record(name, LabelsRun(size=size, repeat=repeat, status="skipped", reason=why))
            logger.info("%s: skipped (%s)", name, why)
            return None
        settings = self.state.settings
        rows = self.data.draw(size, settings["seed"], repeat)
        data_file = self.state.output / SUBSETS_DIR / f"{name}.jsonl"
        if not data_file.is_file():
            self.data.write(data_file, rows)
        return RunJob(name, size, repeat, len(rows), self.data.recipe, self.model, data_file, self.state.output,
                      self.state.run_dir(name), self._values(self._examples(size)), settings["seed"] + repeat,
                      time_limit, self.device)

    def run_here(self, job: RunJob) -> None:
        """Train and record `job` in this process, its elapsed time saved as it trains."""
        heartbeat = self.state.heartbeat(job.name, self.state.prior_elapsed(job.name))
        result = train_run(job, self.task, [heartbeat, *self.callbacks], self.show_progress)
        self.finish(job, result, round(heartbeat.elapsed(), 2))

    def finish(self, job: RunJob, result: LabelsRun, wall_s: float, worker: dict[str, Any] | None = None,
               parallel_s: float | None = None) -> None:
        """Record a trained run with its wall seconds (and on a cluster its worker); parallel_s: the wall time
        of this call's side-by-side runs so far (None: the run ran alone)."""
        run = result.update(size=job.size, repeat=job.repeat, wall_s=wall_s, worker=worker)
        if run.done:
            command = train_command(job.recipe, job.model, job.data_file, job.run_dir,
                                    [("pooling", "keep"), *job.values.items(), ("seed", job.seed),
                                     ("device", job.device)])
            run = run.update(labels=job.size, examples=job.examples, planned_steps=job.values["steps"],
                             time_limit_s=round(job.time_limit, 1), command=command)
        if parallel_s is None:
            self.state.record(job.name, run)
        else:
            self.state.record_parallel(job.name, run, parallel_s)
        where = f" on {worker['host']} ({wall_s:.0f} s)" if worker else ""
        if run.done:
            logger.info("%s: dev %s %.2f%s", job.name, metric_of(self.task), run.dev, where)
            self._tidy(job.name)
        else:
            logger.warning("%s failed%s: %s", job.name, where, run.reason)

    def _tidy(self, name: str) -> None:
        """A finished run keeps its model and metrics; its checkpoints go, unless asked to keep them."""
        if not self.keep_checkpoints and self.state.results[name].done:
            remove_checkpoints(self.state.run_dir(name))

    def _examples(self, size: int) -> int:
        """Training rows of a subset of `size` units (data.py: the recipe's rows, which its steps count)."""
        return self.data.training_rows(size)

    def _values(self, examples: int) -> dict[str, Any]:
        """The recipe's steps, batch size (and maximum sequence length) for `examples` training rows."""
        settings = self.state.settings
        length = {"max_seq_length": settings["max_seq_length"]} if settings["max_seq_length"] else {}
        return {**run_length(self.data.recipe, examples, settings["epochs"], settings["batch_size"],
                             settings["steps"]), **length}


def time_for_run(available: float, overhead: float, planned_steps: int, prior: float,
                 finished: list[LabelsRun]) -> tuple[float | None, str]:
    """(the time limit of the next run, or None when it is skipped; why).

    overhead: seconds a run spends outside its steps (its dev evaluation, loading and saving models).
    The seconds per step are measured on the finished runs (`wall_s`, `steps`); a run starts only when its
    planned steps are expected to fit in the time left (less what it ran before an interruption), so that
    the curve holds whole runs; its time limit, the time left, stops it cleanly should the estimate be short.
    """
    if available < overhead + 1.0:
        return None, f"{max(available, 0):.0f} s of the budget left; a run needs more than {overhead:.0f} s"
    steps = sum(r.steps for r in finished)
    if steps:
        per_step = sum(max(r.wall_s - overhead, 0.0) for r in finished) / steps
        needed = planned_steps * per_step + overhead - prior
        if needed > available:
            return None, (f"{max(available, 0):.0f} s of the budget left; its {planned_steps} steps need about "
                          f"{needed:.0f} s ({per_step:.2f} s a step in the finished runs)")
    return available - overhead, ""


def _check(repeats: int, budget_minutes: float, steps: int | None, epochs: int, batch_size: int | None,
           max_seq_length: int | None) -> None:
    if not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"--repeats must be a positive whole number, got {repeats}")
    check_budget_minutes(budget_minutes)
    for option, value in (("--steps", steps), ("--epochs", epochs), ("--batch-size", batch_size),
                          ("--max-seq-length", max_seq_length)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ConfigError(f"{option} must be a positive whole number, got {value}")

