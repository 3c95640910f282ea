"""Leave-one-member-out ablation, the meta-embedding side: the member subsets and a method fitted on some
members' embeddings (`evaluation/meta_ablation.py` scores the ensembles on tasks)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from sentforge.meta.base import MetaMethod
from sentforge.meta.registry import method_class

logger = logging.getLogger(__name__)

# Methods whose d cannot exceed the members' total dimension (an eigen-decomposition of that size).
BOUNDED_BY_TOTAL_DIM = ("svd", "gcca")


def fit_method(method: str, params: dict[str, Any], embeddings: Sequence[np.ndarray]) -> MetaMethod:
    """Fit `method` on member embeddings; for SVD and GCCA, d is capped at the members' total dimension
    (which a subset of members can fall below)."""
    params = dict(params)
    total = sum(e.shape[1] for e in embeddings)
    if method in BOUNDED_BY_TOTAL_DIM and params.get("dim", 0) > total:
        logger.info("%s: dim %d > the %d dimensions of these members; using %d", method, params["dim"], total, total)
        params["dim"] = total
    return method_class(method)(**params).fit(embeddings)


def member_subsets(names: Sequence[str]) -> list[tuple[str, list[int]]]:
    """("all members", every index), then ("without NAME", the others) for each member."""
    everyone = list(range(len(names)))
    return [("all members", everyone)] + [(f"without {name}", [j for j in everyone if j != i])
                                          for i, name in enumerate(names)]
