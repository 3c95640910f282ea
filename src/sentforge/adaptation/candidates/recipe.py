"""A recipe of `sentforge.recipes` trained from the start model: TSDAE, supervised MNRL, SetFit, PAUSE, SimCSE,
CT."""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.adaptation.candidates.base import CandidateKind, DiskUse
from sentforge.adaptation.method import Candidate, Method
from sentforge.adaptation.planning import Planner
from sentforge.adaptation.result import SKIPPED, CandidateResult, TrainedResult
from sentforge.adaptation.runner import RecipeRun, RunContext, probe_pending


@dataclass(frozen=True)
class TrainedRecipe(CandidateKind):
    """A recipe trained from the start model: the pending candidates probed, this one's share of the time left
    planned, one recipe run within it (runner.RecipeRun, raced at its dev evaluations: racing.py); extended from
    its last checkpoint when the time limit cut it."""

    result_type = TrainedResult
    trained = True
    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        name, plan = self.candidate.name, context.plan
        room = plan.room()
        if room.equal_s is None:
            return self.candidate.outcome(SKIPPED, reason=room.why)
        probe_pending(context, room.equal_s, room.reserve_s)
        if name in context.state.results:  # it failed in its probe
            return context.state.results[name]
        share, why = plan.share(self.candidate, room.reserve_s)
        if share is None:
            return self.candidate.outcome(SKIPPED, reason=why)
        return self.within(context, share)

    def within(self, context: RunContext, share: float) -> CandidateResult:
        """The candidate trained within `share` seconds."""
        return self._recipe_run(context, share).train(context).update(share_s=round(share, 1))

    def extend(self, context: RunContext, share: float) -> CandidateResult:
        """The run the time limit cut, continued for `share` seconds from its last checkpoint."""
        return self._recipe_run(context, share, extend=True).train(context).update(share_s=round(share, 1))

    def start(self, context: RunContext) -> str | None:
        """The model its run starts from: the start model (a kind whose method starts `after` another
        candidate: that candidate's model; None while it has none)."""
        return self.candidate.model

    def _recipe_run(self, context: RunContext, share: float, **settings) -> RecipeRun:
        name = self.candidate.name
        return RecipeRun(self.candidate, self.start(context), context.state.run_dir(name), share,
                         snapshots=tuple(context.plan.snapshots(self.candidate)), **settings)

    @classmethod
    def disk(cls, candidate: Candidate, plan: Planner) -> DiskUse:
        return DiskUse(runs=1)


METHODS = (
    Method("tsdae", TrainedRecipe, 1, "TSDAE (deletion 0.6, tied decoder, lr 3e-5, batch 8) on the unlabelled texts",
           recipe="tsdae", data="unlabelled"),
    Method("mnrl", TrainedRecipe, 2, "supervised multiple-negatives ranking on the labelled positive pairs (hard "
                                     "negatives when given)", recipe="mnrl", data="positives"),
    Method("setfit", TrainedRecipe, 3, "SetFit on the class-labelled texts (pairs of one class and of two, "
                                       "cosine loss, 20 rounds, lr 2e-5, batch 16, one epoch)", recipe="setfit",
           data="classes", epochs=1),
    Method("pause", TrainedRecipe, 6, "PAUSE on the partially labelled pairs", recipe="pause", data="partial"),
    Method("simcse", TrainedRecipe, 7, "unsupervised SimCSE on the unlabelled texts", recipe="simcse",
           data="unlabelled"),
    Method("ct", TrainedRecipe, 8, "Contrastive Tension on the unlabelled texts", recipe="ct", data="unlabelled"),
)
