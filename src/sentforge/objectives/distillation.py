"""Knowledge distillation by mean squared error (Reimers & Gurevych, 2020): the student's sentence vector
regresses onto a teacher's vector of the same text. A batch is a list of texts; their teacher vectors come from
`targets` (TeacherVectors: each text encoded once, when a batch first needs it), so that a run a time limit
stops has encoded only the texts it trained on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sentforge.support.device import to_device
from sentforge.support.errors import ConfigError


class TeacherVectors:
    """The teacher's vector of each text, encoded when first asked for and kept. A plain object, not a module:
    the teacher's weights are neither trained nor saved with the student."""

    def __init__(self, teacher: Any, batch_size: int) -> None:
        self.teacher = teacher
        self.batch_size = batch_size
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return int(self.teacher.dim)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        new = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if new:
            self._vectors.update(zip(new, self.teacher.encode(new, batch_size=self.batch_size, show_progress=None)))
        return np.stack([self._vectors[text] for text in texts])


class MSEDistillation(nn.Module):
    def __init__(self, encoder: nn.Module, targets: Callable[[Sequence[str]], np.ndarray]) -> None:
        super().__init__()
        self.encoder = encoder
        self.targets = targets

    def forward(self, batch: Sequence[str]) -> torch.Tensor:
        texts = list(batch)
        vectors = self.encoder.embed(texts)
        target = to_device(torch.from_numpy(self.targets(texts)), vectors.device).to(vectors.dtype)
        if target.shape != vectors.shape:
            raise ConfigError(f"the student's vectors have {vectors.shape[-1]} dimensions, the teacher's "
                              f"{target.shape[-1]}")
        return F.mse_loss(vectors, target)
