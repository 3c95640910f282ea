"""Retrieval from a user's folder in the BEIR layout: `corpus.jsonl` (`_id`, `title`, `text`),
`queries.jsonl` (`_id`, `text`) and `qrels/<split>.tsv` (header `query-id`, `corpus-id`, `score`; score a
non-negative integer, above 0 relevant).

Each judged query searches the whole corpus by cosine similarity (a document is its title and text joined
by a space, as BEIR encodes it); as in BEIR's evaluation, a document with the query's own id is never
returned. Search is exact, in blocks of queries (bounded memory), or through faiss beyond
`FAISS_MIN_POOL` documents (`search.exact_search`: both give the same ranking). Metrics follow
trec_eval (×100): nDCG@10 with graded gains, MAP@100 (AP over the top 100, divided by every relevant
document of the query) and Recall@100. Queries with no relevant document are dropped and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.support.errors import InputFileError
from sentforge.evaluation.paired import ItemScores
from sentforge.evaluation.own.base import OwnDataTask, records, require_fields
from sentforge.evaluation.ranking import MAP_CUTOFF, NDCG_CUTOFF, average_precision
from sentforge.evaluation.readers.useb import RetrievalSet
from sentforge.evaluation.search import FAISS_MIN_POOL, search_pool
from sentforge.evaluation.similarity import is_lexical

BEIR_FILES = ("corpus.jsonl", "queries.jsonl")
RECALL_CUTOFF = 100
DEFAULT_SPLIT = "test"


def _ids_and_texts(path: Path, fields: Sequence[str]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for line_no, record in records(path):
        require_fields(path, line_no, record, fields)
        doc_id = str(record["_id"])
        if doc_id in texts:
            raise InputFileError(f"{path}:{line_no}: _id {doc_id!r} appears twice")
        title = record.get("title") or ""
        if not isinstance(title, str):
            raise InputFileError(f"{path}:{line_no}: title must be a string, not {title!r}")
        if not isinstance(record["text"], str):
            raise InputFileError(f"{path}:{line_no}: text must be a string, not {record['text']!r}")
        texts[doc_id] = " ".join(part.strip() for part in (title, record["text"]) if part.strip())
        if not texts[doc_id]:
            raise InputFileError(f"{path}:{line_no}: empty title and text")
    return texts


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """{query id: {document id: relevance}} of a BEIR qrels .tsv."""
    qrels: dict[str, dict[str, int]] = {}
    for line_no, record in records(path):
        require_fields(path, line_no, record, ("query-id", "corpus-id", "score"))
        try:
            relevance = int(str(record["score"]).strip())
        except ValueError:
            raise InputFileError(f"{path}:{line_no}: score {record['score']!r} is not an integer") from None
        if relevance < 0:
            raise InputFileError(f"{path}:{line_no}: score {relevance} is negative")
        qrels.setdefault(str(record["query-id"]).strip(), {})[str(record["corpus-id"]).strip()] = relevance
    return qrels


def beir_split_path(folder: Path, split: str | None) -> Path:
    """qrels/<split>.tsv; without a split, test.tsv, or the only file in qrels/."""
    if split is not None:
        return folder / "qrels" / f"{split}.tsv"
    found = sorted((folder / "qrels").glob("*.tsv"))
    if (folder / "qrels" / f"{DEFAULT_SPLIT}.tsv").exists() or len(found) != 1:
        return folder / "qrels" / f"{DEFAULT_SPLIT}.tsv"
    return found[0]


def graded_ndcg(ranked_ids: Sequence[str], judged: dict[str, int], cutoff: int = NDCG_CUTOFF) -> float:
    """trec_eval's ndcg_cut: gain = relevance, discount log2(rank + 1), ideal = the judged relevances sorted."""
    discounts = 1.0 / np.log2(np.arange(2, cutoff + 2))
    gains = np.array([judged.get(doc, 0) for doc in ranked_ids[:cutoff]], dtype=np.float64)
    ideal_gains = np.sort(np.array([r for r in judged.values() if r > 0], dtype=np.float64))[::-1][:cutoff]
    ideal = ideal_gains @ discounts[:len(ideal_gains)]
    return float(gains @ discounts[:len(gains)] / ideal) if ideal > 0 else 0.0


