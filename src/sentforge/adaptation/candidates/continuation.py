"""The leading trained candidate trained on with the time left once every schedule had ended (planning.py,
step 7): not a method of its own, it joins the planned candidates when the time left is spent on it."""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.adaptation.candidates.base import CandidateKind
from sentforge.adaptation.method import CONTINUED, Candidate
from sentforge.adaptation.result import CandidateResult, TrainedResult
from sentforge.adaptation.runner import RecipeRun, RunContext


@dataclass(frozen=True)
class Continuation(CandidateKind):
    """The leading trained candidate trained on from its kept model with the time left once every schedule had
    ended (`candidate` is method.continuation_of's): a new schedule of its recipe and data, planned to end within
    the time left (planning.Planner.steps_within), raced like every trained candidate. Selection prefers it to
    the candidate it continues only when its dev gain over it is significant (select.py)."""

    result_type = TrainedResult
    candidate: Candidate

    @property
    def continues(self) -> str:
        """The candidate it continues."""
        return self.candidate.name.removesuffix(f".{CONTINUED}")

    def run(self, context: RunContext) -> CandidateResult:
        earlier = context.state.results[self.continues]
        share, steps = context.plan.available(), context.state.leftover.steps
        run = RecipeRun(self.candidate, earlier.model_path, context.state.run_dir(self.candidate.name), share,
                        options=None if steps is None else {"steps": steps})
        result = run.train(context)
        if not result.done:
            return result
        return result.update(continues=self.continues, commands=earlier.commands + result.commands[-1:],
                             share_s=round(share, 1))
