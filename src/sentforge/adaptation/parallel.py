"""`adapt --engine ray`: the trained candidates side by side on a Ray cluster, each a Ray core task on a worker
(harness/ray_runs.py).

The command's process is the coordinator: it scores the start models, keeps OUTPUT/adapt.json and plans every
candidate's time. Then, as many at once as the cluster holds (its slots):

1. the probes: each trained candidate still to run is probed in a task of its own (runner.probe_candidate), so
   its seconds per step are the workers'; the state keeps each probe as it arrives;
2. the trainings: each trained candidate runs its planned share in a task (candidates/recipe.py: within), from
   its probe's checkpoint, and is scored there (test score, per-unit dev scores); tsdae+mnrl starts once tsdae
   is recorded. The coordinator records each result as it arrives, with the worker that ran it.

A task's worker reads a copy of the state as the coordinator had it when it submitted the task; the copy writes
nothing (the coordinator keeps the one state file), and what the task decides (its probe, racing's decisions)
travels back with its result. A worker lost mid-task makes Ray run the task again, which resumes from the
candidate's last checkpoint in OUTPUT/runs (storage every node sees at the same path). What the fan-out leaves
(the meta-embeddings, distil, the extensions of the cut candidates, the leader's continuation with the time
left) runs afterwards in this process, as in the sequential command (candidate_runs.run_candidates).

Shares per slot (planning.py's step 3 with several slots): when a slot frees, the next candidate's share is
planned over the slot-seconds left, the slots times the wall time left less what the running candidates still
hold, among the trained candidates not yet started, and never more than the wall time left.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from sentforge.adaptation.adapt_state import AdaptState
from sentforge.adaptation.candidates import kind_of, run_candidate
from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.method import Candidate
from sentforge.adaptation.result import SKIPPED, CandidateResult, TrainedResult
from sentforge.adaptation.runner import RunContext, failed, probe_candidate, record
from sentforge.harness.ray_runs import FinishedRun, RayRuns
from sentforge.harness.run_state import Budget
from sentforge.harness.side_by_side import SideBySide
from sentforge.support.errors import SentforgeError

logger = logging.getLogger(__name__)


class WorkerState(AdaptState):
    """The coordinator's state as a task's worker reads it: a copy that writes nothing."""

    def save(self) -> None:
        pass


@dataclass(frozen=True)
class CandidateTask:
    """One candidate's probe (`probe`) or training on a worker, within `share` seconds: the context with a copy
    of the state and absolute paths, and the budget's wall seconds left when it was submitted."""

    context: RunContext
    candidate: Candidate
    share: float
    probe: bool
    remaining_s: float


def run_on_worker(task: CandidateTask) -> dict[str, Any]:
    """The task body: {"probe"} of a probe; else the candidate's result (scored), its probe (with the cadence
    its training fixed), racing's decisions on its runs and the slowest load; a candidate that fails has its
    failed result."""
    context, candidate = _here(task), task.candidate
    state = context.state
    try:
        if task.probe:
            return {"probe": probe_candidate(context, candidate, task.share)}
        record(context, candidate, kind_of(candidate).within(context, task.share))
        result = state.results[candidate.name]
    except SentforgeError as err:
        result = failed(context, candidate, err)
    races = {key: decision for key, decision in state.races.items()
             if key == candidate.name or key.startswith(f"{candidate.name}/")}
    return {"result": result, "probe": state.probes.get(candidate.name), "races": races,
            "load_s": state.measured.load_s}


def _here(task: CandidateTask) -> RunContext:
    """The task's context on its worker: the budget counts from the task's start there."""
    plan = task.context.plan
    budget = Budget(plan.budget.total_s, plan.budget.total_s - task.remaining_s)
    return dataclasses.replace(task.context, plan=dataclasses.replace(plan, budget=budget))


def run_on_cluster(context: RunContext, planned: Sequence[Candidate], cluster: RayRuns,
                   show_progress: bool | None) -> None:
    """Score the start models here, then probe and train the trained candidates on the cluster's workers,
    recording each as it finishes; what is left is candidate_runs.run_candidates' to run."""
    state = context.state
    for candidate in planned:
        if candidate.method.kind.start_model and candidate.name not in state.results:
            record(context, candidate, run_candidate(context, candidate))
    fan_out = _FanOut(context, cluster, show_progress)
    fan_out.run(context.plan.to_probe(), probe=True)
    fan_out.run([c for c in planned if c.method.kind.trained and c.name not in state.results], probe=False)


