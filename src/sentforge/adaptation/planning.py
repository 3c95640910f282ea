"""The time plan of an adapt run: the budget, the probes, each trained candidate's share, the extensions.

Costs are measured on the start model's evaluations (the first thing a run does): a trained candidate needs at
least two dev evaluations and one test evaluation; a meta-embedding needs every member to encode the unlabelled
texts once, plus a dev and a test evaluation per member. The meta-embeddings still to run keep a reserve (at
most META_RESERVE_SHARE of the budget, and not before a trained candidate finished).

1. Room. Before a trained candidate starts, the time left (less the reserve) is split equally among the trained
   candidates still to run; when it cannot give each the minimum, the later ones in priority order are skipped.
2. Probes. Every trained candidate still to run is probed, within that equal share, before the first share is
   planned: the first PROBE_STEPS steps of its own run, timed (step_clock.StepClock). The probe adds no training:
   the run stops there, the trainer saves a checkpoint, and the candidate's run later resumes from it, ending with
   the weights of a run never stopped. Timing starts at the end of the first step, so model loading and the first
   step's warm-up do not count; an interval that ends at a dev evaluation is left out, as the evaluations are
   planned on their own. A need planned from another candidate's cost per step would be off by the ratio of their
   steps' costs.
3. Shares. A candidate's need is its training steps times its measured seconds per step, plus its dev
   evaluations (one every `eval_every` steps, and one more) and a test evaluation. Equal wall-clock slices would
   give a slow candidate (a large batch, a decoder) too little time to end its schedule and a fast one more than
   it can use. When the needs of the candidates still to run fit, each gets its need or more, in proportion
   (a cost from a few probe steps is a noisy estimate, and a candidate that ends early leaves its time to the
   next); otherwise the shares are max-min fair: the smallest needs in full, the others an equal part of what
   is left (the same fraction of every need cut MNRL's 170 steps to 4 on TwitterPara, where ten epochs of
   36,000 tweets made the unsupervised needs 30 times the budget). None gets less than the minimum: the
   lowest-priority ones that cannot get it are skipped. The shares are planned again at each candidate's
   start, with the time then left.
4. Extensions. What is left after the pass resumes the candidates whose time limit stopped them, from their last
   checkpoint (the same weights as a run that never stopped), the best dev score first, until no time or no
   cut candidate is left. Only a candidate whose share of that time reaches its next dev evaluation is
   resumed: the model it keeps is its best evaluated one, so steps no evaluation sees change nothing (SimCSE
   on TwitterPara was resumed five times for 4 to 52 steps, none reaching an evaluation, each taking a
   minute or more). A candidate that another finished candidate started from (TSDAE under TSDAE then MNRL)
   is not extended: the later candidate would no longer start from it.
5. The end. What follows the last candidate is planned too, so that the budget holds the whole run, from the
   call to the report: the speed measurement (speed.py) of the candidates still able to finish (each loaded
   once, and ROUNDS interleaved passes of the models of distinct architectures: the start models, the
   meta-embeddings' members, distil), at the start model's cost per text and per load, the passes held to
   SPEED_SHARE of the budget (never below MIN_PASS_TEXTS texts), and the selection and report (their paired
   intervals at the cost of one timed on the start model's dev scores). Steps 1 to 4 plan only the time left
   before it (`available`).
6. Deadlines. A trained candidate's share holds its whole wall time: the run stops (deadline.Deadline, a trainer
   callback) after the step past which the next step, a dev evaluation, the saves and loads of its kept model, its
   test evaluation and its per-unit dev scores (Costs.after_step_s) would no longer fit in its share; distil's
   share holds its teacher's encoding too.
7. The time left. When every schedule has ended (or racing stopped it) and no cut candidate is left to extend,
   the time before the end goes to the leading trained candidate, trained on from its kept model for a new
   schedule of the same length (more epochs), but only when its own dev evaluations say more steps may help:
   its best evaluation was its last. When the leader peaked earlier, or the time left does not reach the
   continuation's first dev evaluation, the run ends early and the report says why (`Leftover`). Its costs
   are re-measured from the leader's own run (`observed_step_cost`): a probe taken while the machine was busy
   overstates every step, and would leave the time unspent. Extensions (step 4) use the re-measured costs too.

Everything here computes; the candidate kinds (candidates/, runner.py) train the probes and the candidates, and the
state records them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from sentforge.adaptation.adapt_state import AdaptState
from sentforge.adaptation.deadline import Deadline
from sentforge.adaptation.method import CONTINUED, Candidate, continuation_of
from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.racing import evaluation_cadence, first_judged_step
from sentforge.adaptation.result import CandidateResult
from sentforge.adaptation.speed import MIN_PASS_TEXTS, ROUNDS, WARM_UP_TEXTS
from sentforge.adaptation.state_records import Leftover
from sentforge.adaptation.step_clock import PROBE_STEPS
from sentforge.adaptation.trained import (TrainSettings, ladder_steps, recipe_settings, training_data,
                                          warmup_steps)
from sentforge.support.disk import CHECKPOINTS
from sentforge.harness.run_state import Budget
from sentforge.training.stopping import TIME_LIMIT

META_RESERVE_SHARE = 0.25  # the most of the budget kept for the meta-embeddings while trained candidates wait
# The reserve's estimates come from a few timed passes, and each combining candidate runs on what the ones before
# it left: in a TwitterPara run the meta-embeddings took 10 % more than estimated, the pipeline's re-timed need
# was 8 % above its estimate, and the pipeline, the last of them, was skipped, 84 s short.
RESERVE_MARGIN = 1.25
SPEED_SHARE = 0.05  # of the budget, the most the speed measurement's passes are planned to take (past its minimum)
REPORT_S = 5.0  # the selection and the report's files, besides loading and saving the selected model
# The selection's paired intervals per candidate: its dev gain over the start model and the leader's advantage over
# it (a continuation adds its gain over what it continues). On a metric recomputed per resample (AP, Spearman) over
# thousands of dev pairs each takes seconds: unplanned, they took a 60-minute TwitterPara run past its budget.
INTERVALS_PER_CANDIDATE = 2
LOADS_AFTER_TRAINING = 5  # a checkpoint, the kept model loaded and saved, loaded for the test and the dev units


@dataclass(frozen=True)
class Costs:
    """Seconds measured on the start model: a dev evaluation, a test evaluation (0 without test data),
    and encoding one text."""

    dev_s: float
    test_s: float
    per_text_s: float
    load_s: float = 0.0  # loading the start model (an earlier version's state did not time it: 0)
    rerank_s: float = 0.0  # the --cross-encoder loaded and scoring the dev and test data (0 without one)
    interval_s: float = 0.0  # one paired bootstrap interval on the dev units (0 before it is timed)
    pair_s: float = 0.0  # the --cross-encoder's seconds per pair (0 without one, or before it was kept)

    @property
    def trained_minimum(self) -> float:
        return 2 * self.dev_s + self.test_s

    def after_step_s(self, seconds_per_step: float) -> float:
        """What a trained candidate still needs after a step, to stop within its share: one more step with a dev
        evaluation (the step that would cross), then the saves and loads of its model, its test evaluation and
        its per-unit dev scores."""
        return seconds_per_step + 2 * self.dev_s + self.test_s + LOADS_AFTER_TRAINING * self.load_s

    def speed_estimate(self, encoders: Sequence[int], loads: int, texts: int, total_s: float) -> float:
        """Seconds of the speed measurement: `loads` candidates loaded, a warm-up and ROUNDS passes over `texts`
        texts by each timed model (`encoders`: how many each runs), the passes held to SPEED_SHARE of the
        `total_s` budget but never below MIN_PASS_TEXTS texts."""
        per_text = sum(encoders) * self.per_text_s
        full, least = ROUNDS * texts * per_text, ROUNDS * min(MIN_PASS_TEXTS, texts) * per_text
        return loads * self.load_s + min(WARM_UP_TEXTS, texts) * per_text + min(full, max(least, SPEED_SHARE * total_s))

    def report_estimate(self, candidates: int) -> float:
        """Seconds of the selection among `candidates` and the report: the paired intervals, the selected model
        loaded and saved, the files written."""
        return REPORT_S + 2 * self.load_s + INTERVALS_PER_CANDIDATE * candidates * self.interval_s

    def encode_estimate(self, encoders: int, texts: int) -> float:
        return encoders * texts * self.per_text_s

    def meta_estimate(self, members: int, texts: int) -> float:
        return self.encode_estimate(members, texts) + members * (self.dev_s + self.test_s)


@dataclass(frozen=True)
class Room:
    """Step 1: the equal share that bounds each probe (None when no trained candidate fits: `why`), and the
    reserve kept for the meta-embeddings, which the shares then keep too."""

    equal_s: float | None
    reserve_s: float
    why: str = ""


@dataclass(frozen=True)
class RunLimits:
    """One recipe run's limits, planned at its start (`Planner.limits`): its `share` (the candidate's whole wall
    time, its earlier runs' included), the trainer's time limit (counted from its first step), the seconds the
    deadline keeps after a step, the dev evaluation cadence, the first step racing may judge, and the cost per
    step they were planned at."""

    share: float
    time_limit: float
    after_s: float
    eval_every: int
    judged_from: int
    seconds_per_step: float

    def deadline(self, elapsed: Callable[[], float]) -> Deadline:
        return Deadline(self.share, self.after_s, elapsed)


@dataclass(frozen=True)
class Planner:
    """The time plan of one run, read from its state (the probes, the results, the measured costs)."""

    state: AdaptState
    inputs: AdaptInputs
    train: TrainSettings
    planned: list[Candidate]
    budget: Budget
    meta_members: int  # the members of each meta-embedding: the best candidates and the --member encoders
    speed_sample: Sequence[str] = ()  # the texts the speed measurement may encode (speed.speed_sample)

    def costs(self) -> Costs:
        m = self.state.measured
        return Costs(m.dev_s, m.test_s, m.per_text_s, m.load_s or 0.0, m.rerank_s or 0.0, m.interval_s or 0.0,
                     m.pair_s or 0.0)

    def end_reserve(self, costs: Costs | None = None) -> float:
        """Step 5: the seconds kept for the speed measurement and the report, for the candidates that may still
        finish: every planned one not already recorded as not run; timed apart, the start models (one encoder
        each), the meta-embeddings (their members) and distil."""
        costs = costs or self.costs()
        finishing = [c for c in self.planned if c.name not in self.state.results or self.state.results[c.name].done]
        encoders = [count for c in finishing if (count := c.method.kind.timed_encoders(self.meta_members)) is not None]
        return (costs.speed_estimate(encoders, len(finishing), len(self.speed_sample),
                                       self.budget.total_s)
                + costs.report_estimate(len(finishing)))

    def available(self, costs: Costs | None = None) -> float:
        """The seconds of the budget left before the end (step 5)."""
        return self.budget.remaining() - self.end_reserve(costs)

    def meta_reserve(self, costs: Costs) -> float:
        """The seconds kept for the candidates that combine trained ones (the meta-embeddings, the pipeline)
        while the trained candidates run: their estimates, with RESERVE_MARGIN."""
        reserve = sum(c.method.kind.reserve_s(costs, self.meta_members, len(self.inputs.texts))
                      for c in self.planned if c.name not in self.state.results)
        # A meta-embedding combines trained candidates: it never takes more than its part from them; past
        # that it runs only on the time they leave.
        cap = META_RESERVE_SHARE * self.budget.total_s
        return min(RESERVE_MARGIN * reserve, cap) if reserve <= cap else 0.0

    def room(self) -> Room:
        """Step 1, before a trained candidate starts."""
        costs = self.costs()
        reserve = self.meta_reserve(costs)
        left = len(self._trained_left())
        available = self.available(costs)
        room = equal_share(available, left, reserve, costs)
        if room.equal_s is None and not any(r.trained for r in self.state.results.values()):
            # A meta-embedding combines trained candidates: the first one does not give way to it.
            room = equal_share(available, left, 0.0, costs)
        return room

    def to_probe(self) -> list[Candidate]:
        """Step 2: the trained candidates still to run and to probe (tsdae+mnrl is not probed: it starts after
        TSDAE, and takes the cost per step of its start model's mnrl)."""
        return [c for c in self._trained_left() if c.after is None and c.method.kind.probed
                and c.name not in self.state.probes]

    def share(self, candidate: Candidate, reserve_s: float, slots: int | None = None,
              holding: Mapping[str, float] | None = None) -> tuple[float | None, str]:
        """Step 3, once the probes have measured the steps: the candidate's time limit in seconds, counted from
        its first run (its probe's time included); None (and why) when it cannot get the minimum. With `slots`
        (--engine ray, a slot freeing for the candidate): its share of the slot-seconds left (`slots` times the
        wall time left, less `reserve_s` and the seconds the running candidates still hold, `holding`) among the
        trained candidates not started, at most the wall time left."""
        costs = self.costs()
        holding = holding or {}
        left = [c for c in self._trained_left() if c.name not in holding]
        available = self.available(costs) - reserve_s
        capacity = available if slots is None else slots * available - sum(holding.values())
        share = plan_shares(capacity, [self.need(c, costs) for c in left], costs.trained_minimum)[
            left.index(candidate)]
        if share is None:
            where = "the budget" if slots is None else f"the {slots} slots"
            return None, (f"{max(capacity, 0):.0f} s of {where} left; a trained candidate needs at least "
                          f"{costs.trained_minimum:.1f} s")
        return (share if slots is None else min(share, available)) + self.state.prior_elapsed(candidate.name), ""

    def limits(self, candidate: Candidate, share: float, prior: float, before_s: float = 0.0,
               probe: bool = False) -> RunLimits:
        """Step 6 for one recipe run of `candidate` within `share` seconds, `prior` of which it ran before and
        `before_s` of which go before its first step (augsbert's silver pairs). A probe keeps room for the evaluation
        at a step that crosses the limit and for a test (its checkpoint follows), and evaluates at
        --eval-every only; a run's cadence is the one fixed at its first run (kept with its probe), so that a
        resumed run evaluates at the same steps whatever time it has left."""
        costs, cost = self.costs(), self.step_cost(candidate)
        if probe:
            time_limit = max(share - prior - costs.dev_s - costs.test_s, costs.dev_s, 1.0)
            return RunLimits(share, time_limit, costs.load_s, self.probe_cadence(),
                             self.first_judged_step(candidate, time_limit), cost)
        after_s = costs.after_step_s(cost)
        time_limit = max(share - prior - before_s - after_s, costs.dev_s, 1.0)
        probe = self.state.probes.get(candidate.name)
        kept = None if probe is None else probe.eval_every
        every = int(kept) if kept is not None else self.cadence(candidate, time_limit)
        return RunLimits(share, time_limit, after_s, every, self.first_judged_step(candidate, time_limit), cost)

    def extension(self) -> tuple[Candidate, float] | None:
        """Step 4: the cut candidate to extend next and its share of the time left (the meta-embeddings still
        to run keep their reserve); None when none is cut or the time left is below the minimum."""
        costs = self.costs()
        available = self.available(costs) - self.meta_reserve(costs)
        # (a finished run's removed checkpoints leave nothing to resume from)
        cut = [c for c in cut_candidates(self.planned, self.state.results)
               if (Path(self.state.results[c.name].model_path) / CHECKPOINTS).is_dir()]
        if not cut or available < costs.trained_minimum:
            return None
        # The model a candidate keeps is its best evaluated one: steps past its last dev evaluation change
        # nothing, so an extension too short to reach the next evaluation would only cost its overhead.
        while cut:
            share = available / len(cut)
            reaching = [c for c in cut if self._reaches_an_evaluation(c, share, costs)]
            if len(reaching) == len(cut):
                return cut[0], share
            cut = reaching
        return None

    def _reaches_an_evaluation(self, candidate: Candidate, share: float, costs: Costs) -> bool:
        need = to_next_evaluation(self.state.results[candidate.name], self.observed_step_cost(candidate), costs)
        return need is not None and need <= share

    def leftover(self) -> Leftover:
        """Step 7, once every planned candidate is recorded and none is left to extend."""
        costs = self.costs()
        available = max(self.available(costs), 0.0)  # a budget overrun (a tiny corpus's loads) leaves 0 s, not less
        trained = {name: r for name, r in self.state.results.items() if r.trained and r.continues is None}
        if available < costs.trained_minimum:
            return Leftover(available, why="the budget is spent")
        if not trained:
            return Leftover(available, why="no trained candidate finished")
        leader = max(trained, key=lambda name: trained[name].dev)
        result = trained[leader]
        evaluated = [evaluation["step"] for evaluation in result.evaluations or []]
        if was_cut(result):  # not extended (step 5): the time left takes it to no further dev evaluation
            return Leftover(available, why=f"the leading trained candidate, {leader}, was stopped by its time limit "
                                           f"at step {result.steps} of {result.planned_steps}, and the time left "
                                           "does not take it to another dev evaluation")
        if not evaluated or result.best_step != max(evaluated):
            return Leftover(available, why=f"the leading trained candidate, {leader}, scored best on dev at step "
                                           f"{result.best_step}, before its last evaluation (step "
                                           f"{max(evaluated, default=0)}): more steps of it are not measured to help")
        candidate = continuation_of(next(c for c in self.planned if c.name == leader))
        cost = self.observed_step_cost(next(c for c in self.planned if c.name == leader))
        first = min(self.cadence(candidate, available), self.planned_steps(candidate))
        need = first * cost + costs.trained_minimum + (LOADS_AFTER_TRAINING + 1) * costs.load_s
        if available < need:
            return Leftover(available, why=f"continuing {leader} needs about {need:.0f} s to reach its first dev "
                                           f"evaluation; {available:.0f} s are left")
        return Leftover(available, leader, steps=max(first, self.steps_within(candidate, available, cost, costs)))

    def steps_within(self, candidate: Candidate, share: float, seconds_per_step: float, costs: Costs) -> int:
        """The steps of a schedule that ends within `share` seconds (its dev evaluations, and what follows its last
        step, counted), at most the candidate's planned ones: a schedule planned longer than its time is cut with
        its learning rate still high (an adapt run cut SetFit's at step 743 of 2,400, its rate at three quarters of
        its peak)."""
        planned = self.planned_steps(candidate)
        time_limit = share - costs.after_step_s(seconds_per_step) - costs.load_s
        if seconds_per_step <= 0:
            return planned
        fitting = math.floor(time_limit / seconds_per_step)
        every = self.train.eval_every or evaluation_cadence(seconds_per_step, min(planned, max(fitting, 1)),
                                                            time_limit)
        return max(1, min(planned, math.floor(time_limit / (seconds_per_step + costs.dev_s / every))))

    def observed_step_cost(self, candidate: Candidate) -> float:
        """Seconds per step re-measured from the candidate's finished run (its wall time less its evaluations,
        test and loads, per step) when that is below its probe's; the probe's otherwise (tsdae+mnrl: the rungs
        share its wall time, so the probe's)."""
        probed = self.step_cost(candidate)
        result = self.state.results.get(candidate.name)
        if result is None or not result.trained or result.ladder or not result.steps:
            return probed
        costs = self.costs()
        training = (result.wall_s - costs.test_s - len(result.evaluations or []) * costs.dev_s
                    - (LOADS_AFTER_TRAINING + 1) * costs.load_s)
        return min(probed, training / result.steps) if training > 0 else probed

    def need(self, candidate: Candidate, costs: Costs) -> float:
        """The candidate's steps after its probe, at its cost per step, with their evaluations, once per training
        its kind makes in its share (tsdae+mnrl: once per rung of TSDAE's ladder), and the seconds its kind takes
        to make its training data in its share (augsbert: the teacher scoring its pairs)."""
        steps, every = self.planned_steps(candidate), self.cadence(candidate)
        probe = self.state.probes.get(candidate.name)
        if candidate.after is None and probe is not None:
            steps -= probe.steps
        kind = candidate.method.kind
        return (need(steps, self.step_cost(candidate), every, costs, kind.trainings(candidate, self))
                + kind.data_s(candidate, self.inputs, costs))

    def cadence(self, candidate: Candidate, time_limit: float | None = None) -> int:
        """Steps between the candidate's dev evaluations: --eval-every, else from its cost per step (and its
        time limit, once its share is known)."""
        return self.train.eval_every or evaluation_cadence(self.step_cost(candidate), self.planned_steps(candidate),
                                                           time_limit)

    def probe_cadence(self) -> int:
        """--eval-every during a probe; without it, none of the probe's steps is evaluated."""
        return self.train.eval_every or PROBE_STEPS + 1

    def planned_steps(self, candidate: Candidate) -> int:
        """The steps of the candidate's schedule: its epochs of its data, or the continuation's planned to the
        time left (step 7)."""
        leftover = self.state.leftover
        if leftover is not None and leftover.steps is not None and \
                candidate.name == f"{leftover.continued}.{CONTINUED}":
            return leftover.steps
        _, examples = training_data(candidate, self.inputs)
        return recipe_settings(candidate, examples, self.train)["steps"]

    def first_judged_step(self, candidate: Candidate, time_limit: float) -> int:
        """The first step at which racing may stop the candidate: after its warm-up and a tenth of the schedule
        its time limit allows at its probed cost (racing.first_judged_step); before any probe, of its plan."""
        planned = self.planned_steps(candidate)
        cost = self.step_cost(candidate) if self.state.probes else 0.0
        allowed = int(time_limit / cost) if cost > 0 else None
        return first_judged_step(planned, warmup_steps(candidate, planned, self.train), allowed)

    def step_cost(self, candidate: Candidate) -> float:
        """Seconds per step: the probe's; tsdae+mnrl's are those of the mnrl candidate of its start model (the
        method named like its recipe: same recipe, data and model), else the mean of the probes."""
        measured = {name: probe.seconds_per_step for name, probe in self.state.probes.items()}
        return step_cost(candidate.name, measured, f"{candidate.model_key}.{candidate.method.recipe}")

    def snapshots(self, candidate: Candidate) -> list[int]:
        """The TSDAE ladder's steps when tsdae+mnrl starts from this candidate."""
        later = [c for c in self.planned if c.after == candidate.name]
        return ladder_steps(recipe_settings(candidate, len(self.inputs.texts), self.train)["steps"]) \
            if later and candidate.method.name == "tsdae" else []

    def _trained_left(self) -> list[Candidate]:
        return [c for c in self.planned if c.method.kind.trained and c.name not in self.state.results]


def equal_share(remaining: float, trained_left: int, reserve_s: float, costs: Costs) -> Room:
    """An equal share of the `remaining` seconds, less the reserve, for each trained candidate left that fits."""
    available = remaining - reserve_s
    fitting = min(trained_left, math.floor(available / costs.trained_minimum)) if costs.trained_minimum > 0 \
        else trained_left
    if available <= 0 or fitting < 1:
        return Room(None, reserve_s, f"{max(available, 0):.0f} s of the budget left (after {reserve_s:.0f} s kept for "
                                     f"the meta-embeddings); a trained candidate needs at least "
                                     f"{costs.trained_minimum:.1f} s (two dev evaluations and a test evaluation of the "
                                     "start model)")
    return Room(available / fitting, reserve_s)


def need(steps: int, seconds_per_step: float, eval_every: int, costs: Costs, runs: int = 1) -> float:
    """Seconds for `runs` trainings of `steps` steps each (the TSDAE ladder runs MNRL once per rung), their
    dev evaluations, and one test evaluation."""
    return runs * (steps * seconds_per_step + (steps // eval_every + 1) * costs.dev_s) + costs.test_s


def step_cost(name: str, measured: Mapping[str, float], like: str | None = None) -> float:
    """Seconds per step of candidate `name`: its own measurement, else that of `like` (a candidate with the same
    recipe and data), else the mean of those measured so far (0 before any: its evaluations still count)."""
    for key in (name, like):
        if key in measured:
            return measured[key]
    return fmean(measured.values()) if measured else 0.0


def plan_shares(available: float, needs: Sequence[float], minimum: float) -> list[float | None]:
    """The share of each candidate (in priority order) of `available` seconds; None for those skipped."""
    for kept in range(len(needs), 0, -1):
        if kept * minimum <= available:
            return [*_shares(available, needs[:kept], minimum), *[None] * (len(needs) - kept)]
    return [None] * len(needs)


def _shares(available: float, needs: Sequence[float], minimum: float) -> list[float]:
    """Each need's share of `available` seconds (_split), those below `minimum` raised to it and the rest sharing
    what is left (len(needs) * minimum <= available)."""
    raised: set[int] = set()
    while True:
        others = {i: value for i, value in enumerate(needs) if i not in raised}
        shares = {**dict.fromkeys(raised, minimum), **_split(available - minimum * len(raised), others)}
        below = {i for i, share in shares.items() if share < minimum} - raised
        if not below:
            return [shares[i] for i in range(len(needs))]
        raised |= below


def _split(available: float, needs: Mapping[int, float]) -> dict[int, float]:
    """Needs that fit: each its need and more, in proportion. Needs that do not fit: max-min fair, the smallest
    needs in full and the others an equal part of what is left, so that ten epochs of a large corpus do not
    cut a short supervised schedule to the same small fraction as theirs."""
    if not needs:
        return {}
    total = sum(needs.values())
    if total <= available:
        return {i: available * value / total if total > 0 else available / len(needs) for i, value in needs.items()}
    shares, left = {}, available
    for count, i in enumerate(sorted(needs, key=needs.get)):
        shares[i] = min(needs[i], left / (len(needs) - count))
        left -= shares[i]
    return shares


def was_cut(result: CandidateResult) -> bool:
    """Whether the time limit stopped a trained candidate before the end of its planned schedule."""
    return result.trained and result.stopped == TIME_LIMIT and (result.steps or 0) < (result.planned_steps or 0)


def to_next_evaluation(result: CandidateResult, seconds_per_step: float, costs: Costs) -> float | None:
    """Seconds a cut candidate needs to train on to its next dev evaluation, with the evaluations of the trained
    minimum and its model's loads; None when its schedule holds no further evaluation (its cadence unknown: the
    minimum alone)."""
    if not result.eval_every:
        return costs.trained_minimum
    steps, planned = result.steps or 0, result.planned_steps or 0
    if steps >= planned:
        return None
    # The trainer evaluates at its cadence and at the schedule's last step.
    next_evaluation = min((steps // result.eval_every + 1) * result.eval_every, planned)
    # Its deadline keeps the loads after its last step (Costs.after_step_s), and it loads its model first.
    loads = (LOADS_AFTER_TRAINING + 1) * costs.load_s
    return (next_evaluation - steps) * seconds_per_step + costs.trained_minimum + loads


def cut_candidates(planned: list[Candidate], results: Mapping[str, CandidateResult]) -> list[Candidate]:
    """The cut candidates that may be extended, the most promising (highest dev score) first."""
    started_from = {c.after for c in planned if c.after is not None and c.name in results and results[c.name].done}
    cut = [c for c in planned if c.name in results and was_cut(results[c.name]) and c.name not in started_from]
    return sorted(cut, key=lambda c: -results[c.name].dev)
