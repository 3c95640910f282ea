"""Re-ranking: each query comes with a short list of candidates; rank them by cosine similarity (or by BM25
for the lexical baseline) and score the ranking with mean average precision (×100), plus MRR@10.

Tasks (USEB family; see docs/useb.md):

- `AskUbuntu`: the USEB/TSDAE protocol on the AskUbuntu duplicate-question benchmark (Lei et al. 2016):
  `askubuntu/text_tokenized.txt` (`id<TAB>title<TAB>body`) and `askubuntu/test.txt`
  (`id<TAB>similar ids<TAB>candidate ids<TAB>BM25 scores`). Titles only (USEB's main metric); candidates
  are first put in BM25 order, which breaks ties; queries without a similar question are skipped.
- `QatarLivingCQA`: SemEval-2016 Task 3 subtask B (question–question similarity) on the official XML in
  `cqa-qatarliving/semeval2016-task3/` — the training part 1 that this data store holds (103 original
  questions, 613 related ones). `QatarLivingCQA-test2016` is the same protocol on the official test XML
  (with its gold labels), which runs when a user has that file. `PerfectMatch` and `Relevant` are relevant,
  as in the official scorer, which also keeps questions without a relevant candidate (AP 0) and breaks
  ties by the order of the file. A question's text is its subject and body.
- `WikiQA`: answer-sentence selection, test split (`wikiqa/test/{id.txt,a.toks,b.toks,sim.txt}`);
  questions without a correct answer are excluded, as is standard.
- `SciDocs`: USEB's SciDocs file (`scidocs/data.json`: a corpus of titles and, per subset cite / cocite /
  coread / coview, graded candidates of each query); MAP as pytrec_eval computes it (every judged relevant
  paper counts, ties go to the higher paper id), averaged over the four subsets (USEB's main metric).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from sentforge.evaluation.ranking import RankingQuery, candidate_scores, ranking_metrics
from sentforge.evaluation.readers.useb import (
    read_askubuntu,
    read_scidocs,
    read_semeval_question_similarity,
    read_wikiqa,
)
from sentforge.evaluation.similarity import supports_encoders_and_lexical
from sentforge.evaluation.task import Task, TaskMetadata


class RerankingTask(Task):
    """MAP and MRR@10 over the queries that `load` reads."""

    skip_without_positive: ClassVar[bool]

    def load(self) -> list[RankingQuery]:
        raise NotImplementedError

    @cached_property
    def queries(self) -> list[RankingQuery]:
        queries = self.load()
        return [q for q in queries if q.has_positive] if self.skip_without_positive else queries

    def supports(self, model: Any) -> bool:
        return supports_encoders_and_lexical(model)

    def texts(self) -> list[str]:
        return [text for q in self.queries for text in (q.query, *q.candidates)]

    def evaluate(self, model: Any) -> dict[str, Any]:
        return ranking_metrics(self.queries, candidate_scores(model, self.queries))


class AskUbuntuTask(RerankingTask):
    metadata = TaskMetadata(
        name="AskUbuntu", family="useb", main_metric="map",
        description="AskUbuntu duplicate questions, test: re-rank 20 BM25 candidates by title similarity",
        files=("askubuntu/text_tokenized.txt", "askubuntu/test.txt"),
        reference="Lei et al. 2016; USEB / TSDAE (Wang et al. 2021), map_askubuntu_title")
    skip_without_positive = True  # USEB skips queries without a gold similar question

    def load(self) -> list[RankingQuery]:
        pool, test = (self.data_dir / f for f in self.metadata.files)
        return read_askubuntu(pool, test, text="title")


QL_DIR = "cqa-qatarliving/semeval2016-task3"


class QatarLivingCQATask(RerankingTask):
    metadata = TaskMetadata(
        name="QatarLivingCQA", family="useb", main_metric="map",
        description="Qatar Living forum, SemEval-2016 Task 3 subtask B (question-question) on the official "
                    "training part 1 XML (103 original questions, 613 related); MAP as the official scorer",
        files=(f"{QL_DIR}/SemEval2016-Task3-CQA-QL-train-part1.xml",), splits=("train-part1",),
        reference="Nakov et al. 2016, SemEval-2016 Task 3")
    skip_without_positive = False  # the official scorer counts such questions with AP 0

    def load(self) -> list[RankingQuery]:
        return read_semeval_question_similarity(self.data_dir / self.metadata.files[0])


class QatarLivingCQATest2016Task(QatarLivingCQATask):
    metadata = TaskMetadata(
        name="QatarLivingCQA-test2016", family="useb", main_metric="map",
        description="Qatar Living forum, SemEval-2016 Task 3 subtask B official test XML with gold labels "
                    "(70 original questions); MAP as the official scorer",
        files=(f"{QL_DIR}/SemEval2016-Task3-CQA-QL-test.xml",),
        reference="Nakov et al. 2016, SemEval-2016 Task 3")


class WikiQATask(RerankingTask):
    metadata = TaskMetadata(
        name="WikiQA", family="useb", main_metric="map",
        description="WikiQA answer-sentence selection, test: re-rank each question's candidate sentences",
        files=tuple(f"wikiqa/test/{name}" for name in ("id.txt", "a.toks", "b.toks", "sim.txt")),
        reference="Yang et al. 2015")
    skip_without_positive = True  # standard: questions without a correct answer are excluded

    def load(self) -> list[RankingQuery]:
        return read_wikiqa(self.data_dir / "wikiqa/test")


class SciDocsTask(Task):
    metadata = TaskMetadata(
        name="SciDocs", family="useb", main_metric="map_avg",
        description="SciDocs cite / cocite / coread / coview, test: re-rank each paper's candidates by title "
                    "similarity; MAP per subset and their mean",
        files=("scidocs/data.json",),
        reference="Cohan et al. 2020; USEB / TSDAE (Wang et al. 2021), map_scidocs_cosine_avg")

    @cached_property
    def subsets(self) -> dict[str, list[RankingQuery]]:
        return read_scidocs(self.data_dir / self.metadata.files[0], "test")

    def supports(self, model: Any) -> bool:
        return supports_encoders_and_lexical(model)

    def texts(self) -> list[str]:
        return [text for queries in self.subsets.values() for q in queries for text in (q.query, *q.candidates)]

    def evaluate(self, model: Any) -> dict[str, Any]:
        metrics: dict[str, Any] = {}
        for subset, queries in self.subsets.items():
            result = ranking_metrics(queries, candidate_scores(model, queries))
            metrics.update({f"{subset}.map": result["map"], f"{subset}.n_queries": result["n_queries"]})
        metrics["map_avg"] = float(np.mean([metrics[f"{s}.map"] for s in self.subsets])) if self.subsets else 0.0
        return metrics


TASKS = (AskUbuntuTask, QatarLivingCQATask, QatarLivingCQATest2016Task, WikiQATask, SciDocsTask)
