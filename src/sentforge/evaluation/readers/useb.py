"""Readers of the USEB domain benchmarks' files: AskUbuntu, SemEval-2016/2017 Task 3 (Qatar Living) XML,
WikiQA, SciDocs and CQADupStack (re-ranking and retrieval), PIT-2015 and the Twitter URL corpus
(paraphrase identification). Where a distribution orders or labels in its own way, the reader says how.
WikiQA's reader lives in `sentforge.data.ranking_queries` (training reads WikiQA too) and is named here."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sentforge.data.files import read_json, read_lines
from sentforge.data.ranking_queries import read_wikiqa as read_wikiqa
from sentforge.support.errors import InputFileError
from sentforge.evaluation.ranking import RankingQuery, rank_order


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


DEBATABLE = -1


@dataclass(frozen=True)
class LabelledPairs:
    """Sentence pairs with a binary label (1 paraphrase, 0 not, -1 debatable) and a graded gold score."""

    name: str
    sentences1: list[str]
    sentences2: list[str]
    labels: np.ndarray
    gold: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


def _paraphrase_label(graded: int) -> int:
    """USEB's mapping of a 0–5 expert label or a 0–6 vote count: above 3 yes, below 3 no, 3 debatable."""
    return 1 if graded > 3 else 0 if graded < 3 else DEBATABLE


PIT_LABEL_FILE_VALUES = {1: "true", 0: "false", DEBATABLE: "----"}


def read_pit2015_test(data_path: Path, label_path: Path) -> LabelledPairs:
    """PIT-2015 test: `test.data` rows with the expert label in the fifth column, checked against `test.label`."""
    rows, label_lines = read_lines(data_path), read_lines(label_path)
    if len(rows) != len(label_lines):
        raise InputFileError(f"{data_path} has {len(rows)} lines but {label_path} has {len(label_lines)}; "
                             "they must pair up line by line")
    first, second, labels, gold = [], [], [], []
    for line_no, (row, label_line) in enumerate(zip(rows, label_lines), 1):
        fields = row.split("\t")
        if len(fields) < 5:
            raise InputFileError(f"{data_path}, line {line_no}: expected at least 5 tab-separated fields "
                                 f"(topic id, topic, sentence 1, sentence 2, label), found {len(fields)}")
        if fields[4].strip() not in ("0", "1", "2", "3", "4", "5"):
            raise InputFileError(f"{data_path}, line {line_no}: expert label must be 0-5, not {fields[4]!r}")
        graded = int(fields[4])
        label = _paraphrase_label(graded)
        binary = label_line.split("\t")[0].strip()
        if binary != PIT_LABEL_FILE_VALUES[label]:
            raise InputFileError(f"{label_path}, line {line_no}: says {binary!r} but label {graded} in "
                                 f"{data_path} means {PIT_LABEL_FILE_VALUES[label]!r}")
        first.append(fields[2].strip())
        second.append(fields[3].strip())
        labels.append(label)
        gold.append(graded)
    return LabelledPairs("pit", first, second, np.asarray(labels), np.asarray(gold, dtype=np.float64))


VOTES = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)")


def read_twitter_url_corpus(path: Path) -> LabelledPairs:
    """Twitter URL corpus: `sentence1<TAB>sentence2<TAB>(n,6)<TAB>url`, n of 6 annotators saying paraphrase."""
    first, second, labels, gold = [], [], [], []
    for line_no, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 3:
            raise InputFileError(f"{path}, line {line_no}: expected at least 3 tab-separated fields "
                                 f"(sentence 1, sentence 2, (n,6) votes), found {len(fields)}")
        votes = VOTES.fullmatch(fields[2].strip())
        if votes is None or int(votes[1]) > int(votes[2]):
            raise InputFileError(f"{path}, line {line_no}: votes must look like (n,6) with n <= 6, "
                                 f"not {fields[2]!r}")
        positive = int(votes[1])
        first.append(fields[0].strip())
        second.append(fields[1].strip())
        labels.append(_paraphrase_label(positive))
        gold.append(positive)
    return LabelledPairs("turl", first, second, np.asarray(labels), np.asarray(gold, dtype=np.float64))
