"""The candidate kinds of an adapt run, each declared as a small class whose `run(context)` gives its result, as
MTEB declares its tasks: the start model scored (`StartModel`), a recipe trained (`TrainedRecipe`), TSDAE then
MNRL over the TSDAE ladder (`TsdaeLadder`), a meta-embedding fitted (`MetaEmbedding`), the leading
meta-embedding distilled (`Distillation`), the leading trained candidate continued with the time left
(`Continuation`). `run_candidates` is the loop over the planned candidates: each runs in turn and its result is
recorded as it finishes; the candidates the time limit cut are then extended, and the time still left goes to
the continuation when the leader's dev evaluations say more steps may help (planning.py, step 7).

A trained candidate first probes the trained candidates still to run, then trains within its planned share of
the time left (planning.py), its recipe run raced at its dev evaluations (runner.RecipeRun, racing.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from sentforge.adaptation.candidates import Candidate, continuation_of
from sentforge.adaptation.meta import MAX_FIT_TEXTS, member_specs, run_meta
from sentforge.adaptation.planning import Leftover, after_teacher
from sentforge.adaptation.result import DONE, SKIPPED, CandidateResult, LadderRung
from sentforge.adaptation.runner import RecipeRun, RunContext, failed, outcome, probe_pending, record
from sentforge.adaptation.trained import rung_name, rungs, timed
from sentforge.support.errors import SentforgeError
from sentforge.harness.dev_scores import items_path, main_score, metric_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StartModel:
    """The start model unchanged, scored on dev (and test); its evaluations' timings are the costs the time plan
    is measured on."""

    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        from sentforge.loading import load

        inputs, started = context.inputs, time.monotonic()
        encoder = load(self.candidate.model, device=context.train.device)
        load_s = time.monotonic() - started
        value, dev_s = main_score(inputs.dev, encoder)
        result = outcome(self.candidate, DONE, dev=value, model_path=str(self.candidate.model), evaluations=[])
        test_s = 0.0
        if inputs.test is not None:
            test, test_s = main_score(inputs.test, encoder)
            result = result.update(test=test, test_metric=metric_of(inputs.test))
        context.state.measured_start({"dev_s": dev_s, "test_s": test_s,
                                      "per_text_s": dev_s / (len(set(inputs.dev.texts())) or 1), "load_s": load_s})
        return result.update(wall_s=round(time.monotonic() - started, 2))


@dataclass(frozen=True)
class TrainedRecipe:
    """A recipe trained from the start model: the pending candidates probed, this one's share of the time left
    planned, one recipe run within it; extended from its last checkpoint when the time limit cut it."""

    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        name, plan = self.candidate.name, context.plan
        room = plan.room()
        if room.equal_s is None:
            return outcome(self.candidate, SKIPPED, reason=room.why)
        probe_pending(context, room.equal_s, room.reserve_s)
        if name in context.state.results:  # it failed in its probe
            return context.state.results[name]
        share, why = plan.share(self.candidate, room.reserve_s)
        if share is None:
            return outcome(self.candidate, SKIPPED, reason=why)
        return self.within(context, share)

    def within(self, context: RunContext, share: float) -> CandidateResult:
        """The candidate trained within `share` seconds."""
        return self._recipe_run(context, share).train(context).update(share_s=round(share, 1))

    def extend(self, context: RunContext, share: float) -> CandidateResult:
        """The run the time limit cut, continued for `share` seconds from its last checkpoint."""
        return self._recipe_run(context, share, extend=True).train(context).update(share_s=round(share, 1))

    def _recipe_run(self, context: RunContext, share: float, **settings) -> RecipeRun:
        name = self.candidate.name
        return RecipeRun(self.candidate, self.candidate.model, context.state.run_dir(name), share,
                         snapshots=tuple(context.plan.snapshots(self.candidate)), **settings)


@dataclass(frozen=True)
class TsdaeLadder(TrainedRecipe):
    """TSDAE then MNRL, the TSDAE length chosen by what it is for: the dev score after MNRL. MNRL runs from each
    rung of TSDAE's ladder (trained.LADDER_STEPS) and from TSDAE's kept checkpoint, shortest TSDAE first,
    sharing the candidate's time; the rungs are compared at the MNRL steps the first one reached, and the best
    on dev among those that reached them is the candidate (the shorter TSDAE on a tie)."""

    def within(self, context: RunContext, share: float) -> CandidateResult:
        state, after = context.state, self.candidate.after
        before = state.results.get(after)
        if before is None or not before.done:
            return outcome(self.candidate, SKIPPED, reason=f"it starts from {after}, which did not run")
        started, prior = time.monotonic(), state.prior_elapsed(self.candidate.name)
        steps = rungs(before, state.run_dir(after))
        tried: list[CandidateResult] = []
        for index, (after_steps, start) in enumerate(steps):
            left = share - (time.monotonic() - started)
            # A recipe run takes the candidate's time so far off its share: the earlier rungs' time is in it.
            rung_share = state.prior_elapsed(self.candidate.name) + left / (len(steps) - index)
            run = RecipeRun(self.candidate, start, state.run_dir(self.candidate.name) / rung_name(after_steps),
                            rung_share, stop_at=tried[0].steps if tried else None)
            tried.append(run.train(context).update(after_steps=after_steps))
        compared = [r for r in tried if r.steps == tried[0].steps]  # a rung cut short is not compared
        best = max(compared, key=lambda r: r.dev)  # the first, fewest TSDAE steps, on a tie
        # Each rung's wall_s holds the earlier rungs' time too (its prior): the ladder's time is measured here.
        wall_s = round(prior + time.monotonic() - started, 2)
        return best.update(ladder=[LadderRung(r.after_steps, r.dev, r.steps, r.race) for r in tried],
                           chain_steps=best.after_steps + best.steps, wall_s=wall_s,
                           commands=before.commands + best.commands, share_s=round(share, 1))

    def extend(self, context: RunContext, share: float) -> CandidateResult:
        """The rung it kept, continued."""
        earlier = context.state.results[self.candidate.name]
        result = RecipeRun(self.candidate, earlier.start, Path(earlier.model_path), share, extend=True).train(context)
        return result.update(chain_steps=earlier.after_steps + result.steps, after_steps=earlier.after_steps,
                             ladder=earlier.ladder, share_s=round(share, 1))


@dataclass(frozen=True)
class MetaEmbedding:
    """The best candidates' models (and the --member encoders) combined by a sentforge.meta method, fitted on
    the unlabelled texts (meta.py), when the time left holds the members' encoding."""

    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        state, inputs = context.state, context.inputs
        members = member_specs(state.results, context.meta_members, list(context.members))
        if len(members) < 2:
            return outcome(self.candidate, SKIPPED, reason=f"a meta-embedding needs at least 2 members; "
                                                           f"{len(members)} candidate(s) and --member encoder(s) "
                                                           "available")
        estimate = context.plan.costs().meta_estimate(len(members), min(len(inputs.texts), MAX_FIT_TEXTS))
        remaining = context.plan.available()
        if remaining < estimate:
            return outcome(self.candidate, SKIPPED, reason=f"{max(remaining, 0):.0f} s of the budget left; it "
                                                           f"needs about {estimate:.0f} s")
        run_dir = state.run_dir(self.candidate.name)
        return timed(lambda: outcome(self.candidate, DONE, model_path=str(run_dir), **run_meta(
            self.candidate.method.meta, members, inputs.unlabelled, inputs.dev, run_dir, state.output / "cache",
            context.train.device, context.train.seed)), state.prior_elapsed(self.candidate.name))


