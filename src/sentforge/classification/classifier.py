"""`SentenceClassifier`: an encoder and a logistic-regression head on its vectors (the SetFit model shape).

Saved as the encoder's sentence-transformers directory (it loads in `SentenceTransformer(path)` and
`sentforge.load`) with the head beside it in safetensors (head.py): no pickle, unlike SetFit's model_head.pkl.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.classification.head import HEAD_FILE, LogisticHead
from sentforge.data.classes import ClassExample, Label
from sentforge.support.errors import ConfigError
from sentforge.support.io import atomic_dir


class SentenceClassifier:
    """predict / predict_proba of texts: the head on the encoder's vectors."""

    def __init__(self, encoder: Any, head: LogisticHead, batch_size: int = 64) -> None:
        self.encoder, self.head, self.batch_size = encoder, head, batch_size

    @classmethod
    def fit(cls, encoder: Any, examples: Sequence[ClassExample], seed: int = 0) -> SentenceClassifier:
        """The head fitted on the encoder's vectors of the (text, label) examples."""
        texts = [text for text, _ in examples]
        vectors = encoder.encode(texts, batch_size=64, show_progress=None)
        return cls(encoder, LogisticHead.fit(vectors, [label for _, label in examples], seed=seed))

    @property
    def classes(self) -> tuple[Label, ...]:
        return self.head.classes

    # The run directory names the trained model and records its training on the encoder's card.
    @property
    def name(self) -> str:
        return self.encoder.name

    @name.setter
    def name(self, value: str) -> None:
        self.encoder.name = value

    @property
    def card(self) -> Any:
        return self.encoder.card

    def encode(self, texts: Sequence[str], **options: Any) -> np.ndarray:
        return self.encoder.encode(texts, **{"batch_size": self.batch_size, **options})

    def predict_proba(self, texts: Sequence[str], show_progress: bool | None = None) -> np.ndarray:
        """(n, classes) probabilities, columns in `classes` order."""
        return self.head.predict_proba(self.encode(_texts(texts), show_progress=show_progress))

    def predict(self, texts: Sequence[str], show_progress: bool | None = None) -> list[Label]:
        """The most probable class of each text."""
        return self.head.predict(self.encode(_texts(texts), show_progress=show_progress))

    def save(self, path: str | Path, overwrite: bool = False, kind: str | None = None) -> None:
        """The encoder's directory with the head file added; it appears whole or not at all."""
        with atomic_dir(path, overwrite, kind) as tmp:
            self.encoder.save(tmp / ".encoder")
            for entry in (tmp / ".encoder").iterdir():
                entry.replace(tmp / entry.name)
            (tmp / ".encoder").rmdir()
            self.head.save(tmp)

    @classmethod
    def load(cls, path: str | Path, device: str | None = None) -> SentenceClassifier:
        """A directory written by `save` (or by `sentforge train setfit`)."""
        from sentforge.encoder import Encoder
        from sentforge.loading import load

        head = LogisticHead.load(path)  # first: a directory without a head fails before the encoder loads
        encoder = load(path, device=device)
        if not isinstance(encoder, Encoder):
            raise ConfigError(f"{path}: a classifier's encoder is a single encoder, not {type(encoder).__name__}")
        return cls(encoder, head)


def _texts(texts: Sequence[str] | str) -> list[str]:
    if isinstance(texts, str):
        raise ConfigError("give a list of texts, not one string")
    return list(texts)


__all__ = ["HEAD_FILE", "SentenceClassifier"]
