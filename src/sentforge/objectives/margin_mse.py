"""MarginMSE (Hofstätter et al., 2020; GPL, Wang et al., NAACL 2022): a bi-encoder learns a cross-encoder
teacher's score margins. An example is (query, positive, negative, margin), where the margin is the teacher's
score of (query, positive) minus its score of (query, negative), computed once before training
(recipes/margins.py); the loss is the mean squared error between the student's margin, the dot product of the
query's and the positive's vectors minus that of the query's and the negative's, and the teacher's.
The dot product is sentence-transformers' `MarginMSELoss` default; on a model that normalises its vectors
it is the cosine."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from sentforge.support.errors import ConfigError

MarginExample = tuple[str, str, str, float]


class MarginMSE(nn.Module):
    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, batch: Sequence[MarginExample]) -> torch.Tensor:
        if any(len(example) != 4 for example in batch):
            raise ConfigError("MarginMSE examples are (query, positive, negative, margin) tuples")
        queries, positives, negatives, margins = zip(*batch)
        size = len(batch)
        # One pass over the three columns: each text of the batch is embedded once, in length-sorted chunks.
        vectors = self.encoder.embed([*queries, *positives, *negatives])
        query, positive, negative = vectors[:size], vectors[size:2 * size], vectors[2 * size:]
        student = (query * positive).sum(-1) - (query * negative).sum(-1)
        teacher = torch.tensor(margins, dtype=student.dtype, device=student.device)
        return F.mse_loss(student, teacher)
