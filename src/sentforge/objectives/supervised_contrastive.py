"""Supervised contrastive loss (Khosla et al., 2020, the "batch-all" form): in a batch of (text, class) items,
each text's positives are the other texts of its class and its negatives every other text of the batch; the loss
is the mean over texts with a positive of -mean log softmax (cosine / temperature) of its positives."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from sentforge.support.errors import ConfigError


class SupervisedContrastive(nn.Module):
    def __init__(self, encoder: nn.Module, temperature: float = 0.05) -> None:
        super().__init__()
        if not 0 < temperature < math.inf:
            raise ConfigError(f"temperature must be positive and finite, got {temperature}")
        self.encoder, self.temperature = encoder, temperature

    def forward(self, batch: Sequence[tuple[str, Hashable]]) -> torch.Tensor:
        texts, labels = zip(*batch)
        vectors = F.normalize(self.encoder.embed(list(texts)), dim=-1)
        ids = {label: i for i, label in enumerate(dict.fromkeys(labels))}
        classes = torch.tensor([ids[label] for label in labels], device=vectors.device)
        own = torch.eye(len(batch), dtype=torch.bool, device=vectors.device)
        positive = (classes[:, None] == classes[None, :]) & ~own
        log_prob = (vectors @ vectors.T / self.temperature).masked_fill(own, -math.inf).log_softmax(dim=1)
        counts = positive.sum(dim=1)
        with_positive = counts > 0
        if not with_positive.any():
            return vectors.sum() * 0.0  # no text of the batch shares a class: nothing to pull together
        per_text = -log_prob.masked_fill(~positive, 0.0).sum(dim=1) / counts.clamp(min=1)
        return per_text[with_positive].mean()
