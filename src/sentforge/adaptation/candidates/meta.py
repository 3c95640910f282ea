"""Meta-embeddings of the best candidates (and the --member encoders): concatenation and GCCA."""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.adaptation.candidates.base import CandidateKind, DiskUse
from sentforge.adaptation.meta import MAX_FIT_TEXTS, member_specs, run_meta
from sentforge.adaptation.method import Candidate, Method
from sentforge.adaptation.planning import Costs, Planner
from sentforge.adaptation.result import DONE, SKIPPED, CandidateResult, MetaResult
from sentforge.adaptation.runner import RunContext
from sentforge.adaptation.trained import timed


@dataclass(frozen=True)
class MetaEmbedding(CandidateKind):
    """The best candidates' models (and the --member encoders) combined by a sentforge.meta method, fitted on
    the unlabelled texts (meta.py), when the time left holds the members' encoding."""

    result_type = MetaResult
    per_model = False
    combines = True
    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        state, inputs = context.state, context.inputs
        members = member_specs(state.results, context.meta_members, list(context.members))
        if len(members) < 2:
            return self.candidate.outcome(SKIPPED, reason=f"a meta-embedding needs at least 2 members; "
                                                          f"{len(members)} candidate(s) and --member encoder(s) "
                                                          "available")
        estimate = context.plan.costs().meta_estimate(len(members), min(len(inputs.texts), MAX_FIT_TEXTS))
        remaining = context.plan.available()
        if remaining < estimate:
            return self.candidate.outcome(SKIPPED, reason=f"{max(remaining, 0):.0f} s of the budget left; it "
                                                          f"needs about {estimate:.0f} s")
        run_dir = state.run_dir(self.candidate.name)
        return timed(lambda: self.candidate.outcome(DONE, model_path=str(run_dir), **run_meta(
            self.candidate.method.meta, members, inputs.unlabelled, inputs.dev, run_dir, state.output / "cache",
            context.train.device, context.train.seed)), state.prior_elapsed(self.candidate.name))

    @classmethod
    def timed_encoders(cls, meta_members: int) -> int:
        return meta_members

    @classmethod
    def reserve_s(cls, costs: Costs, meta_members: int, texts: int) -> float:
        return costs.meta_estimate(meta_members, min(texts, MAX_FIT_TEXTS))

    @classmethod
    def disk(cls, candidate: Candidate, plan: Planner) -> DiskUse:
        return DiskUse(metas=1)


METHODS = (
    Method("meta-concat", MetaEmbedding, 15, "concatenation of the best candidates' vectors (and the --member "
                                            "encoders)", meta="concat"),
    Method("meta-gcca", MetaEmbedding, 16, "GCCA of the best candidates (and the --member encoders), fitted on the "
                                          "unlabelled texts", meta="gcca"),
)