class _FanOut:
    """The candidates' tasks on the cluster, as many at once as it holds, each result recorded as it arrives."""

    def __init__(self, context: RunContext, cluster: RayRuns, show_progress: bool | None) -> None:
        self.context, self.cluster, self.show_progress = context, cluster, show_progress
        # name: (candidate, when its share ends on the coordinator's clock), and the side-by-side wall time
        self.side = SideBySide(context.state, cluster)
        # What a worker reads: the paths absolute (its working directory is not this one), no progress bars.
        self.inputs = _on_any_node(context.inputs)
        self.output = context.state.output.resolve()

    def run(self, waiting: list[Candidate], probe: bool) -> None:
        """Submit the `waiting` candidates' probes or trainings in their order as slots free, and record each;
        those left waiting on a candidate that did not run are the sequential pass's."""
        progress = tqdm(total=len(waiting), desc="probes" if probe else "candidates", unit="candidate",
                        disable=self.show_progress is False, dynamic_ncols=True)
        self.side.drain(waiting, lambda candidate, slots: self._start(candidate, slots, probe),
                        lambda finished, kept: self._finish(kept[0], finished, probe), progress, self._ready)
        progress.close()

    def _start(self, candidate: Candidate, slots: int, probe: bool) -> bool:
        """Submit the candidate's probe or training with its share of the time left on `slots` slots, or record
        why it does not run (False)."""
        state, plan = self.context.state, self.context.plan
        room = plan.room()
        if probe:
            left = plan.available() - room.reserve_s
            share = None if room.equal_s is None or left <= 0 else min(room.equal_s * slots, left)
            why = room.why or f"{max(left, 0):.0f} s of the budget left"
        else:
            holding = {name: max(ends - time.monotonic(), 0.0) for name, (_, ends) in self.side.running.items()}
            share, why = (None, room.why) if room.equal_s is None else \
                plan.share(candidate, room.reserve_s, slots, holding)
        if share is None:
            self._not_started(candidate, probe, why)
            return False
        ends = time.monotonic() + share - state.prior_elapsed(candidate.name)
        self._submit(candidate, share, probe, (candidate, ends))
        return True

    def _ready(self, candidate: Candidate) -> bool:
        """A candidate starts once the one it starts from is recorded (tsdae+mnrl after tsdae)."""
        return candidate.after is None or (candidate.after not in self.side.running
                                           and candidate.after in self.context.state.results)

    def _not_started(self, candidate: Candidate, probe: bool, why: str) -> None:
        if probe:  # trained later at the mean cost per step of the probed ones, as in the sequential command
            logger.info("%s not probed: %s", candidate.name, why)
        else:
            record(self.context, candidate, candidate.outcome(SKIPPED, reason=why))

    def _submit(self, candidate: Candidate, share: float, probe: bool, kept: tuple[Candidate, float]) -> None:
        """Submit the candidate's task, keeping `kept` (the candidate as planned, when its share ends) with it."""
        state = self.context.state
        copy = WorkerState(self.output, state.settings)
        copy.results, copy.running, copy.parallel = dict(state.results), state.running, dict(state.parallel)
        copy.measured, copy.races, copy.probes = state.measured, dict(state.races), dict(state.probes)
        train = dataclasses.replace(self.context.train, show_progress=False)
        plan = dataclasses.replace(self.context.plan, state=copy, inputs=self.inputs, train=train)
        context = dataclasses.replace(self.context, state=copy, inputs=self.inputs, plan=plan, train=train)
        model = candidate.model
        if model is not None and Path(model).exists():  # a model directory, read by every worker
            candidate = dataclasses.replace(candidate, model=str(Path(model).resolve()))
        task = CandidateTask(context, candidate, share, probe, self.context.plan.budget.remaining())
        self.side.submit(task.candidate.name, kept, run_on_worker, task)

    def _finish(self, candidate: Candidate, finished: FinishedRun, probe: bool) -> None:
        """Record what the task gave: the probe, or the candidate's result with its worker."""
        state, returned, worker = self.context.state, finished.result, finished.worker
        where = f"{worker['host']} ({worker['seconds']:.0f} s)"
        if returned.get("probe") and probe:
            state.probes[candidate.name] = dataclasses.replace(returned["probe"], worker=worker)
            state.beat_parallel(self.side.elapsed())
            logger.info("%s: probed on %s, %.3g s a step", candidate.name, where,
                        returned["probe"].seconds_per_step)
            return
        if returned.get("probe"):  # the state's probe as the task had it, its cadence added
            state.probes[candidate.name] = returned["probe"]
        state.races.update(returned.get("races", {}))
        if returned.get("load_s"):
            state.measured_load(returned["load_s"])
        result: CandidateResult = returned["result"].update(model=candidate.model)
        if isinstance(result, TrainedResult):
            result = result.update(worker=worker)
        state.beat_parallel(self.side.elapsed(), candidate.name)
        logger.info("%s: ran on %s", candidate.name, where)
        record(self.context, candidate, result)


def _on_any_node(inputs: AdaptInputs) -> AdaptInputs:
    """The inputs with absolute paths."""
    labelled = inputs.labelled
    if labelled is not None:
        labelled = dataclasses.replace(labelled, path=labelled.path.resolve(), positives_file=(
            None if labelled.positives_file is None else labelled.positives_file.resolve()))
    return dataclasses.replace(inputs, unlabelled=inputs.unlabelled.resolve(), dev_path=inputs.dev_path.resolve(),
                               labelled=labelled,
                               data_dir=None if inputs.data_dir is None else inputs.data_dir.resolve())
