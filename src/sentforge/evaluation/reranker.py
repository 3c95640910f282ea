"""A bi-encoder (or BM25) with a cross-encoder re-ranking its top K: a scorer every ranking task evaluates.

`Reranked` speaks the scorer protocol of the lexical baseline (`score`, `search`, `pair_scores`; no `encode`),
so the re-ranking, retrieval and labelled-pair tasks score it as they score BM25. Each query's first-stage
top `top_k` candidates are ordered by the cross-encoder's scores and placed above the rest, which keep the
first stage's order; with `top_k=None` (or no first stage) the cross-encoder scores every candidate. With
`weight` below 1 the top K are ordered by the interpolation (1 - weight) * first-stage score + weight *
cross-encoder score (a cosine and a sigmoid score, both about [0, 1]: score interpolation, as re-rankers are
often deployed when the cross-encoder alone is not better than its first stage). A labelled pair is scored by
the cross-encoder: its own score of the pair, interpolated the same way with the first stage's when `weight`
is below 1.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sentforge.evaluation.similarity import is_lexical, unit_embeddings
from sentforge.support.errors import ConfigError

# Re-ranked candidates sit this far above the first stage's scores (cosines in [-1, 1], sigmoid scores in [0, 1];
# BM25 scores are shifted by their own maximum first).
_ABOVE = 2.0


@dataclass
class Reranked:
    """`first_stage` (an encoder or a lexical scorer; None: the cross-encoder scores every candidate) with
    `cross_encoder` re-ranking its top `top_k` (None: all). `pairs_scored` and `rerank_seconds` count the
    cross-encoder's work, for pairs per second."""

    first_stage: Any
    cross_encoder: Any
    top_k: int | None = 10
    batch_size: int = 32
    weight: float = 1.0
    pairs_scored: int = field(default=0, init=False)
    rerank_seconds: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        if not 0 <= self.weight <= 1:
            raise ConfigError(f"the cross-encoder's weight must be in [0, 1], got {self.weight}")

    @property
    def name(self) -> str:
        first = getattr(self.first_stage, "name", "cross-encoder alone") if self.first_stage is not None else "none"
        return f"{first} + {getattr(self.cross_encoder, 'name', 'cross-encoder')} (top {self.top_k or 'all'})"

    def _cross_scores(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        started = time.perf_counter()
        scores = self.cross_encoder.predict(pairs, batch_size=self.batch_size)
        self.rerank_seconds += time.perf_counter() - started
        self.pairs_scored += len(pairs)
        return np.asarray(scores, dtype=np.float64)

    def _first_scores(self, queries: Sequence[str], candidate_lists: Sequence[Sequence[str]]) -> list[np.ndarray]:
        if self.first_stage is None:
            return [np.zeros(len(c)) for c in candidate_lists]
        if is_lexical(self.first_stage):
            return [np.asarray(s, dtype=np.float64) for s in self.first_stage.score(queries, candidate_lists)]
        texts = [t for q, c in zip(queries, candidate_lists) for t in (q, *c)]
        rows, vectors = unit_embeddings(self.first_stage, texts)
        # As the ranking tasks score a bi-encoder alone (float32 products): weight 0 ranks exactly as it does.
        return [(vectors[[rows[t] for t in c]] @ vectors[rows[q]]).astype(np.float64)
                for q, c in zip(queries, candidate_lists)]

    def score(self, queries: Sequence[str], candidate_lists: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Each query's candidate scores: its first-stage top K by the cross-encoder, above the rest."""
        first = self._first_scores(queries, candidate_lists)
        chosen = [np.argsort(-s, kind="stable")[:self.top_k if self.first_stage is not None else None] for s in first]
        pairs = [(q, c[i]) for q, c, rows in zip(queries, candidate_lists, chosen) for i in rows]
        cross = iter(self._cross_scores(pairs))
        scores = []
        for s, rows in zip(first, chosen):
            final = s - (s.max() if len(s) else 0.0) - _ABOVE  # the rest stay in first-stage order, below
            for i in rows:
                final[i] = self.weight * next(cross) + (1 - self.weight) * s[i]
            scores.append(final)
        return scores

    def search(self, queries: Sequence[str], corpus: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The `k` best documents of each query: the first stage's top max(k, top_k) re-ranked."""
        from sentforge.evaluation.search import exact_search

        if self.first_stage is None:
            raise ConfigError("searching a corpus needs a first stage to re-rank")
        depth = min(max(k, self.top_k or k), len(corpus))
        if is_lexical(self.first_stage):
            _, ids = self.first_stage.search(queries, corpus, depth)
        else:
            rows, vectors = unit_embeddings(self.first_stage, [*queries, *corpus])
            _, ids = exact_search(vectors[[rows[q] for q in queries]], vectors[[rows[d] for d in corpus]], depth)
        ids = np.asarray(ids)
        rescored = self.score(queries, [[corpus[i] for i in row] for row in ids])
        order = [np.argsort(-s, kind="stable")[:k] for s in rescored]
        return (np.stack([s[o] for s, o in zip(rescored, order)]),
                np.stack([row[o] for row, o in zip(ids, order)]))

    def pair_scores(self, texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
        """The cross-encoder's score of each pair; with `weight` below 1, interpolated with the first stage's."""
        cross = self._cross_scores(list(zip(texts_a, texts_b)))
        if self.first_stage is None or self.weight == 1:
            return cross
        if is_lexical(self.first_stage):
            first = np.asarray(self.first_stage.pair_scores(texts_a, texts_b), dtype=np.float64)
        else:
            rows, vectors = unit_embeddings(self.first_stage, [*texts_a, *texts_b])
            first = np.einsum("ij,ij->i", vectors[[rows[t] for t in texts_a]],
                              vectors[[rows[t] for t in texts_b]]).astype(np.float64)
        return self.weight * cross + (1 - self.weight) * first

    @property
    def pairs_per_second(self) -> float | None:
        return self.pairs_scored / self.rerank_seconds if self.rerank_seconds > 0 else None
