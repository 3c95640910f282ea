"""STS regression (Reimers & Gurevych, 2019): the cosine similarity of the two sentence vectors is
regressed onto the gold score divided by its maximum (5 for STS), with mean squared error -- the
supervised objective of the TSDAE paper's NLI+STS setting."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from sentforge.support.device import to_device
from sentforge.support.errors import ConfigError



class CosineRegression(nn.Module):
    """A batch is a list of (sentence1, sentence2, score) with 0 <= score <= score_max."""

    def __init__(self, encoder: nn.Module, score_max: float = 5.0) -> None:
        super().__init__()
        if not 0 < score_max < math.inf:
            raise ConfigError(f"score_max must be positive and finite, got {score_max}")
        self.encoder = encoder
        self.score_max = float(score_max)

    def forward(self, batch: Sequence[tuple[str, str, float]]) -> torch.Tensor:
        if any(len(example) != 3 for example in batch):
            raise ConfigError("STS regression examples are (sentence1, sentence2, score) triples")
        first, second, scores = zip(*batch)
        vectors = self.encoder.embed([*first, *second])
        cosine = F.cosine_similarity(vectors[:len(batch)], vectors[len(batch):], dim=-1)
        # Built on the host and copied without blocking: no wait for the device.
        target = to_device(torch.tensor(scores, dtype=torch.float32), cosine.device).to(cosine.dtype) / self.score_max
        return F.mse_loss(cosine, target)
