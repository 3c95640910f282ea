"""Pooling of token embeddings into one sentence vector (sentence-transformers' Pooling format)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import torch

from sentforge.support.errors import ConfigError, ModelFormatError
from sentforge.modules.base import Features, Module, read_json

# Order of concatenation when several modes are combined, as sentence-transformers does it.
MODES = ("cls", "max", "mean", "mean_sqrt_len", "lasttoken")
_LEGACY_KEYS = {
    "cls": "pooling_mode_cls_token",
    "max": "pooling_mode_max_tokens",
    "mean": "pooling_mode_mean_tokens",
    "mean_sqrt_len": "pooling_mode_mean_sqrt_len_tokens",
    "lasttoken": "pooling_mode_lasttoken",
}
_ALIASES = {"first": "cls", "mean_sqrt_len_tokens": "mean_sqrt_len"}


def _parse_modes(mode: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    names = [mode] if isinstance(mode, str) else list(mode)
    parsed = []
    for name in names:
        name = _ALIASES.get(name, name)
        if name not in MODES:
            raise ConfigError(f"unknown pooling mode {name!r}; choose from {', '.join(MODES)} (or 'first' = cls)")
        parsed.append(name)
    if not parsed:
        raise ConfigError("pooling needs at least one mode")
    return tuple(sorted(set(parsed), key=MODES.index))


class Pooling(Module):
    """CLS/first-token, mean, max (and mean-sqrt-len, last-token) pooling under the attention mask."""

    type_name: ClassVar[str] = "sentence_transformers.models.Pooling"

    def __init__(self, dim: int, mode: str | list[str] | tuple[str, ...] = "mean") -> None:
        super().__init__()
        self.dim = int(dim)
        self.modes = _parse_modes(mode)

    @property
    def input_dim(self) -> int:
        return self.dim

    @property
    def output_dim(self) -> int:
        return self.dim * len(self.modes)

    def forward(self, features: Features) -> Features:
        tokens = features["token_embeddings"]
        mask = features["attention_mask"].unsqueeze(-1).to(tokens.dtype)
        pooled = []
        for mode in self.modes:
            if mode == "cls":
                pooled.append(tokens[:, 0])
            elif mode == "max":
                pooled.append(tokens.masked_fill(mask == 0, -1e9).max(dim=1).values)
            elif mode == "lasttoken":
                last = features["attention_mask"].sum(dim=1).clamp(min=1) - 1
                pooled.append(tokens[torch.arange(tokens.shape[0], device=tokens.device), last])
            else:
                counts = mask.sum(dim=1).clamp(min=1e-9)
                summed = (tokens * mask).sum(dim=1)
                pooled.append(summed / (counts.sqrt() if mode == "mean_sqrt_len" else counts))
        features["sentence_embedding"] = pooled[0] if len(pooled) == 1 else torch.cat(pooled, dim=1)
        return features

    def config(self) -> dict[str, Any]:
        # The legacy boolean keys load in every sentence-transformers version (2.x to 6.x).
        config: dict[str, Any] = {"word_embedding_dimension": self.dim}
        config.update({key: mode in self.modes for mode, key in _LEGACY_KEYS.items()})
        config["pooling_mode_weightedmean_tokens"] = False
        return config

    @classmethod
    def load(cls, path: Path) -> Pooling:
        file = path / cls.config_file
        config = read_json(file)
        dim = config.get("word_embedding_dimension", config.get("embedding_dimension"))
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            raise ModelFormatError(f"{file}: word_embedding_dimension must be a positive integer, got {dim!r}")
        if "pooling_mode" in config:
            mode = config["pooling_mode"]
            if not isinstance(mode, (str, list)) or not all(isinstance(m, str) for m in ([mode] if isinstance(
                    mode, str) else mode)):
                raise ModelFormatError(f"{file}: pooling_mode must be a name or a list of names, got {mode!r}")
        else:
            if config.get("pooling_mode_weightedmean_tokens"):
                raise ModelFormatError(f"{file}: weighted-mean pooling is not supported by sentforge")
            mode = [m for m, key in _LEGACY_KEYS.items() if config.get(key)]
        try:
            return cls(dim, mode)
        except ConfigError as err:
            raise ModelFormatError(f"{file}: {err}") from None