@dataclass(frozen=True)
class Distillation:
    """A meta-embedding needs all its members at inference and loads only in sentforge. When one leads on dev,
    its best member (by dev score) learns the meta vectors of the unlabelled texts by MSE, with a Dense layer
    to the meta dimension (the `distil` recipe): one sentence-transformers model, scored like every other
    candidate. Its share holds the teacher's encoding of the texts."""

    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        state = context.state
        meta, member, why = distil_plan(state.results)
        if meta is None:
            return outcome(self.candidate, SKIPPED, reason=why)
        costs, texts = context.plan.costs(), len(context.inputs.texts)
        teacher_s = costs.encode_estimate(len(state.results[meta].members or []), texts)
        available = context.plan.available(costs)
        share, why = after_teacher(available, teacher_s, costs.trained_minimum, texts)
        if share is None:
            return outcome(self.candidate, SKIPPED, reason=why)
        # Its share holds the teacher's encoding: the deadline counts it, whatever it takes.
        run = RecipeRun(self.candidate, state.results[member].model_path, state.run_dir(self.candidate.name),
                        available, options={"teacher": state.results[meta].model_path}, before_s=teacher_s)
        result = run.train(context).update(share_s=round(available, 1))
        return result.update(teacher=meta, member=member) if result.done else result


@dataclass(frozen=True)
class Continuation:
    """The leading trained candidate (`continues`) trained on from its kept model with the time left once every
    schedule had ended: a new schedule of its recipe, data and length (more epochs), raced like every trained
    candidate. Selection prefers it to the candidate it continues only when its dev gain over it is significant
    (select.py)."""

    candidate: Candidate
    continues: str

    def run(self, context: RunContext) -> CandidateResult:
        earlier = context.state.results[self.continues]
        share = context.plan.available()
        run = RecipeRun(self.candidate, earlier.model_path, context.state.run_dir(self.candidate.name), share)
        result = run.train(context)
        if not result.done:
            return result
        return result.update(continues=self.continues, commands=earlier.commands + result.commands[-1:],
                             share_s=round(share, 1))


