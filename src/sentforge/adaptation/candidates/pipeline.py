"""The leading bi-encoder with the --cross-encoder re-ranking its top K: what users deploy when a cross-encoder
is better than the bi-encoder alone, chosen by the same dev rule as every candidate, at its cost per query."""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.adaptation.candidates.base import CandidateKind
from sentforge.adaptation.intervals import save_evaluation_items
from sentforge.adaptation.method import Candidate, Method
from sentforge.adaptation.pipeline import WEIGHTS, ScoreCache, choose_weight, pair_seconds, rerank_seconds, timing_pairs
from sentforge.adaptation.planning import Costs
from sentforge.adaptation.result import DONE, NOT_APPLICABLE, SKIPPED, CandidateResult, PipelineResult
from sentforge.adaptation.runner import RunContext
from sentforge.adaptation.trained import timed
from sentforge.evaluation.own.pairs import LabelledPairsTask
from sentforge.harness.dev_scores import save_items

TOP_K = 10  # the first stage's candidates the cross-encoder re-scores per query (`sentforge eval --rerank-top`)


@dataclass(frozen=True)
class RerankPipeline(CandidateKind):
    """The finished encoder candidate with the highest dev score, its top TOP_K per query re-ranked by the
    cross-encoder (on labelled pairs: each pair scored by both), the weight of the cross-encoder's score chosen on
    dev (pipeline.py). It runs when a --cross-encoder is given, after the meta-embeddings and before distil and
    static, so that what they take of the time left is not the time kept for it."""

    result_type = PipelineResult
    per_model = False
    combines = True
    by_default = False  # a default with a --cross-encoder (candidates/__init__.py)
    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        from sentforge.cross_encoder import load_cross_encoder
        from sentforge.evaluation.reranker import Reranked

        state, inputs = context.state, context.inputs
        device = context.train.device
        cross_encoder = load_cross_encoder(inputs.cross_encoder, device=device)
        if not inputs.dev.supports(Reranked(None, cross_encoder)):
            return self.candidate.outcome(NOT_APPLICABLE, reason=f"the dev set {inputs.dev.name} is not ranked "
                                                                 "lists or labelled pairs: nothing to re-rank")
        leader = leading_bi_encoder(state.results)
        first_result = state.results[leader]
        pairs_per_query = 1 if isinstance(inputs.dev, LabelledPairsTask) else TOP_K
        # Timed again: the machine's load may have changed since the start.
        per_pair = pair_seconds(cross_encoder, timing_pairs(inputs.dev, inputs.labelled_pairs()))
        needed = self._needed(context.plan.costs(), rerank_seconds(per_pair, inputs.dev, inputs.test))
        available = context.plan.available()
        if available < needed:
            return self.candidate.outcome(SKIPPED, reason=f"{max(available, 0):.0f} s of the budget left; re-ranking "
                                                          f"the dev and test data needs about {needed:.0f} s")
        prior = state.prior_elapsed(self.candidate.name)

        def rerank() -> CandidateResult:
            pair_scores = ScoreCache(cross_encoder)
            weight, items = choose_weight(inputs.dev, first_result.load(device), pair_scores, TOP_K)
            for index, scores in enumerate(items):
                save_evaluation_items(state.output, self.candidate.name, index, scores)
            chosen = items[WEIGHTS.index(weight)]
            save_items(state.output, self.candidate.name, chosen)
            return self.candidate.outcome(
                DONE, dev=float(chosen.score()), first_stage=leader, first_stage_path=str(first_result.model_path),
                cross_encoder=str(inputs.cross_encoder), top_k=TOP_K, weight=weight,
                weights=[{"weight": w, "dev": round(float(s.score()), 4)} for w, s in zip(WEIGHTS, items)],
                pairs_per_query=pairs_per_query,
                pairs_per_second=pair_scores.pairs_per_second, evaluations=[])
        return timed(rerank, prior)

    @classmethod
    def timed_encoders(cls, meta_members: int) -> int:
        # The cross-encoder, and a first stage that may be a meta-embedding of its members: the most it runs.
        return max(meta_members, 1) + 1

    @classmethod
    def reserve_s(cls, costs: Costs, meta_members: int, texts: int) -> float:
        return cls._needed(costs, costs.rerank_s)

    @staticmethod
    def _needed(costs: Costs, rerank_s: float) -> float:
        """The cross-encoder's scoring of the dev and test data, and the first stage's (about two of the start
        model's evaluations: its dev and test, and the per-query speed passes)."""
        return rerank_s + 2 * (costs.dev_s + costs.test_s)


def leading_bi_encoder(results: dict[str, CandidateResult]) -> str:
    """The finished candidate that encodes (a start model, a trained one, a meta-embedding or a static model) with
    the highest dev score, the first on a tie."""
    encoders = {name: r for name, r in results.items() if r.done and not isinstance(r, PipelineResult)}
    return max(encoders, key=lambda name: encoders[name].dev)


METHODS = (Method("rerank", RerankPipeline, 17, "with a --cross-encoder: the leading candidate with the "
                                               "cross-encoder re-ranking its top 10 per query (its score interpolated "
                                               "with the first stage's, the weight chosen on dev)", data="teacher"),)
