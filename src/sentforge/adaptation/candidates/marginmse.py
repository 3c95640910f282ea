"""MarginMSE (Hofstätter et al., 2020; the loss of GPL, Wang et al., NAACL 2022) with a trained cross-encoder
(--cross-encoder) as the teacher: the `marginmse` recipe on the teacher's score margins between each labelled
positive pair and its negatives (margin_data.py), from the start model (`marginmse`), from the `mnrl`
candidate's model (`mnrl+marginmse`: on WikiQA a student from MNRL's model scored 0.91 MAP above one from the
start model on test, docs/results/cross-encoder.md) or from the TSDAE candidate's (`tsdae+marginmse`: GPL's
order, TSDAE as domain pre-training)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.adaptation.candidates.augsbert import AugmentedSBERT
from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.margin_data import NEGATIVES, fitting_positives, margins_file, positive_pairs, write_margins
from sentforge.adaptation.method import Method
from sentforge.adaptation.runner import RunContext


@dataclass(frozen=True)
class MarginDistillation(AugmentedSBERT):
    """A trained recipe whose data is made in its own share, as augsbert's: the teacher scores the margin rows
    first (timed and counted in the share; the positive pairs whose rows fit its scoring part), then the recipe trains
    within what is left. Not probed: its data does not exist before it runs. Runs when named (--candidates), with
    a --cross-encoder and labelled pairs. One pass over the rows, as GPL's schedule. The rows depend on the start
    model alone (it mines the negatives a query's label-0 partners leave to fill), so `marginmse`,
    `mnrl+marginmse` and `tsdae+marginmse` share them: the teacher scores them once."""

    by_default = False

    def pairs_to_score(self, inputs: AdaptInputs) -> int:
        return len(positive_pairs(inputs)) * (1 + NEGATIVES)

    def encoded_texts(self, inputs: AdaptInputs) -> int:
        """The most texts of the pool the negatives are mined among: the labelled texts and every unlabelled text
        kept (margin_data.py)."""
        return 2 * (len(positive_pairs(inputs)) + len(inputs.labelled.negatives)) + len(inputs.texts)

    def data_file(self, inputs: AdaptInputs) -> Path:
        return margins_file(self.candidate, inputs)

    def make_data(self, context: RunContext, teacher: Any, per_pair: float, scoring_s: float,
                  share: float) -> str | None:
        from sentforge import load

        positives = fitting_positives(context.inputs, per_pair, scoring_s)
        if positives is None:
            return f"too slow to score one positive pair and its negatives in {max(scoring_s, 0):.0f} s"
        write_margins(self.candidate, context.inputs, teacher, load(self.candidate.model, device=context.train.device),
                      context.train.seed, positives)
        return None

METHODS = (Method("marginmse", MarginDistillation, 12, "when named, with --cross-encoder: MarginMSE on the "
                                                       "cross-encoder's score margins between each labelled "
                                                       "positive pair and 4 negatives (its label-0 partners "
                                                       "first)", recipe="marginmse", data="margins", epochs=1),
           Method("mnrl+marginmse", MarginDistillation, 13, "when named, with --cross-encoder: the same MarginMSE "
                                                           "from the mnrl candidate's model", recipe="marginmse",
                  data="margins", after="mnrl", epochs=1),
           Method("tsdae+marginmse", MarginDistillation, 14, "when named, with --cross-encoder: the same MarginMSE "
                                                             "from the TSDAE candidate's model", recipe="marginmse",
                  data="margins", after="tsdae", epochs=1))
