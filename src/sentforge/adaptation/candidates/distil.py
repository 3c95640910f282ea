"""The leading meta-embedding distilled into its best member: one sentence-transformers model."""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.adaptation.candidates.base import CandidateKind, DiskUse
from sentforge.adaptation.method import Candidate, Method
from sentforge.adaptation.planning import Planner
from sentforge.adaptation.candidates.pipeline import leading_bi_encoder
from sentforge.adaptation.result import SKIPPED, CandidateResult, DistilResult, MetaResult
from sentforge.adaptation.runner import RecipeRun, RunContext


@dataclass(frozen=True)
class Distillation(CandidateKind):
    """A meta-embedding needs all its members at inference and loads only in sentforge. When one leads on dev,
    its best member (by dev score) learns the meta vectors of the unlabelled texts by MSE, with a Dense layer
    to the meta dimension (the `distil` recipe): one sentence-transformers model, scored like every other
    candidate. The teacher encodes the texts as the batches reach them, within the share."""

    result_type = DistilResult
    per_model = False
    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        state = context.state
        meta, member, why = distil_plan(state.results)
        if meta is None:
            return self.candidate.outcome(SKIPPED, reason=why)
        costs = context.plan.costs()
        available = context.plan.available(costs)
        if available < costs.trained_minimum:
            return self.candidate.outcome(SKIPPED, reason=f"{max(available, 0):.0f} s of the budget left; training "
                                                          f"needs at least {costs.trained_minimum:.1f} s")
        # The teacher encodes each text when a batch first needs it (objectives/distillation.py), inside the
        # trainer's time limit: a short share encodes only the texts it trains on.
        run = RecipeRun(self.candidate, state.results[member].model_path, state.run_dir(self.candidate.name),
                        available, options={"teacher": state.results[meta].model_path})
        result = run.train(context).update(share_s=round(available, 1))
        return result.update(teacher=meta, member=member) if result.done else result

    @classmethod
    def timed_encoders(cls, meta_members: int) -> int:
        return 1

    @classmethod
    def disk(cls, candidate: Candidate, plan: Planner) -> DiskUse:
        return DiskUse(runs=1)


def distil_plan(results: dict[str, CandidateResult]) -> tuple[str | None, str | None, str]:
    """(the meta-embedding to distil, the member candidate to start from, why not when they are None)."""
    done = {name: r for name, r in results.items() if r.done}
    leader = leading_bi_encoder(results)
    if not isinstance(done[leader], MetaResult):
        return None, None, f"{leader}, not a meta-embedding, leads on dev"
    members = [name for name in done[leader].members or [] if name in done]
    if not members:
        return None, None, f"{leader} has no trained or start candidate among its members"
    return leader, max(members, key=lambda name: done[name].dev), ""


METHODS = (Method("distil", Distillation, 18, "when a meta-embedding leads on dev: its best member plus a Dense layer "
                                             "trained by MSE to the meta vectors on the unlabelled texts (one "
                                             "sentence-transformers model)", recipe="distil", data="unlabelled"),)
