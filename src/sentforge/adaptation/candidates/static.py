"""A static model (one vector per token) distilled from the leading encoder: the fastest point of the front."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from sentforge.adaptation.candidates.base import CandidateKind
from sentforge.adaptation.method import Candidate, Method
from sentforge.adaptation.planning import Costs
from sentforge.adaptation.result import DONE, SKIPPED, CandidateResult, StartResult, StaticResult
from sentforge.adaptation.runner import RunContext
from sentforge.adaptation.trained import timed
from sentforge.harness.dev_scores import main_score

_TOKEN_SEQUENCE = 3  # what the distillation encodes per token: [CLS], the token, [SEP]


@dataclass(frozen=True)
class StaticModel(CandidateKind):
    """Every token of the leading encoder's vocabulary through that encoder (model2vec's distillation), then the
    token vectors fitted to its vectors of the unlabelled texts (scale/static_distil.py), within the time the
    other candidates left: a model that encodes many times faster than a transformer on a CPU, for a bound
    (--min-texts-per-second) that no transformer meets. It runs only when named in --candidates."""

    result_type = StaticResult
    per_model = False
    combines = True  # it distils the leader once the cut candidates are extended
    by_default = False
    outruns_start = True
    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        from sentforge.scale.static_distil import distil_static

        state, inputs = context.state, context.inputs
        leader = leading_encoder(state.results)
        started_prior = state.prior_elapsed(self.candidate.name)
        encoder = state.results[leader].load(context.train.device)
        vocabulary = len(getattr(encoder[0], "tokenizer", ()))
        costs = context.plan.costs()
        scoring_s = costs.dev_s + costs.test_s
        needed = distillation_estimate(encoder, costs, vocabulary, inputs.dev.texts()) + scoring_s
        available = context.plan.available(costs)
        if available < needed:
            return self.candidate.outcome(SKIPPED, reason=f"{max(available, 0):.0f} s of the budget left; the static "
                                                          f"model of {leader} needs about {needed:.0f} s (its "
                                                          f"{vocabulary} vocabulary tokens through it, then scoring)")
        run_dir, limit = state.run_dir(self.candidate.name), available - scoring_s
        seed = context.train.seed

        def distil() -> CandidateResult:
            made = distil_static(encoder, run_dir, texts=inputs.texts, time_limit=limit, device=context.train.device,
                                 overwrite=True, seed=seed)
            dev, _ = main_score(inputs.dev, made.encoder)
            command = ["sentforge", "distil", "--static", "--model", str(state.results[leader].model_path),
                       "--texts", str(inputs.unlabelled), "--time-limit", f"{limit:.0f}", "--output", str(run_dir),
                       "--seed", str(seed)]
            return self.candidate.outcome(DONE, model_path=str(run_dir), dev=dev, distilled_from=leader,
                                          dim=made.encoder.dim, fitted_texts=made.fitted_texts,
                                          time_limit_s=round(limit, 1), commands=[shlex.join(command)], evaluations=[])
        return timed(distil, started_prior)

    @classmethod
    def timed_encoders(cls, meta_members: int) -> int:
        return 1


def distillation_estimate(encoder, costs: Costs, vocabulary: int, dev_texts: list[str]) -> float:
    """Seconds to put every vocabulary token through `encoder`, each alone between its two special tokens: the
    start model's cost per dev text (its scoring included), scaled by tokens (the dev texts' mean length, at most
    the maximum length). 0 for an encoder without a tokenizer, which the distillation refuses."""
    backbone = encoder[0]
    if not hasattr(backbone, "tokenizer"):
        return 0.0
    lengths = [len(ids) for ids in backbone.tokenizer(sorted(set(dev_texts)), truncation=True,
                                                      max_length=backbone.max_seq_length)["input_ids"]]
    per_text_tokens = sum(lengths) / len(lengths) if lengths else 1.0
    return costs.encode_estimate(1, vocabulary) * min(1.0, _TOKEN_SEQUENCE / per_text_tokens)


def leading_encoder(results: dict[str, CandidateResult]) -> str:
    """The finished start model or trained candidate with the highest dev score (the first on a tie): one
    transformer encoder, which a static model can be distilled from (a meta-embedding is several)."""
    encoders = {name: r for name, r in results.items() if r.done and (r.trained or isinstance(r, StartResult))}
    return max(encoders, key=lambda name: encoders[name].dev)


METHODS = (Method("static", StaticModel, 19, "when named: a static model (one vector per token, many times faster "
                                            "on a CPU) distilled from the leading encoder and fitted to its vectors "
                                            "of the unlabelled texts", data="unlabelled"),)
