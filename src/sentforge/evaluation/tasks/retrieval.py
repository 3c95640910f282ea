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

from functools import cached_property
from typing import Any

import numpy as np

from sentforge.evaluation.ranking import MAP_CUTOFF, NDCG_CUTOFF, retrieval_metrics
from sentforge.evaluation.readers.useb import RetrievalSet, read_cqadupstack
from sentforge.evaluation.search import FAISS_MIN_POOL, search_pool
from sentforge.evaluation.similarity import is_lexical
from sentforge.evaluation.task import Task, TaskMetadata


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
            result = retrieval_metrics(search_pool(model, forum, MAP_CUTOFF, self.faiss_min_pool), forum.relevant)
            metrics.update({f"{forum.name}.{name}": value for name, value in result.items()})
        for name in (f"map@{MAP_CUTOFF}", f"ndcg@{NDCG_CUTOFF}"):
            metrics[f"{name}_avg"] = float(np.mean([metrics[f"{f.name}.{name}"] for f in self.forums])) \
                if self.forums else 0.0
        return metrics


TASKS = (CQADupStackTask,)
