"""How a model scores texts against each other: cosine similarity of its unit vectors, or, for a lexical
scorer such as the BM25 baseline (no `encode`), its own scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def is_lexical(model: Any) -> bool:
    """A lexical scorer (the BM25 baseline) scores texts directly instead of encoding them."""
    return not hasattr(model, "encode") and callable(getattr(model, "score", None))


def supports_encoders_and_lexical(model: Any) -> bool:
    return hasattr(model, "encode") or is_lexical(model)


def unit_embeddings(encoder: Any, texts: Sequence[str]) -> tuple[dict[str, int], np.ndarray]:
    """Each distinct text's row in an L2-normalised embedding matrix (a zero vector stays zero)."""
    distinct = list(dict.fromkeys(texts))
    vectors = np.asarray(encoder.encode(distinct), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return {text: i for i, text in enumerate(distinct)}, vectors


def pair_cosines(encoder: Any, first: Sequence[str], second: Sequence[str]) -> np.ndarray:
    """Cosine similarity of each pair in float64; a zero vector scores 0 (SentEval's nan_to_num)."""
    a = np.asarray(encoder.encode(first), dtype=np.float64)
    b = np.asarray(encoder.encode(second), dtype=np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
