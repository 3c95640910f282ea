"""Alignment and uniformity of an embedding space (Wang & Isola 2020), measured as in SimCSE on STS-B test.

On L2-normalised embeddings f:
- alignment  = E over positive pairs (x, y) of ||f(x) − f(y)||^alpha, alpha = 2; positives are the
  STS-B test pairs with a gold score >= 4;
- uniformity = log E over pairs of distinct rows (x, y) of exp(−t ||f(x) − f(y)||²), t = 2, over every
  STS-B test sentence (both sides of every pair, as they occur).
Lower is better for both.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
from scipy.spatial.distance import pdist
from scipy.special import logsumexp

from sentforge.support.errors import InputFileError
from sentforge.evaluation.readers.sts import STSB_RAW, STSPairs, keep_text, read_stsbenchmark
from sentforge.evaluation.task import Task, TaskMetadata

POSITIVE_THRESHOLD = 4.0  # SimCSE (Gao et al. 2021), section 5: STS-B pairs scored >= 4 are positives


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def alignment(x: np.ndarray, y: np.ndarray, alpha: float = 2.0) -> float:
    """Mean of ||x_i − y_i||^alpha over rows; the inputs are normalised here."""
    return float(np.mean(np.linalg.norm(l2_normalize(x) - l2_normalize(y), axis=1) ** alpha))


def uniformity(x: np.ndarray, t: float = 2.0) -> float:
    """log of the mean of exp(−t ||x_i − x_j||²) over all pairs i < j; the inputs are normalised here."""
    squared = pdist(l2_normalize(x), "sqeuclidean")
    return float(logsumexp(-t * squared) - np.log(len(squared)))


class AlignmentUniformityTask(Task):
    metadata = TaskMetadata(
        name="AlignmentUniformity", family="geometry", main_metric="alignment",
        description="alignment (alpha=2, pairs scored >= 4) and uniformity (t=2) on STS-B test, original file",
        files=(STSB_RAW,), reference="Wang & Isola 2020; Gao et al. 2021 (SimCSE), lower is better")

    @cached_property
    def pairs(self) -> STSPairs:
        return read_stsbenchmark(self.data_dir / STSB_RAW, keep_text)

    def texts(self) -> list[str]:
        return self.pairs.sentences1 + self.pairs.sentences2

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        pairs = self.pairs
        positive = pairs.scores >= POSITIVE_THRESHOLD
        if not positive.any():
            raise InputFileError(f"{self.data_dir / STSB_RAW}: no pair scored >= {POSITIVE_THRESHOLD}; "
                                 "alignment needs positive pairs")
        first = encoder.encode(pairs.sentences1)
        second = encoder.encode(pairs.sentences2)
        return {"alignment": alignment(first[positive], second[positive]),
                "uniformity": uniformity(np.concatenate([first, second])),
                "n_positive": int(positive.sum()), "n_sentences": 2 * len(pairs)}


TASKS = (AlignmentUniformityTask,)
