"""The cross-encoder's loss: binary cross-entropy of its logit against the pair's label (1 related, 0 not) or
a score in [0, 1] (a soft label: a teacher's or a rescaled similarity), as sentence-transformers'
`BinaryCrossEntropyLoss` trains its cross-encoders."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class CrossEncoderBCE(nn.Module):
    """A batch is a list of (text, text, target) with target in [0, 1]; `pos_weight` weighs the positive term
    (the negatives outnumber the positives in most labelled pools)."""

    def __init__(self, cross_encoder: Any, pos_weight: float = 1.0) -> None:
        super().__init__()
        self.cross_encoder = cross_encoder
        self.pos_weight = pos_weight

    def forward(self, batch: list[tuple[str, str, float]]) -> torch.Tensor:
        features = self.cross_encoder.features([(a, b) for a, b, _ in batch])
        logits = self.cross_encoder(features).float()
        targets = torch.tensor([float(t) for _, _, t in batch], device=logits.device)
        self.last_stats = {"tokens": int(features["attention_mask"].sum())}
        weight = torch.tensor(self.pos_weight, device=logits.device)
        return nn.functional.binary_cross_entropy_with_logits(logits, targets, pos_weight=weight)
