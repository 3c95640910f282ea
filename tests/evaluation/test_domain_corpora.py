"""In-domain corpora for the TSDAE domain experiments: read the standard layouts, keep test texts out."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, needs

from sentforge.data.near_duplicates import near_duplicates
from sentforge.support.errors import DataNotFoundError, InputFileError
from sentforge.evaluation.domain_corpora import (
    QL_2015_FILES,
    QL_TRAIN_CSV,
    TURL_TRAIN,
    qatarliving_corpus,
    twitterpara_corpus,
)
from sentforge.evaluation.tasks.pair_classification import PIT_DIR, TURL_TEST
from sentforge.evaluation.tasks.reranking import QL_DIR


def word_set(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def brute_force_jaccard_match(texts, heldout, threshold) -> list[bool]:
    result = []
    for text in texts:
        a = word_set(text)
        result.append(any(a and len(a & b) / len(a | b) >= threshold for b in map(word_set, heldout)))
    return result


def test_near_duplicates_match_a_brute_force_jaccard():
    rng = random.Random(0)
    vocabulary = [f"w{i}" for i in range(12)]
    texts = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 6))) for _ in range(40)] + ["", "?!"]
    heldout = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 6))) for _ in range(15)]
    for threshold in (0.3, 0.5, 0.8, 1.0):
        expected = brute_force_jaccard_match(texts, heldout, threshold)
        assert near_duplicates(texts, heldout, threshold, chunk_size=7).tolist() == expected
    assert 0 < sum(brute_force_jaccard_match(texts, heldout, 0.5)) < len(texts)  # the case is not trivial


def test_near_duplicates_ignore_case_punctuation_and_order():
    mask = near_duplicates(["The Bank, in Doha?", "bank doha the in", "a b c d", "x"], ["the bank in doha"])
    assert mask.tolist() == [True, True, False, False]
    assert near_duplicates([], ["a"]).shape == (0,) and not near_duplicates(["a"], []).any()


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_twitterpara(root: Path) -> None:
    write(root, f"{PIT_DIR}/test.data", "1\tt\tHello world again today\tgood morning to all\t4\n")
    write(root, f"{PIT_DIR}/test.label", "true\t0.8\n")
    write(root, TURL_TEST, "Stocks fall on Monday !\tmarkets drop sharply\t(1,6)\turl\n")


def test_twitterpara_corpus_drops_test_sentences_and_repeats(tmp_path):
    write_twitterpara(tmp_path)
    write(tmp_path, f"{TURL_TRAIN}/a.toks", "stocks fall on monday\nthe cat sleeps on the sofa\n\n"
                                             "the cat sleeps on the sofa\n")
    write(tmp_path, f"{TURL_TRAIN}/b.toks", "hello   world again , today\nnew phone released this week\n")
    corpus = twitterpara_corpus(tmp_path)
    assert corpus.texts == ["the cat sleeps on the sofa", "new phone released this week"]
    assert (corpus.distinct_read, corpus.dropped_heldout, corpus.heldout_texts) == (4, 2, 4)
    assert corpus.summary()["texts"] == 2


def test_twitterpara_corpus_needs_train_and_test_files(tmp_path):
    with pytest.raises(DataNotFoundError, match="a.toks not found"):
        twitterpara_corpus(tmp_path)
    write(tmp_path, f"{TURL_TRAIN}/a.toks", "a tweet here\n")
    write(tmp_path, f"{TURL_TRAIN}/b.toks", "another tweet here\n")
    with pytest.raises(DataNotFoundError, match="TwitterPara test files missing"):
        twitterpara_corpus(tmp_path)


def ql_2015(questions: list[tuple[str, str]]) -> str:
    items = "".join(f'<Question QID="Q{i}"><QSubject>{s}</QSubject><QBody>{b}</QBody>'
                    f'<Comment CID="Q{i}_C1"><CSubject>re</CSubject><CBody>a comment</CBody></Comment></Question>\n'
                    for i, (s, b) in enumerate(questions))
    return f"<root>\n{items}</root>\n"


def write_qatarliving(root: Path) -> None:
    write(root, f"{QL_DIR}/SemEval2016-Task3-CQA-QL-train-part1.xml", (
        '<?xml version="1.0" encoding="UTF-8"?>\n<xml><OrgQuestion ORGQ_ID="Q1"><OrgQSubject>Good bank'
        '</OrgQSubject><OrgQBody>Which is a good bank as per your experience in Doha</OrgQBody>'
        '<Thread THREAD_SEQUENCE="Q1_R1"><RelQuestion RELQ_ID="Q1_R1" RELQ_RELEVANCE2ORGQ="PerfectMatch">'
        "<RelQSubject>Fishing</RelQSubject><RelQBody>where to catch fish every week from the beach in Qatar"
        "</RelQBody></RelQuestion></Thread></OrgQuestion></xml>\n"))
    write(root, QL_2015_FILES[0], ql_2015([("Visa", "How long does the family visa take?"),
                                           ("Bank", "which is a good bank as per your experience in doha ??")]))
    write(root, QL_2015_FILES[1], ql_2015([("Fish", "Where to catch fish everyÂ week from the beach in Qatar"),
                                           ("Visa", "How long does the family visa take?")]))
    write(root, QL_2015_FILES[2], ql_2015([("Cars", "Best   used\ncar dealer near the airport")]))
    write(root, QL_TRAIN_CSV, "feature,question,rel_question,labels\n"
                              "a b,Is the metro open on Fridays?,\"Any dentist, open late, in Al Sadd?\",Relevant\n"
                              "a c,Is the metro open on Fridays?,Where can I renew my driving licence,Irrelevant\n")
    write(root, "cqa-qatarliving/cleaned/subtask-c/TEST-BASE.csv",
          "feature,question,answer,labels\nX,Where can I renew my driving licence?,go to the office,Good\n")


def test_qatarliving_corpus_keeps_evaluated_and_test_questions_out(tmp_path):
    write_qatarliving(tmp_path)
    corpus = qatarliving_corpus(tmp_path)
    assert corpus.texts == ["Visa How long does the family visa take?", "Cars Best used car dealer near the airport",
                            "Is the metro open on Fridays?", "Any dentist, open late, in Al Sadd?"]
    # dropped: the evaluated org question (lower-cased copy), its related question (an encoding-damaged
    # copy) and the licence question of the 2016 test CSV
    assert (corpus.distinct_read, corpus.dropped_heldout) == (7, 3)


def test_qatarliving_corpus_errors_name_the_file(tmp_path):
    with pytest.raises(DataNotFoundError, match="CQA-QL-trial.xml not found"):
        qatarliving_corpus(tmp_path)
    write_qatarliving(tmp_path)
    write(tmp_path, QL_TRAIN_CSV, "feature,question,labels\na,b,c\n")
    with pytest.raises(InputFileError, match="TRAIN-BASE.csv: no column 'rel_question'"):
        qatarliving_corpus(tmp_path)
    write(tmp_path, QL_2015_FILES[2], "<root><Question>")
    with pytest.raises(InputFileError, match="CQA-QL-test.xml, line 1, column .*: malformed XML"):
        qatarliving_corpus(tmp_path)


@pytest.mark.slow
@needs(DATA / "cqa-qatarliving")
@needs(DATA / "twitterpara")
def test_real_corpora_share_no_text_with_the_evaluation_data():
    from sentforge.evaluation.tasks.pair_classification import TwitterParaTask
    from sentforge.evaluation.tasks.reranking import QatarLivingCQATask

    questions = qatarliving_corpus(DATA)
    assert len(questions.texts) > 1000
    evaluated = [word_set(t) for t in dict.fromkeys(QatarLivingCQATask(DATA).texts())]
    worst = max(len(a & b) / len(a | b) for a in map(word_set, questions.texts) if a for b in evaluated)
    assert worst < 0.5

    tweets = twitterpara_corpus(DATA)
    assert len(tweets.texts) > 30000
    normalised = {" ".join(sorted(word_set(t))) for t in TwitterParaTask(DATA).texts()}
    assert not normalised & {" ".join(sorted(word_set(t))) for t in tweets.texts}
    assert np.mean([len(t.split()) for t in tweets.texts]) > 5
