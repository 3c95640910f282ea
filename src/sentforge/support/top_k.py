"""The `k` highest scores of each row, ties to the lower index: exact search in evaluation and BM25 search."""

from __future__ import annotations

import numpy as np


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` highest scores of each row and their column indices, best first; ties go to the lower index
    (also at the k-th place, where a plain argpartition would pick any of the tied columns)."""
    k = min(k, scores.shape[1])
    if k == 0:
        return np.zeros((len(scores), 0), scores.dtype), np.zeros((len(scores), 0), np.int64)
    kth_best = -np.partition(-scores, k - 1, axis=1)[:, k - 1]
    rows, cols = np.nonzero(scores >= kth_best[:, None])  # at least k per row; more when tied at the k-th
    values = scores[rows, cols]
    order = np.lexsort((cols, -values, rows))
    starts = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=len(scores)))[:-1]])
    take = order[starts[:, None] + np.arange(k)]
    return values[take], cols[take].astype(np.int64)
