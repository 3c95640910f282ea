"""sentence-transformers' `util` on in-memory vectors: `cos_sim`, `dot_score`, `euclidean_sim`, `manhattan_sim`,
their `pairwise_` forms and `semantic_search`, with the same arguments and outputs (torch tensors; for each query
a list of `{"corpus_id", "score"}` dicts, best first), so that code written for `sentence_transformers.util` runs on
sentforge's vectors (`encode` returns numpy arrays; tensors and lists of either are taken too).

Written here because sentence-transformers is no dependency of sentforge (only the tests' reference); the
scores are `interface/st_methods.py`'s, computed with the operations sentence-transformers uses.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from sentforge.interface.st_methods import Vectors, as_batch, similarity_matrix, similarity_pairs
from sentforge.support.errors import ConfigError
from sentforge.support.top_k import top_k as top_k_of_rows


def _score(name: str, fn_name: str, pairwise: bool, doc: str) -> Callable[[Vectors, Vectors], torch.Tensor]:
    """sentence-transformers' `util.<name>`: `fn_name`'s scores of every pair across a and b, or of a[i] with b[i]."""
    compute = similarity_pairs if pairwise else similarity_matrix

    def score(a: Vectors, b: Vectors) -> torch.Tensor:
        return compute(fn_name, a, b)

    score.__name__ = score.__qualname__ = name
    score.__doc__ = doc
    return score


cos_sim, dot_score, euclidean_sim, manhattan_sim = (_score(name, fn_name, False, doc) for name, fn_name, doc in (
    ("cos_sim", "cosine", "(len(a), len(b)) cosine similarities; one vector is a batch of one."),
    ("dot_score", "dot", "(len(a), len(b)) inner products."),
    ("euclidean_sim", "euclidean", "(len(a), len(b)) negative Euclidean distances (higher is closer)."),
    ("manhattan_sim", "manhattan", "(len(a), len(b)) negative Manhattan distances (higher is closer).")))
pairwise_cos_sim, pairwise_dot_score, pairwise_euclidean_sim, pairwise_manhattan_sim = (
    _score(name, fn_name, True, doc) for name, fn_name, doc in (
        ("pairwise_cos_sim", "cosine", "(n,) cosine similarity of a[i] with b[i]."),
        ("pairwise_dot_score", "dot", "(n,) inner product of a[i] with b[i]."),
        ("pairwise_euclidean_sim", "euclidean", "(n,) negative Euclidean distance of a[i] to b[i]."),
        ("pairwise_manhattan_sim", "manhattan", "(n,) negative Manhattan distance of a[i] to b[i].")))


def semantic_search(query_embeddings: Vectors, corpus_embeddings: Vectors, query_chunk_size: int = 100,
                    corpus_chunk_size: int = 500_000, top_k: int = 10,
                    score_function: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = cos_sim,
                    ) -> list[list[dict[str, int | float]]]:
    """For each query, the `top_k` corpus vectors with the highest `score_function` scores, best first, as
    `{"corpus_id": row, "score": score}` dicts (ties to the lower row). Queries and corpus are scored in chunks of
    `query_chunk_size` by `corpus_chunk_size` vectors, so that memory holds one chunk's scores at a time."""
    for name, value in (("top_k", top_k), ("query_chunk_size", query_chunk_size),
                        ("corpus_chunk_size", corpus_chunk_size)):
        if value < 1:
            raise ConfigError(f"{name} must be >= 1, got {value}")
    queries, corpus = as_batch(query_embeddings), as_batch(corpus_embeddings)
    if len(corpus) == 0:
        return [[] for _ in range(len(queries))]
    results: list[list[dict[str, int | float]]] = []
    for query_start in range(0, len(queries), query_chunk_size):
        chunk = queries[query_start:query_start + query_chunk_size]
        scores, rows = [], []
        for corpus_start in range(0, len(corpus), corpus_chunk_size):
            block = score_function(chunk, corpus[corpus_start:corpus_start + corpus_chunk_size])
            best, columns = top_k_of_rows(block.detach().float().cpu().numpy(), top_k)
            scores.append(best)
            rows.append(columns + corpus_start)
        # The chunks' candidates side by side, in corpus order: a tie still goes to the lower row.
        best, picked = top_k_of_rows(np.concatenate(scores, axis=1), top_k)
        ids = np.take_along_axis(np.concatenate(rows, axis=1), picked, axis=1)
        results += [[{"corpus_id": int(i), "score": float(s)} for i, s in zip(row_ids, row_scores)]
                    for row_ids, row_scores in zip(ids, best)]
    return results
