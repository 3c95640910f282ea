"""Ranking metrics: a query's candidates ranked by score, scored with average precision, MRR@10 and nDCG@10.

Average precision over a candidate list divides by the relevant candidates in that list (USEB's and
SemEval's convention) unless a query says how many relevant documents were judged (trec_eval's, for
SciDocs). For retrieval, USEB's AP@100 divides by the relevant documents found in the top 100 (0 when
none is), and its nDCG@10 by the ideal DCG of min(#relevant, 10) hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sentforge.data.ranking_queries import RankingQuery
from sentforge.evaluation.similarity import is_lexical, unit_embeddings

MRR_CUTOFF = 10
MAP_CUTOFF = 100
NDCG_CUTOFF = 10


def rank_order(scores: np.ndarray) -> np.ndarray:
    """Candidate indices by descending score; ties keep the candidates' order."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def average_precision(ranked_relevance: np.ndarray, judged_relevant: int | None = None) -> float:
    """Mean precision at the ranks of the relevant items (over `judged_relevant` of them if given);
    0 when there is nothing relevant."""
    hits = np.flatnonzero(np.asarray(ranked_relevance, dtype=bool))
    denominator = len(hits) if judged_relevant is None else judged_relevant
    if denominator == 0:
        return 0.0
    return float(np.sum(np.arange(1, len(hits) + 1) / (hits + 1)) / denominator)


def reciprocal_rank(ranked_relevance: np.ndarray, cutoff: int = MRR_CUTOFF) -> float:
    """1 / rank of the first relevant item within the top `cutoff`; 0 if there is none."""
    hits = np.flatnonzero(np.asarray(ranked_relevance, dtype=bool)[:cutoff])
    return 1.0 / (hits[0] + 1) if len(hits) else 0.0


def ranking_metrics(queries: Sequence[RankingQuery], scores: Sequence[np.ndarray]) -> dict[str, float]:
    """MAP and MRR@10 (×100) of the rankings that `scores` induce, one score array per query."""
    aps, rrs = [], []
    for query, query_scores in zip(queries, scores, strict=True):
        ranked = np.asarray(query.relevant, dtype=bool)[rank_order(query_scores)]
        aps.append(average_precision(ranked, query.judged_relevant))
        rrs.append(reciprocal_rank(ranked))
    return {"map": 100 * float(np.mean(aps)) if aps else 0.0,
            f"mrr@{MRR_CUTOFF}": 100 * float(np.mean(rrs)) if rrs else 0.0,
            "n_queries": len(aps)}


def candidate_scores(model: Any, queries: Sequence[RankingQuery]) -> list[np.ndarray]:
    """Cosine similarity of each candidate to its query, or the lexical scorer's score."""
    if is_lexical(model):
        return model.score([q.query for q in queries], [list(q.candidates) for q in queries])
    rows, vectors = unit_embeddings(model, [text for q in queries for text in (q.query, *q.candidates)])
    return [vectors[[rows[c] for c in q.candidates]] @ vectors[rows[q.query]] for q in queries]


def ndcg_at(ranked_relevance: np.ndarray, relevant_total: int, cutoff: int = NDCG_CUTOFF) -> float:
    """Binary nDCG@cutoff; the ideal ranking puts min(relevant_total, cutoff) hits first."""
    gains = np.asarray(ranked_relevance[:cutoff], dtype=np.float64)
    discounts = 1.0 / np.log2(np.arange(2, cutoff + 2))
    ideal = discounts[:min(relevant_total, cutoff)].sum()
    return float(gains @ discounts[:len(gains)] / ideal) if ideal > 0 else 0.0


def retrieval_metrics(ranked_ids: Sequence[Sequence[str]], relevant: Sequence[set[str]]) -> dict[str, float]:
    """USEB's MAP@100 and nDCG@10 (×100) of ranked document ids against each query's relevant ids."""
    aps, ndcgs = [], []
    for ids, gold in zip(ranked_ids, relevant, strict=True):
        hits = np.array([doc in gold for doc in ids], dtype=bool)
        aps.append(average_precision(hits[:MAP_CUTOFF]))
        if gold:
            ndcgs.append(ndcg_at(hits, len(gold)))
    return {f"map@{MAP_CUTOFF}": 100 * float(np.mean(aps)) if aps else 0.0,
            f"ndcg@{NDCG_CUTOFF}": 100 * float(np.mean(ndcgs)) if ndcgs else 0.0,
            "n_queries": len(aps)}
