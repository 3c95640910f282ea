"""What produced a set of vectors: the model's name, dimension and its vector of a fixed probe text.

Stored next to encoded shards and indexes so that vectors are never compared across models: a model
with another dimension, or whose probe vector points elsewhere, is refused.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from sentforge.errors import ConfigError

PROBE_TEXT = "sentforge model identity probe: a quick brown fox jumps over the lazy dog."
# int8 and fp32 builds of one model agree to ~0.99 cosine on the probe; different models rarely exceed 0.9.
SAME_MODEL_MIN_COSINE = 0.95


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
        """Raise ConfigError unless `other` (the model in use) is the model that produced `what`."""
        if other.dim != self.dim:
            raise ConfigError(f"{what} was built with model {self.name!r} of dimension {self.dim}; "
                              f"model {other.name!r} has dimension {other.dim}: use the same model")
        if self.cosine(other) < SAME_MODEL_MIN_COSINE:
            raise ConfigError(f"{what} was built with model {self.name!r}; model {other.name!r} embeds text "
                              f"differently (probe cosine {self.cosine(other):.3f}): use the same model")
