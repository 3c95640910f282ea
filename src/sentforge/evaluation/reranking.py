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

Average precision over a candidate list divides by the relevant candidates in that list (USEB's and
SemEval's convention) unless a query says how many relevant documents were judged (SciDocs).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sentforge.errors import InputFileError
from sentforge.evaluation.sts import read_lines
from sentforge.evaluation.task import Task, TaskMetadata, register_task

MRR_CUTOFF = 10


# ---------------------------------------------------------------------------------------------------------
# Models: encoders (cosine) and lexical scorers (BM25)
# ---------------------------------------------------------------------------------------------------------

def is_lexical(model: Any) -> bool:
    """A lexical scorer (the BM25 baseline) scores texts directly instead of encoding them."""
    return not hasattr(model, "encode") and callable(getattr(model, "score", None))


def supports_encoders_and_lexical(model: Any) -> bool:
    return hasattr(model, "encode") or is_lexical(model)


def unit_embeddings(encoder: Any, texts: Sequence[str]) -> tuple[dict[str, int], np.ndarray]:
    """Each distinct text's row in an L2-normalised embedding matrix (a zero vector stays zero)."""
    distinct = list(dict.fromkeys(texts))
    vectors = np.asarray(encoder.encode(distinct), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return {text: i for i, text in enumerate(distinct)}, vectors


# ---------------------------------------------------------------------------------------------------------
# Rankings and metrics
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RankingQuery:
    """A query, its candidates in tie-breaking order, and which candidates are relevant."""

    qid: str
    query: str
    candidates: tuple[str, ...]
    relevant: tuple[bool, ...]
    # Relevant documents judged for the query, counting any that are not among the candidates (trec_eval's
    # AP denominator); None: the relevant candidates.
    judged_relevant: int | None = None

    @property
    def has_positive(self) -> bool:
        return any(self.relevant)


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


# ---------------------------------------------------------------------------------------------------------
# Readers
# ---------------------------------------------------------------------------------------------------------

def _fields(line: str, path: Path, line_no: int, count: int, layout: str) -> list[str]:
    fields = line.rstrip("\r").split("\t")
    if len(fields) != count:
        raise InputFileError(f"{path}, line {line_no}: expected {count} tab-separated fields ({layout}), "
                             f"found {len(fields)}")
    return fields


def read_askubuntu(pool_path: Path, eval_path: Path, text: str = "title") -> list[RankingQuery]:
    """AskUbuntu (Lei et al. 2016) as USEB reads it: the question pool and one dev/test file. `text` picks
    the question's title, body or "title_and_body" (joined by a space)."""
    if text not in ("title", "body", "title_and_body"):
        raise InputFileError(f"AskUbuntu text must be title, body or title_and_body, not {text!r}")
    pool: dict[str, str] = {}
    for line_no, line in enumerate(read_lines(pool_path), 1):
        qid, title, body = (f.strip() for f in _fields(line, pool_path, line_no, 3, "id, title, body"))
        pool[qid] = {"title": title, "body": body, "title_and_body": f"{title} {body}"}[text]
    queries = []
    for line_no, line in enumerate(read_lines(eval_path), 1):
        qid, similar, candidates, bm25 = _fields(line, eval_path, line_no, 4,
                                                 "id, similar ids, candidate ids, BM25 scores")
        qid, similar_ids, candidate_ids = qid.strip(), set(similar.split()), candidates.split()
        try:
            bm25_scores = [float(s) for s in bm25.split()]
        except ValueError:
            raise InputFileError(f"{eval_path}, line {line_no}: BM25 scores must be numbers") from None
        if len(bm25_scores) != len(candidate_ids):
            raise InputFileError(f"{eval_path}, line {line_no}: {len(candidate_ids)} candidates but "
                                 f"{len(bm25_scores)} BM25 scores")
        missing = [i for i in (qid, *candidate_ids) if i not in pool]
        if missing:
            raise InputFileError(f"{eval_path}, line {line_no}: question id {missing[0]} is not in {pool_path}")
        in_bm25_order = [candidate_ids[i] for i in rank_order(np.asarray(bm25_scores))]
        queries.append(RankingQuery(qid, pool[qid], tuple(pool[c] for c in in_bm25_order),
                                    tuple(c in similar_ids for c in in_bm25_order)))
    return queries


SEMEVAL_RELEVANCE = {"PerfectMatch": True, "Relevant": True, "Irrelevant": False}


def _joined(*parts: str | None) -> str:
    return " ".join(p.strip() for p in parts if p and p.strip())


def read_semeval_question_similarity(path: Path) -> list[RankingQuery]:
    """SemEval-2016/2017 Task 3 subtask B XML: per `OrgQuestion` (one element per thread, repeated), the
    related questions of its threads with their `RELQ_RELEVANCE2ORGQ` label, in file order."""
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        raise InputFileError(f"{path}: file not found") from None
    except ET.ParseError as err:
        line, column = err.position
        raise InputFileError(f"{path}, line {line}, column {column}: malformed XML") from None
    grouped: dict[str, tuple[str, list[str], list[bool]]] = {}
    for original in root.iter("OrgQuestion"):
        qid = original.get("ORGQ_ID")
        if not qid:
            raise InputFileError(f"{path}: an OrgQuestion has no ORGQ_ID attribute")
        text = _joined(original.findtext("OrgQSubject"), original.findtext("OrgQBody"))
        _, candidates, relevant = grouped.setdefault(qid, (text, [], []))
        threads = original.findall("Thread")
        if not threads:
            raise InputFileError(f"{path}: OrgQuestion {qid} has no Thread")
        for thread in threads:
            related = thread.find("RelQuestion")
            if related is None:
                raise InputFileError(f"{path}: a Thread of OrgQuestion {qid} has no RelQuestion")
            label = related.get("RELQ_RELEVANCE2ORGQ")
            if label not in SEMEVAL_RELEVANCE:
                raise InputFileError(f"{path}: RelQuestion {related.get('RELQ_ID')} of OrgQuestion {qid} has "
                                     f"RELQ_RELEVANCE2ORGQ={label!r}; expected one of "
                                     f"{', '.join(SEMEVAL_RELEVANCE)} (gold labels are needed)")
            candidates.append(_joined(related.findtext("RelQSubject"), related.findtext("RelQBody")))
            relevant.append(SEMEVAL_RELEVANCE[label])
    if not grouped:
        raise InputFileError(f"{path}: no OrgQuestion elements; expected SemEval Task 3 subtask B XML")
    return [RankingQuery(qid, text, tuple(candidates), tuple(relevant))
            for qid, (text, candidates, relevant) in grouped.items()]


def read_wikiqa(split_dir: Path) -> list[RankingQuery]:
    """WikiQA in the a.toks / b.toks / sim.txt / id.txt layout: one question–candidate pair per line,
    grouped by question id in file order."""
    files = {name: split_dir / name for name in ("id.txt", "a.toks", "b.toks", "sim.txt")}
    columns = {name: read_lines(path) for name, path in files.items()}
    lengths = {len(lines) for lines in columns.values()}
    if len(lengths) != 1:
        counts = ", ".join(f"{name} {len(lines)}" for name, lines in columns.items())
        raise InputFileError(f"{split_dir}: the WikiQA files must have one line per pair each; lines: {counts}")
    grouped: dict[str, tuple[str, list[str], list[bool]]] = {}
    for line_no, (qid, question, answer, label) in enumerate(zip(*columns.values()), 1):
        if label.strip() not in ("0", "1"):
            raise InputFileError(f"{files['sim.txt']}, line {line_no}: label must be 0 or 1, not {label!r}")
        if not qid.strip():
            raise InputFileError(f"{files['id.txt']}, line {line_no}: empty question id")
        _, candidates, relevant = grouped.setdefault(qid.strip(), (question.strip(), [], []))
        candidates.append(answer.strip())
        relevant.append(label.strip() == "1")
    return [RankingQuery(qid, text, tuple(candidates), tuple(relevant))
            for qid, (text, candidates, relevant) in grouped.items()]


SCIDOCS_SUBSETS = ("cite", "cocite", "coread", "coview")


def read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise InputFileError(f"{path}: file not found") from None
    except json.JSONDecodeError as err:
        raise InputFileError(f"{path}, line {err.lineno}, column {err.colno}: malformed JSON ({err.msg})") from None
    except UnicodeDecodeError as err:
        raise InputFileError(f"{path}: not valid UTF-8 ({err.reason})") from None


def read_scidocs(path: Path, split: str = "test") -> dict[str, list[RankingQuery]]:
    """USEB's SciDocs `data.json`: `corpus` maps paper ids to records with a `title`; `<split>` maps each
    subset to `{query id: {paper id: relevance}}`. Papers without a title are left out (USEB), but a
    relevant one still counts in its query's AP denominator (pytrec_eval)."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("corpus"), dict) or not isinstance(data.get(split), dict):
        raise InputFileError(f"{path}: expected a JSON object with 'corpus' and '{split}' objects")
    corpus = data["corpus"]

    def title(pid: str) -> str:
        record = corpus.get(pid)
        if record is not None and not isinstance(record, dict):
            raise InputFileError(f"{path}: corpus entry {pid!r} must be an object with a 'title'")
        return ((record or {}).get("title") or "").strip()

    subsets = {}
    for subset, qrels in data[split].items():
        if not isinstance(qrels, dict):
            raise InputFileError(f"{path}: {split}.{subset} must map query ids to {{paper id: relevance}}")
        queries = []
        for qid, judged in qrels.items():
            if not isinstance(judged, dict) or not all(isinstance(r, int) for r in judged.values()):
                raise InputFileError(f"{path}: {split}.{subset}.{qid} must map paper ids to integer relevance")
            if not title(qid):
                continue
            # trec_eval breaks score ties by descending document id; a stable sort on this order does too.
            pids = sorted((pid for pid in judged if title(pid)), reverse=True)
            queries.append(RankingQuery(qid, title(qid), tuple(title(pid) for pid in pids),
                                        tuple(judged[pid] > 0 for pid in pids),
                                        judged_relevant=sum(r > 0 for r in judged.values())))
        subsets[subset] = queries
    return subsets


# ---------------------------------------------------------------------------------------------------------
# Tasks
# ---------------------------------------------------------------------------------------------------------

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


@register_task
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


@register_task
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


@register_task
class QatarLivingCQATest2016Task(QatarLivingCQATask):
    metadata = TaskMetadata(
        name="QatarLivingCQA-test2016", family="useb", main_metric="map",
        description="Qatar Living forum, SemEval-2016 Task 3 subtask B official test XML with gold labels "
                    "(70 original questions); MAP as the official scorer",
        files=(f"{QL_DIR}/SemEval2016-Task3-CQA-QL-test.xml",),
        reference="Nakov et al. 2016, SemEval-2016 Task 3")


@register_task
class WikiQATask(RerankingTask):
    metadata = TaskMetadata(
        name="WikiQA", family="useb", main_metric="map",
        description="WikiQA answer-sentence selection, test: re-rank each question's candidate sentences",
        files=tuple(f"wikiqa/test/{name}" for name in ("id.txt", "a.toks", "b.toks", "sim.txt")),
        reference="Yang et al. 2015")
    skip_without_positive = True  # standard: questions without a correct answer are excluded

    def load(self) -> list[RankingQuery]:
        return read_wikiqa(self.data_dir / "wikiqa/test")


@register_task
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
