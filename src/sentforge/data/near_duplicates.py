"""Near-duplicate texts by word-set Jaccard similarity: what keeps held-out texts out of training data."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

NEAR_DUPLICATE_JACCARD = 0.5

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def near_duplicates(texts: Sequence[str], heldout: Sequence[str], threshold: float = NEAR_DUPLICATE_JACCARD,
                    chunk_size: int = 2000) -> np.ndarray:
    """For each text, whether its word set has Jaccard similarity >= `threshold` with some held-out
    text's. Texts without words match nothing. Sparse set intersections, `chunk_size` texts at a time."""
    from sklearn.feature_extraction.text import CountVectorizer

    if not texts or not heldout:
        return np.zeros(len(texts), dtype=bool)
    vectorizer = CountVectorizer(analyzer=words, binary=True).fit([*texts, *heldout])
    held = vectorizer.transform(heldout).astype(np.float32).T.tocsc()
    held_sizes = np.asarray(held.sum(axis=0)).ravel()
    matched = np.zeros(len(texts), dtype=bool)
    for start in range(0, len(texts), chunk_size):
        block = vectorizer.transform(texts[start:start + chunk_size]).astype(np.float32)
        sizes = np.asarray(block.sum(axis=1)).ravel()
        shared = (block @ held).tocoo()
        jaccard = shared.data / (sizes[shared.row] + held_sizes[shared.col] - shared.data)
        hits = shared.row[jaccard >= threshold]
        matched[start + hits] = True
    return matched