def distil_plan(results: dict[str, CandidateResult]) -> tuple[str | None, str | None, str]:
    """(the meta-embedding to distil, the member candidate to start from, why not when they are None)."""
    done = {name: r for name, r in results.items() if r.done}
    leader = max(done, key=lambda name: done[name].dev)
    if done[leader].kind != "meta":
        return None, None, f"{leader}, not a meta-embedding, leads on dev"
    members = [name for name in done[leader].members or [] if name in done]
    if not members:
        return None, None, f"{leader} has no trained or start candidate among its members"
    return leader, max(members, key=lambda name: done[name].dev), ""


KINDS = {"start": StartModel, "train": TrainedRecipe, "meta": MetaEmbedding, "distil": Distillation}


def kind_of(candidate: Candidate) -> StartModel | TrainedRecipe | MetaEmbedding | Distillation:
    """The kind that runs the candidate: a trained one that starts from another candidate is the TSDAE ladder."""
    return TsdaeLadder(candidate) if candidate.after is not None else KINDS[candidate.method.kind](candidate)


def run_candidate(context: RunContext, candidate: Candidate) -> CandidateResult:
    """The candidate's result; a SentforgeError (a recipe that cannot train on this data) fails it alone, but
    stops the run for a start model (a bad --model): every choice is measured against it."""
    try:
        return kind_of(candidate).run(context)
    except SentforgeError as err:
        if candidate.method.kind == "start":
            raise
        return failed(context, candidate, err)


def run_candidates(context: RunContext, planned: list[Candidate], show_progress: bool | None) -> None:
    """Run and record every planned candidate not recorded yet, in order; the meta-embeddings combine the
    trained candidates as extended, and what is left after the pass extends the cut ones again, then goes to
    the leader's continuation (which joins `planned`)."""
    state = context.state
    progress = tqdm(planned, desc="adapt", unit="candidate", disable=show_progress is False, dynamic_ncols=True)
    for candidate in progress:
        if candidate.method.kind == "meta":
            extend_cut(context)
        progress.set_postfix_str(candidate.name, refresh=True)
        if candidate.name in state.results:
            logger.info("%s: %s earlier, reused", candidate.name, state.results[candidate.name].status)
            continue
        record(context, candidate, run_candidate(context, candidate))
    extend_cut(context)
    spend_leftover(context, planned)
    progress.close()


def spend_leftover(context: RunContext, planned: list[Candidate]) -> None:
    """Spend the time left once every candidate has run and none is left to extend on the leader's continuation
    (planning.Planner.leftover), which joins `planned`; the decision is kept in the state, so a rerun resumes
    the same continuation."""
    state = context.state
    if not state.leftover:
        state.leftover = context.plan.leftover().to_json()
        state.save()
    leftover = Leftover(**state.leftover)
    if leftover.continued is None:
        logger.info("%.0f s of the budget left, not spent: %s", leftover.seconds, leftover.why)
        return
    candidate = continuation_of(next(c for c in planned if c.name == leftover.continued))
    planned.append(candidate)
    if candidate.name in state.results:
        return
    logger.info("%s: %.0f s of the budget left once every schedule had ended: %s trained on (its best dev "
                "evaluation was its last)", candidate.name, leftover.seconds, leftover.continued)
    try:
        result = Continuation(candidate, leftover.continued).run(context)
    except SentforgeError as err:
        result = failed(context, candidate, err)
    record(context, candidate, result)


def extend_cut(context: RunContext) -> None:
    """Resume the candidates the time limit cut with the time left (planning.py)."""
    state = context.state
    while (extension := context.plan.extension()) is not None:
        candidate, share = extension
        earlier = state.results[candidate.name]
        logger.info("%s: extended with %.0f s of the budget left (stopped at step %d of %d)", candidate.name,
                    share, earlier.steps, earlier.planned_steps)
        result = kind_of(candidate).extend(context, share)
        items_path(state.output, candidate.name).unlink(missing_ok=True)
        record(context, candidate, result.update(
            commands=earlier.commands + result.commands[-1:], wall_s=round(earlier.wall_s + result.wall_s, 2),
            share_s=round((earlier.share_s or 0.0) + result.share_s, 1), extensions=(earlier.extensions or 0) + 1))
        if result.steps == earlier.steps:  # no step fitted: give up rather than loop
            return
