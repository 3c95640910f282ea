"""The pass over the planned candidates (`run_candidates`): each runs by its kind (candidates/) in turn and its
result is recorded as it finishes; the candidates the time limit cut are then extended, and the time still left
goes to the leader's continuation when its dev evaluations say more steps may help (planning.py, step 7).

A trained candidate first probes the trained candidates still to run, then trains within its planned share of
the time left (planning.py), its recipe run raced at its dev evaluations (runner.RecipeRun, racing.py).
"""

from __future__ import annotations

import logging

from tqdm.auto import tqdm

from sentforge.adaptation.candidates import kind_of, run_candidate
from sentforge.adaptation.candidates.continuation import Continuation
from sentforge.adaptation.method import Candidate, continuation_of
from sentforge.adaptation.state_records import Leftover
from sentforge.adaptation.runner import RunContext, record
from sentforge.harness.dev_scores import items_path

logger = logging.getLogger(__name__)


def run_candidates(context: RunContext, planned: list[Candidate], show_progress: bool | None) -> None:
    """Run and record every planned candidate not recorded yet, in order; the meta-embeddings combine the
    trained candidates as extended, and what is left after the pass extends the cut ones again, then goes to
    the leader's continuation (which joins `planned`)."""
    state = context.state
    progress = tqdm(planned, desc="adapt", unit="candidate", disable=show_progress is False, dynamic_ncols=True)
    for candidate in progress:
        if candidate.method.kind.combines:
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
    if state.leftover is None:
        # As saved (its seconds rounded), so that this call and a rerun read the same decision.
        state.leftover = Leftover.from_json(context.plan.leftover().to_json())
        state.save()
    leftover = state.leftover
    if leftover.continued is None:
        logger.info("%.0f s of the budget left, not spent: %s", leftover.seconds, leftover.why)
        return
    candidate = continuation_of(next(c for c in planned if c.name == leftover.continued))
    planned.append(candidate)
    if candidate.name in state.results:
        return
    logger.info("%s: %.0f s of the budget left once every schedule had ended: %s trained on (its best dev "
                "evaluation was its last)", candidate.name, leftover.seconds, leftover.continued)
    record(context, candidate, Continuation(candidate).run_or_fail(context))


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