def trec_metrics(ranked_ids: Sequence[Sequence[str]], qrels: Sequence[dict[str, int]]) -> dict[str, float]:
    """nDCG@10, MAP@100 and Recall@100 (×100) as trec_eval computes them, averaged over the queries."""
    ndcgs, aps, recalls = [], [], []
    for ids, judged in zip(ranked_ids, qrels, strict=True):
        relevant = sum(r > 0 for r in judged.values())
        hits = np.array([judged.get(doc, 0) > 0 for doc in ids], dtype=bool)
        ndcgs.append(graded_ndcg(ids, judged))
        aps.append(average_precision(hits[:MAP_CUTOFF], judged_relevant=relevant))
        recalls.append(hits[:RECALL_CUTOFF].sum() / relevant if relevant else 0.0)

    def mean(values: list[float]) -> float:
        return 100 * float(np.mean(values)) if values else 0.0

    return {f"ndcg@{NDCG_CUTOFF}": mean(ndcgs), f"map@{MAP_CUTOFF}": mean(aps),
            f"recall@{RECALL_CUTOFF}": mean(recalls), "n_queries": len(aps)}


class BeirRetrievalTask(OwnDataTask):
    def __init__(self, folder: Path, name: str, split: str | None = None, seed: int = 1111,
                 faiss_min_pool: int = FAISS_MIN_POOL) -> None:
        qrels_path = beir_split_path(folder, split)
        files = [folder / f for f in BEIR_FILES] + [qrels_path]
        missing = [str(f) for f in files if not f.exists()]
        if missing:
            raise InputFileError(f"{folder}: not a BEIR folder, missing {', '.join(missing)} (expected corpus.jsonl, "
                                 "queries.jsonl and qrels/<split>.tsv)")
        super().__init__(name, "retrieval", f"ndcg@{NDCG_CUTOFF}", files, seed)
        self.faiss_min_pool = faiss_min_pool
        corpus = _ids_and_texts(files[0], ("_id", "text"))
        queries = _ids_and_texts(files[1], ("_id", "text"))
        qrels = read_qrels(qrels_path)
        unknown = [q for q in qrels if q not in queries]
        if unknown:
            raise InputFileError(f"{qrels_path}: query-id {unknown[0]!r} is not in {files[1]}")
        judged = {q: j for q, j in qrels.items() if any(r > 0 for r in j.values())}
        self.dropped = len(qrels) - len(judged)
        if not judged:
            raise InputFileError(f"{qrels_path}: no query has a relevant document (score > 0)")
        self.qrels = list(judged.values())
        self.data = RetrievalSet(name, list(judged), [queries[q] for q in judged], list(corpus),
                                 list(corpus.values()), [set(j) for j in judged.values()])

    def supports(self, model: Any) -> bool:
        return hasattr(model, "encode") or (is_lexical(model) and callable(getattr(model, "search", None)))

    def texts(self) -> list[str]:
        return [*self.data.queries, *self.data.docs]

    def ranked_ids(self, model: Any) -> list[list[str]]:
        """The top 100 document ids of each query, leaving out a document with the query's own id."""
        found = search_pool(model, self.data, max(MAP_CUTOFF, RECALL_CUTOFF) + 1, self.faiss_min_pool)
        return [[doc for doc in ids if doc != qid][:max(MAP_CUTOFF, RECALL_CUTOFF)]
                for qid, ids in zip(self.data.query_ids, found)]

    def evaluate(self, model: Any) -> dict[str, Any]:
        return {**trec_metrics(self.ranked_ids(model), self.qrels), "n_dropped_without_relevant": self.dropped}

    def item_scores(self, model: Any) -> ItemScores:
        """Each query's graded nDCG@10 (×100): the main metric is their mean."""
        return ItemScores("mean", np.array([100 * graded_ndcg(ids, judged)
                                            for ids, judged in zip(self.ranked_ids(model), self.qrels)]))
