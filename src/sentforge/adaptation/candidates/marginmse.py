"""MarginMSE (Hofstätter et al., 2020; the loss of GPL, Wang et al., NAACL 2022) with a trained cross-encoder
(--cross-encoder) as the teacher: the `marginmse` recipe from the start model on the teacher's score margins
between each labelled positive pair and its negatives (margin_data.py)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from sentforge.adaptation.candidates.recipe import TrainedRecipe
from sentforge.adaptation.margin_data import fitting_positives, margins_file, write_margins
from sentforge.adaptation.method import Method
from sentforge.adaptation.result import SKIPPED, CandidateResult
from sentforge.adaptation.runner import RecipeRun, RunContext
from sentforge.adaptation.silver_data import SCORING_SHARE, seconds_per_pair

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MarginDistillation(TrainedRecipe):
    """A trained recipe whose data is made in its own share, as augsbert's: the teacher scores the margin rows
    first (timed and counted in the share; the positive pairs whose rows fit half of it), then the recipe trains
    within what is left. Not probed: its data does not exist before it runs. Runs when named (--candidates), with
    a --cross-encoder and labelled pairs. One pass over the rows, as GPL's schedule."""

    by_default = False
    probed = False

    def within(self, context: RunContext, share: float) -> CandidateResult:
        if margins_file(self.candidate, context.inputs).is_file():  # made by an earlier call of this run
            return super().within(context, share)
        from sentforge import load, load_cross_encoder

        inputs, device = context.inputs, context.train.device
        teacher = load_cross_encoder(inputs.cross_encoder, device=device)
        costs = context.plan.costs()
        per_pair = seconds_per_pair(teacher, inputs)
        scoring_s = min(SCORING_SHARE * share, share - costs.trained_minimum) - costs.encode_estimate(
            1, len(inputs.texts))
        positives = fitting_positives(inputs, per_pair, scoring_s)
        if positives is None:
            return self.candidate.outcome(SKIPPED, reason=f"a share of {share:.0f} s; the cross-encoder scores "
                                                          f"{1 / per_pair:.0f} pairs a second, too slow to score "
                                                          f"one positive pair and its negatives in "
                                                          f"{max(scoring_s, 0):.0f} s")
        started = time.monotonic()
        write_margins(self.candidate, inputs, teacher, load(self.candidate.model, device=device),
                      context.train.seed, positives)
        scored_s = time.monotonic() - started
        logger.info("%s: margin rows scored in %.0f s", self.candidate.name, scored_s)
        run = RecipeRun(self.candidate, self.candidate.model, context.state.run_dir(self.candidate.name), share,
                        before_s=scored_s)
        return run.train(context).update(share_s=round(share, 1))


METHODS = (Method("marginmse", MarginDistillation, 11, "when named, with --cross-encoder: MarginMSE on the "
                                                       "cross-encoder's score margins between each labelled "
                                                       "positive pair and 4 negatives (its label-0 partners "
                                                       "first)", recipe="marginmse", data="margins", epochs=1),)
