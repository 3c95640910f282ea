"""Retrieval over a candidate pool: each query searches the whole pool of a forum; MAP@100 (×100) as USEB
computes it for CQADupStack, and nDCG@10.

Task `CQADupStack` (USEB family) reads USEB's files: `cqadupstack/corpus.json` (`{forum: {id: text}}`) and
`cqadupstack/retrieval_split.json` (`{"valid"|"test": {forum: {query id: [duplicate ids]}}}`). As in
USEB, every query of the split is removed from its forum's pool, so a query never retrieves itself.

Search is exact: a blocked numpy inner product of unit vectors, or faiss `IndexFlatIP` when the pool
has at least `faiss_min_pool` documents; both return the same neighbours in the same order (see
`exact_search`). USEB's AP@100 divides by the relevant documents found in the top
100 (0 when none is), and its nDCG@10 divides by the ideal DCG of min(#relevant, 10) hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.errors import ConfigError, InputFileError
from sentforge.evaluation.reranking import (
    average_precision,
    is_lexical,
    read_json,
    unit_embeddings,
)
from sentforge.evaluation.task import Task, TaskMetadata, register_task

MAP_CUTOFF = 100
NDCG_CUTOFF = 10
FAISS_MIN_POOL = 100_000
QUERY_BLOCK = 512
RESCORE_BLOCK = 64
RESCORE_MARGIN = 10
# Far above the float32 rounding error of an inner product of unit vectors, far below real score gaps.
TIE_TOLERANCE = 1e-4


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


@dataclass(frozen=True)
class RetrievalSet:
    """One pool: queries, the documents they search, and each query's relevant document ids."""

    name: str
    query_ids: list[str]
    queries: list[str]
    doc_ids: list[str]
    docs: list[str]
    relevant: list[set[str]]


def read_cqadupstack(corpus_path: Path, split_path: Path, split: str = "test") -> list[RetrievalSet]:
    """USEB's CQADupStack files, one `RetrievalSet` per forum (every query of the split leaves the pool)."""
    corpus, splits = read_json(corpus_path), read_json(split_path)
    if not isinstance(corpus, dict) or not all(isinstance(texts, dict) for texts in corpus.values()):
        raise InputFileError(f"{corpus_path}: expected {{forum: {{question id: text}}}}")
    if not isinstance(splits, dict) or not isinstance(splits.get(split), dict):
        raise InputFileError(f"{split_path}: expected a '{split}' object of {{forum: {{query id: [ids]}}}}")
    sets = []
    for forum, qrels in splits[split].items():
        if forum not in corpus:
            raise InputFileError(f"{split_path}: forum {forum!r} is not in {corpus_path}")
        texts = corpus[forum]
        if not isinstance(qrels, dict):
            raise InputFileError(f"{split_path}: {split}.{forum} must map query ids to lists of duplicate ids")
        for qid, dups in qrels.items():
            if not isinstance(dups, list) or not all(isinstance(d, str) for d in dups):
                raise InputFileError(f"{split_path}: {split}.{forum}.{qid} must be a list of question ids")
            missing = [i for i in (qid, *dups) if i not in texts]
            if missing:
                raise InputFileError(f"{split_path}: {split}.{forum}.{qid}: question id {missing[0]!r} "
                                     f"is not in {corpus_path}")
        pool = [did for did in texts if did not in qrels]
        sets.append(RetrievalSet(forum, list(qrels), [texts[q] for q in qrels], pool, [texts[d] for d in pool],
                                 [set(dups) for dups in qrels.values()]))
    return sets


def search(model: Any, data: RetrievalSet, k: int, faiss_min_pool: int = FAISS_MIN_POOL) -> list[list[str]]:
    """The ids of the `k` best pool documents of each query, by cosine similarity or by the lexical scorer."""
    if is_lexical(model):
        _, ids = model.search(data.queries, data.docs, k)
    else:
        rows, vectors = unit_embeddings(model, [*data.queries, *data.docs])
        _, ids = exact_search(vectors[[rows[q] for q in data.queries]], vectors[[rows[d] for d in data.docs]], k,
                              faiss_min_pool)
    return [[data.doc_ids[i] for i in row] for row in ids]


@register_task
class CQADupStackTask(Task):
    metadata = TaskMetadata(
        name="CQADupStack", family="useb", main_metric="map@100_avg",
        description="CQADupStack, 12 StackExchange forums, test: retrieve duplicates from the forum's pool; "
                    "MAP@100 per forum and the mean",
        files=("cqadupstack/corpus.json", "cqadupstack/retrieval_split.json"),
        reference="Hoogeveen et al. 2015; USEB / TSDAE (Wang et al. 2021), map@100_cqadupstack_avg")
    faiss_min_pool = FAISS_MIN_POOL

    @cached_property
    def forums(self) -> list[RetrievalSet]:
        corpus, split = (self.data_dir / f for f in self.metadata.files)
        return read_cqadupstack(corpus, split, "test")

    def supports(self, model: Any) -> bool:
        return hasattr(model, "encode") or (is_lexical(model) and callable(getattr(model, "search", None)))

    def texts(self) -> list[str]:
        return [text for forum in self.forums for text in (*forum.queries, *forum.docs)]

    def evaluate(self, model: Any) -> dict[str, Any]:
        metrics: dict[str, Any] = {}
        for forum in self.forums:
            result = retrieval_metrics(search(model, forum, MAP_CUTOFF, self.faiss_min_pool), forum.relevant)
            metrics.update({f"{forum.name}.{name}": value for name, value in result.items()})
        for name in (f"map@{MAP_CUTOFF}", f"ndcg@{NDCG_CUTOFF}"):
            metrics[f"{name}_avg"] = float(np.mean([metrics[f"{f.name}.{name}"] for f in self.forums])) \
                if self.forums else 0.0
        return metrics
