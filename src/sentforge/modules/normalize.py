"""L2 normalisation of the sentence vector, so that dot product equals cosine similarity."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import torch.nn.functional as F

from sentforge.modules.base import Features, Module


class Normalize(Module):
    type_name: ClassVar[str] = "sentence_transformers.models.Normalize"

    def forward(self, features: Features) -> Features:
        features["sentence_embedding"] = F.normalize(features["sentence_embedding"], p=2, dim=1)
        return features

    def config(self) -> dict[str, Any]:
        return {}

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)

    @classmethod
    def load(cls, path: Path) -> Normalize:
        return cls()
