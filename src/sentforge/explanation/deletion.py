"""Leave-one-word-out influence: how much the cosine similarity of two texts drops when one word is removed
(the deletion analysis of Wang et al., 2021, TSDAE, section 7.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sentforge.explanation.words import TokenizedText, without_word


def cosine(u: np.ndarray, v: np.ndarray) -> float:
    """Cosine similarity; 0 when either vector is zero (as sentence-transformers' `cos_sim` gives)."""
    norms = float(np.linalg.norm(u)) * float(np.linalg.norm(v))
    return float(np.dot(u, v) / norms) if norms > 0 else 0.0


def encode_plain(model: Any, texts: list[str], batch_size: int, show_progress: bool | None = None) -> np.ndarray:
    """float64 vectors of `texts` exactly as written: an Encoder's default prompt is not prepended, so that
    the words explained are the words encoded."""
    from sentforge.encoder import Encoder

    options = {"prompt": ""} if isinstance(model, Encoder) else {}
    return np.asarray(model.encode(texts, batch_size=batch_size, show_progress=show_progress, **options),
                      dtype=np.float64)


@dataclass(frozen=True)
class DeletionScores:
    similarity: float
    a: tuple[float, ...]  # per word of text a: similarity - similarity without that word
    b: tuple[float, ...]


def deletion_influence(model: Any, a: TokenizedText, b: TokenizedText, batch_size: int = 32,
                       show_progress: bool | None = None) -> DeletionScores:
    """For every word of each text: cos(a, b) - cos(the pair with that one word removed from its text).

    All texts (the two full texts and one variant per word) are encoded in one `encode` call.
    """
    variants_a = [without_word(a.text, word) for word in a.words]
    variants_b = [without_word(b.text, word) for word in b.words]
    vectors = encode_plain(model, [a.text, b.text, *variants_a, *variants_b], batch_size, show_progress)
    full_a, full_b = vectors[0], vectors[1]
    similarity = cosine(full_a, full_b)
    rows_a = vectors[2:2 + len(variants_a)]
    rows_b = vectors[2 + len(variants_a):]
    return DeletionScores(similarity,
                          tuple(similarity - cosine(row, full_b) for row in rows_a),
                          tuple(similarity - cosine(full_a, row) for row in rows_b))
