"""Exact inner-product search: the `k` best documents of a pool for each query, the same neighbours in the
same order whether blocked numpy or faiss finds the candidates."""

from __future__ import annotations

from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError
from sentforge.evaluation.readers.useb import RetrievalSet
from sentforge.evaluation.similarity import is_lexical, unit_embeddings
from sentforge.support.top_k import top_k

FAISS_MIN_POOL = 100_000
QUERY_BLOCK = 512
RESCORE_BLOCK = 64
RESCORE_MARGIN = 10
# Far above the float32 rounding error of an inner product of unit vectors, far below real score gaps.
TIE_TOLERANCE = 1e-4


def exact_search(queries: np.ndarray, documents: np.ndarray, k: int,
                 faiss_min_pool: int = FAISS_MIN_POOL) -> tuple[np.ndarray, np.ndarray]:
    """Inner-product top-`k` of each query over `documents`: scores (float64) and indices (n_queries, k).

    Candidates come from faiss IndexFlatIP for pools of at least `faiss_min_pool` documents, from blocked
    numpy below that. Both gather, in float32, every document that could belong to the top `k` (at least
    `k + RESCORE_MARGIN`, more while the last one gathered is within `TIE_TOLERANCE` of the k-th) and
    order them by float64 inner products, ties to the lower index: float32 rounding, which differs
    between the two, cannot change the result, so both paths return the same neighbours in the same order."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    documents = np.ascontiguousarray(documents, dtype=np.float32)
    if queries.shape[1] != documents.shape[1]:
        raise ConfigError(f"queries have dimension {queries.shape[1]} but documents {documents.shape[1]}")
    k = min(k, len(documents))
    if k == 0 or len(queries) == 0:
        return np.zeros((len(queries), k), np.float64), np.zeros((len(queries), k), np.int64)
    if len(documents) >= faiss_min_pool:
        import faiss

        index = faiss.IndexFlatIP(documents.shape[1])
        index.add(documents)

        def gather(fetch: int) -> tuple[np.ndarray, np.ndarray]:
            scores, ids = index.search(queries, fetch)
            return scores, ids.astype(np.int64)
    else:
        def gather(fetch: int) -> tuple[np.ndarray, np.ndarray]:
            blocks = [top_k(queries[start:start + QUERY_BLOCK] @ documents.T, fetch)
                      for start in range(0, len(queries), QUERY_BLOCK)]
            return np.concatenate([s for s, _ in blocks]), np.concatenate([i for _, i in blocks])

    fetch = min(k + RESCORE_MARGIN, len(documents))
    scores, candidates = gather(fetch)
    while fetch < len(documents) and np.any(scores[:, -1] >= scores[:, k - 1] - TIE_TOLERANCE):
        fetch = min(2 * fetch, len(documents))
        scores, candidates = gather(fetch)
    return _rescore(queries, documents, np.sort(candidates, axis=1), k)


def _rescore(queries: np.ndarray, documents: np.ndarray, candidates: np.ndarray,
             k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` best of each row's candidates (sorted by index) by float64 inner product."""
    scores = np.zeros((len(queries), k), dtype=np.float64)
    ids = np.zeros((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), RESCORE_BLOCK):
        block = candidates[start:start + RESCORE_BLOCK]
        exact = np.einsum("qd,qcd->qc", queries[start:start + RESCORE_BLOCK].astype(np.float64),
                          documents[block].astype(np.float64))
        scores[start:start + RESCORE_BLOCK], positions = top_k(exact, k)
        ids[start:start + RESCORE_BLOCK] = np.take_along_axis(block, positions, axis=1)
    return scores, ids


def search_pool(model: Any, data: RetrievalSet, k: int, faiss_min_pool: int = FAISS_MIN_POOL) -> list[list[str]]:
    """The ids of the `k` best pool documents of each query, by cosine similarity or by the lexical scorer."""
    if is_lexical(model):
        _, ids = model.search(data.queries, data.docs, k)
    else:
        rows, vectors = unit_embeddings(model, [*data.queries, *data.docs])
        _, ids = exact_search(vectors[[rows[q] for q in data.queries]], vectors[[rows[d] for d in data.docs]], k,
                              faiss_min_pool)
    return [[data.doc_ids[i] for i in row] for row in ids]
