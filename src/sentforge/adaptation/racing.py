"""Racing: a trained candidate that cannot win is stopped at a dev evaluation, and its time goes to the others.

At every dev evaluation of a trained candidate (its probe's included) the evaluated model's per-unit dev scores
are compared with those of the best start model, and with those of the leader (the finished candidate with the
highest dev score), by the paired bootstrap of intervals.py on the same dev units. The candidate is stopped when

- the upper bound of the 95 % interval of its gain over the start model is below -MARGIN (it is worse than
  the model it would replace by more than a point), or
- the upper bound of the interval of its difference from the leader is below -MARGIN and this evaluation is
  no new best of its own (a candidate still climbing is not judged by an early rung; one that fell back or
  stayed flat is not catching up).

The margin keeps a candidate that has barely moved from its start: on a large dev set a deficit of a few
hundredths is significant at its first evaluation (MNRL on TwitterPara at step 4: -0.04 [-0.05, -0.02] AP).
A candidate is judged only from `first_judged_step` on: after its learning-rate warm-up and a tenth of the
schedule it can run (its planned steps, or the steps its time limit allows, whichever are fewer). Before
that its dev score says how far it got, not where it is going (MNRL from a TSDAE rung on WikiQA was
stopped at step 3 of 130, inside a warm-up of 13 steps).

A stopped candidate keeps its best evaluated checkpoint as its model, and the decision (step, minutes, the
interval) is saved in OUTPUT/adapt.json before the run stops, so that a resumed run keeps it stopped. Its
unused time is the budget's: the next candidates' shares are planned from the time then left, and what is left
after the pass extends the candidates the time limit cut, the best dev score first (planning.py).

Not Optuna's SuccessiveHalvingPruner or Ray Tune's ASHA: they rank trials by one intermediate value at shared
rungs, while the decision here is a paired significance test on the shared dev units against the start model
and the leader, which neither expresses (and candidates run one after another, so an early one has no peers).
"""

from __future__ import annotations

import copy
import json
import logging
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sentforge.adaptation.adapt_state import AdaptState
from sentforge.adaptation.intervals import save_evaluation_items
from sentforge.adaptation.result import RaceDecision, StartResult, best_start
from sentforge.evaluation.paired import ItemScores, paired_bootstrap
from sentforge.harness.dev_scores import items_path, load_items, rounded
from sentforge.harness.run_state import Budget
from sentforge.recipes.best import BEST_FILE
from sentforge.recipes.run_dir import TRAINING_DIR

logger = logging.getLogger(__name__)

RACING = "racing"  # the trainer's stop reason (train.json "stopped") of a raced candidate
EVALUATION_SECONDS = 150.0  # the default dev evaluation cadence: about every 2.5 minutes of a candidate's training
MIN_EVALUATIONS = 4  # at least this many evaluations over a planned schedule, however fast its steps
RESAMPLES = 2000  # paired bootstrap resamples of one racing decision (the final intervals use intervals.RESAMPLES)
CONFIDENCE = 0.95
MARGIN = 1.0  # points of the dev metric (0-100): a deficit whose interval lies beyond it stops a candidate
MIN_SCHEDULE_FRACTION = 0.1  # no candidate is judged before this fraction of the schedule it can run


def first_judged_step(planned_steps: int, warmup_steps: int, allowed_steps: int | None = None) -> int:
    """The first step at which racing may stop a candidate: after its warm-up and MIN_SCHEDULE_FRACTION of
    its planned steps or of the `allowed_steps` its time limit allows at its probed cost, whichever are fewer."""
    schedule = planned_steps if allowed_steps is None else min(planned_steps, allowed_steps)
    return max(warmup_steps, math.ceil(MIN_SCHEDULE_FRACTION * schedule), 1)


def evaluation_cadence(seconds_per_step: float, planned_steps: int, time_limit: float | None = None) -> int:
    """Steps between dev evaluations when --eval-every is not given: about EVALUATION_SECONDS of the candidate's
    training at its probed cost per step, and at least MIN_EVALUATIONS over its planned schedule or over the
    steps its time limit allows at that cost, whichever are fewer (a probe that underestimates the cost still
    leaves evaluations inside the time limit, so racing can act)."""
    spread = max(1, math.ceil(planned_steps / MIN_EVALUATIONS))
    if seconds_per_step <= 0:
        return spread
    if time_limit is not None:
        spread = min(spread, max(1, math.floor(time_limit / seconds_per_step / MIN_EVALUATIONS)))
    return max(1, min(round(EVALUATION_SECONDS / seconds_per_step), spread))


@dataclass(frozen=True)
class Reference:
    """A model the candidate is compared with: its name and per-unit dev scores."""

    name: str
    items: ItemScores


def decide(items: ItemScores, start: Reference, leader: Reference | None, new_best: bool, seed: int,
           resamples: int = RESAMPLES) -> RaceDecision | None:
    """The reason to stop a candidate whose evaluated model scored `items` (with the interval that decided it),
    or None to let it run on."""
    gain = paired_bootstrap(start.items, items, resamples, CONFIDENCE, seed)
    if gain.high < -MARGIN:
        return RaceDecision("below the start", start.name, rounded(gain))
    if leader is not None and leader.name != start.name and not new_best:
        behind = paired_bootstrap(leader.items, items, resamples, CONFIDENCE, seed)
        if behind.high < -MARGIN:
            return RaceDecision("below the leader", leader.name, rounded(behind))
    return None


