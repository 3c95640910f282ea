"""TSDAE then a supervised recipe: `tsdae+mnrl` (MNRL on the labelled positives) and `tsdae+setfit` (SetFit on
the class-labelled texts) from the TSDAE candidate's ladder, TSDAE as domain pre-training."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from sentforge.adaptation.candidates.base import DiskUse
from sentforge.adaptation.candidates.recipe import TrainedRecipe
from sentforge.adaptation.method import Candidate, Method
from sentforge.adaptation.planning import Planner
from sentforge.adaptation.result import SKIPPED, CandidateResult, LadderRung
from sentforge.adaptation.runner import RecipeRun, RunContext
from sentforge.adaptation.trained import ladder_steps, recipe_settings, rung_name, rungs


@dataclass(frozen=True)
class TsdaeLadder(TrainedRecipe):
    """TSDAE then MNRL (or SetFit), the TSDAE length chosen by what it is for: the dev score after MNRL. MNRL runs
    from each rung of TSDAE's ladder (trained.LADDER_STEPS) and from TSDAE's kept checkpoint, shortest TSDAE first,
    sharing the candidate's time; the rungs are compared at the MNRL steps the first one reached, and the best
    on dev among those that reached them is the candidate (the shorter TSDAE on a tie)."""

    def within(self, context: RunContext, share: float) -> CandidateResult:
        state, after = context.state, self.candidate.after
        before = state.results.get(after)
        if before is None or not before.done:
            return self.candidate.outcome(SKIPPED, reason=f"it starts from {after}, which did not run")
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

    @classmethod
    def trainings(cls, candidate: Candidate, plan: Planner) -> int:
        """One run per rung of the TSDAE ladder: those it made once it has run, else those planned, and one
        from TSDAE's kept checkpoint."""
        before = plan.state.results.get(candidate.after)
        if before is not None and before.done:
            return len(rungs(before, plan.state.run_dir(candidate.after)))
        return len(plan.snapshots(next(c for c in plan.planned if c.name == candidate.after))) + 1

    @classmethod
    def disk(cls, candidate: Candidate, plan: Planner) -> DiskUse:
        """An MNRL run per rung of the TSDAE ladder and from TSDAE's kept checkpoint, and the ladder's
        snapshots."""
        tsdae = next(c for c in plan.planned if c.name == candidate.after)
        rungs_planned = len(ladder_steps(recipe_settings(tsdae, len(plan.inputs.texts), plan.train)["steps"]))
        return DiskUse(runs=rungs_planned + 1, snapshots=rungs_planned)


METHODS = (Method("tsdae+mnrl", TsdaeLadder, 4, "MNRL on the labelled positives from the TSDAE candidate (TSDAE as "
                                                "domain pre-training)", recipe="mnrl", data="positives",
                  after="tsdae"),
           Method("tsdae+setfit", TsdaeLadder, 5, "SetFit on the class-labelled texts from the TSDAE candidate (TSDAE "
                                                  "as domain pre-training)", recipe="setfit", data="classes",
                  after="tsdae", epochs=1))
