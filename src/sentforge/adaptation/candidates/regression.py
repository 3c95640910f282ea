"""Cosine regression on the labelled pairs: the `sts` recipe from the start model on the label-1 pairs scored 1
and the label-0 pairs scored 0 (sentence-transformers' CosineSimilarityLoss on 0/1 labels). `mnrl` uses the
label-0 pairs only as hard negatives of the positives; this candidate learns both labels as targets."""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.adaptation.candidates.recipe import TrainedRecipe
from sentforge.adaptation.method import Method


@dataclass(frozen=True)
class LabelRegression(TrainedRecipe):
    """A trained recipe that runs when named (--candidates) and the labelled pairs hold both labels. One pass over
    the pairs: the length measured on TwitterPara (docs/results/cross-encoder.md); ten passes, cut by the time
    limit, stopped a quarter of the way down the learning-rate schedule."""

    by_default = False


METHODS = (Method("regression", LabelRegression, 9, "when named: cosine regression (sts recipe) on the labelled "
                                                    "pairs, label-1 pairs scored 1 and label-0 pairs 0",
                  recipe="sts", data="scored", options=(("score_max", 1.0),), epochs=1),)
