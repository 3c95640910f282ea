"""Knowledge distillation by mean squared error (Reimers & Gurevych, 2020): the student's sentence vector
regresses onto a teacher's vector of the same text. The teacher's vectors are computed once, before
training, so a batch is a list of (text, teacher vector) pairs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sentforge.support.device import to_device
from sentforge.support.errors import ConfigError


class MSEDistillation(nn.Module):
    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, batch: Sequence[tuple[str, np.ndarray]]) -> torch.Tensor:
        texts, targets = zip(*batch)
        vectors = self.encoder.embed(list(texts))
        target = to_device(torch.from_numpy(np.stack(targets)), vectors.device).to(vectors.dtype)
        if target.shape != vectors.shape:
            raise ConfigError(f"the student's vectors have {vectors.shape[-1]} dimensions, the teacher's "
                              f"{target.shape[-1]}")
        return F.mse_loss(vectors, target)
