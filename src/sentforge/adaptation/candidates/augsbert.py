"""Augmented SBERT (Thakur et al., NAACL 2021) with a trained cross-encoder (--cross-encoder) as the teacher: the
`sts` recipe on the labelled pairs and silver pairs the teacher scored (silver_data.py), from the start model
(`augsbert`) or from the TSDAE candidate's model (`tsdae+augsbert`, TSDAE as domain pre-training)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.adaptation.candidates.recipe import TrainedRecipe
from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.method import Candidate, Method
from sentforge.adaptation.planning import Costs
from sentforge.adaptation.result import SKIPPED, CandidateResult
from sentforge.adaptation.pipeline import pair_seconds, timing_pairs
from sentforge.adaptation.runner import RecipeRun, RunContext
from sentforge.adaptation.silver_data import (SCORING_SHARE, fitting_draw, full_draw, gold_pairs, silver_file,
                                              write_silver)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AugmentedSBERT(TrainedRecipe):
    """A trained recipe whose data is made in its own share: the teacher scores the silver pairs first (timed and
    counted in the share, which the plan sizes with it: `data_s`; a draw that fits half of it, or more of it when
    training on all the pairs needs less than the rest: silver_data.py; `make_data`, which marginmse.py's kind
    overrides), then the `sts` recipe trains within what is left of it. Not probed: its data does not exist
    before it runs, so the plan takes the mean cost per step of the probes. It runs only with a --cross-encoder
    and labelled pairs, and then by default. One pass over the pairs, as the paper's bi-encoder (ten passes, cut
    by the time limit, ended inside the warm-up)."""

    by_default = False
    probed = False

    def _made_and_trained(self, context: RunContext, share: float) -> CandidateResult:
        start = self.start(context)
        if start is None:
            return self.candidate.outcome(SKIPPED, reason=f"it starts from {self.candidate.after}, which did not "
                                                          f"run")
        if self.data_file(context.inputs).is_file():  # made by an earlier call of this run (or another candidate)
            return super().within(context, share)
        from sentforge import load_cross_encoder

        inputs = context.inputs
        teacher = load_cross_encoder(inputs.cross_encoder, device=context.train.device)
        costs = context.plan.costs()
        encode_s = costs.encode_estimate(1, self.encoded_texts(inputs))
        # The rate the plan sized the share with (timed at the start); timed here only in a run that did not keep it.
        per_pair = costs.pair_s or pair_seconds(teacher, timing_pairs(inputs.dev, inputs.labelled_pairs()))
        started = time.monotonic()
        # At least SCORING_SHARE of the share, more when the training on all the data needs less than the rest.
        training_s = context.plan.need(self.candidate, costs) - self.data_s(self.candidate, inputs, costs)
        scoring_s = min(max(SCORING_SHARE * share, share - training_s), share - costs.trained_minimum) - encode_s
        why = self.make_data(context, teacher, per_pair, scoring_s, share)
        if why is not None:
            return self.candidate.outcome(SKIPPED, reason=f"a share of {share:.0f} s; the cross-encoder scores "
                                                          f"{1 / per_pair:.0f} pairs a second, {why}")
        scored_s = time.monotonic() - started
        logger.info("%s: its training data scored in %.0f s", self.candidate.name, scored_s)
        run = RecipeRun(self.candidate, start, context.state.run_dir(self.candidate.name), share, before_s=scored_s)
        result = run.train(context)
        # Its wall time holds the scoring too, as its share does (a rerun that reads the written data has none).
        return result.update(share_s=round(share, 1), wall_s=round(result.wall_s + scored_s, 2))

    def start(self, context: RunContext) -> str | None:
        after = self.candidate.after
        if after is None:
            return self.candidate.model
        before = context.state.results.get(after)
        return before.model_path if before is not None and before.done else None

    def within(self, context: RunContext, share: float) -> CandidateResult:
        result = self._made_and_trained(context, share)
        before = context.state.results.get(self.candidate.after) if self.candidate.after else None
        if not result.done or before is None:
            return result
        # A result from another candidate's model: that candidate's commands first, as they reproduce it.
        return result.update(commands=[*before.commands, *result.commands])

    @classmethod
    def data_s(cls, candidate: Candidate, inputs: AdaptInputs, costs: Costs) -> float:
        """The start model encoding the texts its pairs are found among, and the teacher scoring every pair its
        data can hold at the cross-encoder's measured seconds per pair (0 once its data is written, by it or by
        another candidate, or when no cross-encoder was timed)."""
        kind = cls(candidate)
        if kind.data_file(inputs).is_file() or not costs.pair_s:
            return 0.0
        return costs.encode_estimate(1, kind.encoded_texts(inputs)) + kind.pairs_to_score(inputs) * costs.pair_s

    def pairs_to_score(self, inputs: AdaptInputs) -> int:
        """The most pairs the teacher scores for its data."""
        return full_draw(inputs).most_pairs

    def encoded_texts(self, inputs: AdaptInputs) -> int:
        """The most texts the start model encodes to find the pairs' neighbours: the labelled pairs' and the
        unlabelled anchors drawn (recipes/silver.py)."""
        full = full_draw(inputs)
        return len(gold_pairs(inputs)) + full.firsts + full.anchors

    def data_file(self, inputs: AdaptInputs) -> Path:
        return silver_file(self.candidate, inputs)

    def make_data(self, context: RunContext, teacher: Any, per_pair: float, scoring_s: float,
                  share: float) -> str | None:
        """Score and write the training data within about `scoring_s` seconds; why it cannot (None: written)."""
        from sentforge import load

        inputs = context.inputs
        draw = fitting_draw(full_draw(inputs), per_pair, scoring_s)
        if draw is None:
            return (f"too slow to score even one neighbour of each labelled pair's first text in "
                    f"{max(scoring_s, 0):.0f} s")
        logger.info("%s: scoring at most %d silver pairs (%d neighbours of %d first texts and %d unlabelled "
                    "texts) with %s, %.0f pairs a second (about %.0f s of its %.0f s share)", self.candidate.name,
                    draw.most_pairs, draw.neighbours, draw.firsts, draw.anchors, inputs.cross_encoder, 1 / per_pair,
                    per_pair * draw.most_pairs, share)
        write_silver(self.candidate, inputs, teacher, load(self.candidate.model, device=context.train.device),
                     context.train.seed, draw)
        return None

METHODS = (Method("augsbert", AugmentedSBERT, 10, "with --cross-encoder: cosine regression (sts recipe) on the "
                                                 "labelled pairs (scores 1 and 0) and silver pairs around them and "
                                                 "the unlabelled texts, scored by the cross-encoder",
                  recipe="sts", data="silver", options=(("score_max", 1.0),), epochs=1),
           Method("tsdae+augsbert", AugmentedSBERT, 11, "with --cross-encoder, when named: the same from the TSDAE "
                                                       "candidate's model", recipe="sts", data="silver",
                  options=(("score_max", 1.0),), after="tsdae", epochs=1))