class Race:
    """The dev evaluator of one training run (the trainer calls it through KeepBest) and a trainer callback.

    `evaluate`: scores the model on the dev task (its metrics are returned unchanged) and on its units, and
    decides (`decide`). `after_step`, the callback: records a decision through `record` and stops the run.
    `stopped`: a decision recorded by an earlier, interrupted call of the same candidate, which stops the run
    as soon as it reaches that step. `elapsed`: the candidate's seconds so far. `judged_from`: no decision
    taken at an evaluation before this step stops the run (first_judged_step). `keep(step, items)`: receives
    the per-unit dev scores of every evaluation."""

    def __init__(self, task: Any, start: Reference, leader: Reference | None, start_score: float, seed: int,
                 record: Callable[[RaceDecision], None], elapsed: Callable[[], float],
                 stopped: RaceDecision | None = None, judged_from: int = 1,
                 keep: Callable[[int, ItemScores], None] | None = None) -> None:
        self.task, self.start, self.leader, self.seed = task, start, leader, seed
        self.record, self.elapsed, self.stopped = record, elapsed, stopped
        self.judged_from, self.keep = judged_from, keep
        self.evaluated: ItemScores | None = None
        self.best = start_score  # the candidate's step 0 is its start model
        self.pending: RaceDecision | None = None

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        with encodings_kept(encoder):
            metrics = dict(self.task.evaluate(encoder))
            items = self.task.item_scores(encoder) if self.stopped is None else None
        score = float(metrics[self.task.metadata.main_metric])
        new_best, self.best = score > self.best, max(score, self.best)
        if items is not None:
            self.evaluated = items
            decision = decide(items, self.start, self.leader, new_best, self.seed)
            self.pending = None if decision is None else replace(decision, dev=score)
        return metrics

    def after_step(self, state: Any) -> None:
        if self.evaluated is not None and self.keep is not None:
            self.keep(state.step, self.evaluated)
        self.evaluated = None
        if self.pending is not None and state.step < self.judged_from:
            logger.info("racing: step %d is before step %d, from which this candidate is judged: it runs on (%s)",
                        state.step, self.judged_from, self.pending.reason)
            self.pending = None
        if self.pending is not None:
            self.stopped = replace(self.pending, step=state.step, candidate_minutes=round(self.elapsed() / 60, 2))
            self.pending = None
            self.record(self.stopped)
            gain = self.stopped.gain
            logger.info("racing: stopped at step %d: %s (%+.2f [%+.2f, %+.2f] against %s)", state.step,
                        self.stopped.reason, gain.difference, gain.low, gain.high, self.stopped.against)
        if self.stopped is not None and state.step >= self.stopped.step:
            state.should_stop, state.stop_reason = True, RACING


def race_of_run(state: AdaptState, task: Any, name: str, key: str, run_dir: Path, seed: int, budget: Budget,
                elapsed: Callable[[], float], judged_from: int) -> Race | None:
    """The racing evaluator of candidate `name`'s run into `run_dir` (`key`: its path under OUTPUT/runs, its
    name in the state's races): against the best start model and the leader (the other finished candidate with
    the highest dev score) on the dev units of `task`; None before a start model has its per-unit scores."""
    done = {other: r for other, r in state.results.items()
            if r.done and other != name and items_path(state.output, other).is_file()}
    starts = [other for other, r in done.items() if isinstance(r, StartResult)]
    if not starts:
        return None
    start = best_start(done, starts)
    leader = max(done, key=lambda other: done[other].dev)
    # The candidate's best so far: its start model's score, or what this run reached before it was resumed.
    saved = run_dir / TRAINING_DIR / BEST_FILE
    best = max(done[start].dev, json.loads(saved.read_text(encoding="utf-8"))["value"]) \
        if saved.is_file() else done[start].dev

    def record(decision: RaceDecision) -> None:
        state.raced(key, replace(decision, adapt_minutes=round((budget.total_s - budget.remaining()) / 60, 2)))

    return Race(task, Reference(start, load_items(state.output, start)),
                Reference(leader, load_items(state.output, leader)), best, seed, record, elapsed,
                state.races.get(key), judged_from,
                lambda step, items: save_evaluation_items(state.output, key, step, items))


@contextmanager
def encodings_kept(encoder: Any) -> Iterator[None]:
    """While open, `encoder.encode` of the same texts with the same options returns a copy of the first call's
    vectors: the dev task's metrics and its per-unit scores encode the same texts once."""
    encode, kept, own = encoder.encode, {}, "encode" in vars(encoder)

    def once(texts: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            key = hash((texts if isinstance(texts, str) else tuple(texts), args, tuple(sorted(kwargs.items()))))
        except TypeError:  # an unhashable option: encoded as asked
            return encode(texts, *args, **kwargs)
        if key not in kept:
            kept[key] = encode(texts, *args, **kwargs)
        return copy.deepcopy(kept[key])

    encoder.encode = once
    try:
        yield
    finally:
        if own:  # an encode set on this object before
            encoder.encode = encode
        else:
            del encoder.encode  # the class's method again
