"""What produced a set of vectors: the model's name, dimension and its vector of a fixed probe text.

Stored next to encoded shards and indexes so that vectors are never compared across models. The check is
keyed on what the model computes, not on its name: a model with another dimension, or whose probe vector is
not the stored one to float rounding, is refused, whatever its name (a fine-tuned or quantized copy embeds a
corpus a little differently from the model that built it, and a directory replaced by another model, e.g. by
`export --overwrite` or `train --output` over it, keeps its name); the same weights under another name pass.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError

PROBE_TEXT = "sentforge model identity probe: a quick brown fox jumps over the lazy dog."
# int8 and fp32 builds of one model agree to ~0.99 cosine on the probe; different models rarely exceed 0.9.
SAME_MODEL_MIN_COSINE = 0.95
# The same weights under another name (a copy, another spelling of its path) agree to float rounding; a few
# fine-tuning steps already move the probe below this (0.994 after 10 MNRL steps of MiniLM-L3 at lr 1e-4).
SAME_WEIGHTS_MIN_COSINE = 0.9999


@dataclass(frozen=True)
class ModelIdentity:
    name: str
    dim: int
    probe: tuple[float, ...]

    @classmethod
    def of(cls, encoder: Any, name: str | None = None) -> ModelIdentity:
        probe = np.asarray(encoder.encode([PROBE_TEXT], show_progress=False), dtype=np.float32)[0]
        return cls(name or getattr(encoder, "name", "model"), int(encoder.dim), tuple(float(x) for x in probe))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelIdentity:
        return cls(str(data["name"]), int(data["dim"]), tuple(float(x) for x in data["probe"]))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"probe": list(self.probe)}

    def cosine(self, other: ModelIdentity) -> float:
        a, b = np.asarray(self.probe), np.asarray(other.probe)
        denom = float(np.linalg.norm(a) * np.linalg.norm(b))
        return float(a @ b / denom) if denom else 0.0

    def check_same(self, other: ModelIdentity, what: str) -> None:
        """Raise ConfigError unless `other` (the model in use) computes what the model that produced `what` did."""
        cosine = self.cosine(other) if other.dim == self.dim else 0.0
        if cosine >= SAME_WEIGHTS_MIN_COSINE:
            return
        if other.name == self.name:
            change = (f"now has dimension {other.dim}, not {self.dim}" if other.dim != self.dim
                      else f"now embeds text differently (probe cosine {cosine:.4f})")
            raise ConfigError(f"{what} was built with model {self.name!r}, which {change}: the model was replaced "
                              "or changed since (trained or exported over?); build it again with this model")
        if other.dim != self.dim:
            raise ConfigError(f"{what} was built with model {self.name!r} of dimension {self.dim}; "
                              f"model {other.name!r} has dimension {other.dim}: use the same model")
        if cosine < SAME_MODEL_MIN_COSINE:
            raise ConfigError(f"{what} was built with model {self.name!r}; model {other.name!r} embeds text "
                              f"differently (probe cosine {cosine:.3f}): use the same model")
        raise ConfigError(f"{what} was built with model {self.name!r}; model {other.name!r} embeds text close to "
                          f"it but not the same (probe cosine {cosine:.4f}: a fine-tuned or quantized copy?): "
                          f"use {self.name!r}, or build it again with {other.name!r}")
