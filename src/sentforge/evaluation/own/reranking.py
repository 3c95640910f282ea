"""Re-ranking from a user's .jsonl file, MTEB's layout: one query per line,
`{"query": "...", "positive": ["...", ...], "negative": ["...", ...]}`.

Each query's candidates (negatives first, then positives, so that tied scores never favour a positive) are
ranked by cosine similarity; the task reports MAP, MRR@10 and nDCG@10 (binary gains; ×100), over the
queries with at least one positive (the others are dropped and counted, as is standard).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sentforge.support.errors import InputFileError
from sentforge.evaluation.paired import ItemScores
from sentforge.evaluation.own.base import (
    OwnDataTask,
    distinct_rows,
    records,
    require_fields,
    text_field,
)
from sentforge.evaluation.ranking import (
    NDCG_CUTOFF,
    RankingQuery,
    average_precision,
    candidate_scores,
    ndcg_at,
    rank_order,
    ranking_metrics,
)
from sentforge.evaluation.similarity import supports_encoders_and_lexical

FIELDS = ("query", "positive", "negative")


def _text_list(path: Path, line_no: int, record: dict[str, Any], field: str) -> list[str]:
    value = record[field]
    if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
        raise InputFileError(f"{path}:{line_no}: {field} must be a list of non-empty strings")
    return [t.strip() for t in value]


def read_reranking(path: Path) -> list[RankingQuery]:
    if path.suffix.lower() != ".jsonl":
        raise InputFileError(f"{path}: re-ranking data is .jsonl, one {{query, positive, negative}} object per line")
    queries = []
    for line_no, record in records(path):
        require_fields(path, line_no, record, FIELDS)
        positives = _text_list(path, line_no, record, "positive")
        negatives = _text_list(path, line_no, record, "negative")
        queries.append(RankingQuery(f"{path.name}:{line_no}", text_field(path, line_no, record, "query"),
                                    (*negatives, *positives), (False,) * len(negatives) + (True,) * len(positives)))
    keys = [(q.query, tuple(sorted(zip(q.candidates, q.relevant)))) for q in queries]
    return [queries[i] for i in distinct_rows(path, keys, "query")]


def reranking_metrics(queries: list[RankingQuery], scores: list[np.ndarray]) -> dict[str, float]:
    """MAP and MRR@10 as the benchmark re-ranking tasks compute them, and binary nDCG@10 (×100)."""
    ndcgs = [ndcg_at(np.asarray(q.relevant)[rank_order(s)], sum(q.relevant)) for q, s in zip(queries, scores)]
    return {**ranking_metrics(queries, scores), f"ndcg@{NDCG_CUTOFF}": 100 * float(np.mean(ndcgs)) if ndcgs else 0.0}


class OwnRerankingTask(OwnDataTask):
    def __init__(self, path: Path, name: str, seed: int = 1111) -> None:
        super().__init__(name, "reranking", "map", [path], seed)
        read = read_reranking(path)
        self.queries = [q for q in read if q.has_positive]
        self.dropped = len(read) - len(self.queries)
        if not self.queries:
            raise InputFileError(f"{path}: no query has a positive")

    def supports(self, model: Any) -> bool:
        return supports_encoders_and_lexical(model)

    def texts(self) -> list[str]:
        return [text for q in self.queries for text in (q.query, *q.candidates)]

    def evaluate(self, model: Any) -> dict[str, Any]:
        metrics = reranking_metrics(self.queries, candidate_scores(model, self.queries))
        return {**metrics, "n_dropped_without_positive": self.dropped}

    def item_scores(self, model: Any) -> ItemScores:
        """Each query's AP (×100): MAP is their mean."""
        scores = candidate_scores(model, self.queries)
        return ItemScores("mean", np.array([100 * average_precision(np.asarray(q.relevant)[rank_order(s)],
                                                                    q.judged_relevant)
                                            for q, s in zip(self.queries, scores)]))
