"""Sentence-T5 training data (data/qa.py): Qatar Living, WikiQA and QQP question-answer pairs and NLI
triples, on small files written here (every layout, the evaluation files left out, errors that name
file and line) and, marked slow, on the real files with their counts."""

from __future__ import annotations

import logging

import pytest

from sentforge.data.qa import (nli_triples, read_nli_triples, read_qa_pairs, read_qatarliving, read_qqp_duplicates,
                               read_wikiqa_answers)
from sentforge.support.errors import InputFileError

from conftest import DATA, needs

SEMEVAL_2015 = """<root>
<Question QID="Q1" QCATEGORY="Life">
  <QSubject>Good bank?</QSubject>
  <QBody>Which bank
     is best in Doha?</QBody>
  <Comment CID="Q1_C1" CGOLD="Good"><CSubject>QNB</CSubject><CBody>QNB is good.</CBody></Comment>
  <Comment CID="Q1_C2" CGOLD="Bad"><CSubject>lol</CSubject><CBody>lol</CBody></Comment>
  <Comment CID="Q1_C3" CGOLD="Good"><CSubject>Try</CSubject><CBody>Try Commercial
Bank.</CBody></Comment>
</Question>
<Question QID="Q2"><QSubject>Visa</QSubject><QBody></QBody>
  <Comment CID="Q2_C1" CGOLD="Potential"><CBody>Ask the embassy.</CBody></Comment>
  <Comment CID="Q2_C2" CGOLD="Good"><CBody>Apply online.</CBody></Comment>
</Question>
</root>
"""
TRIAL_2015 = """<root>
<Question QID = "Q1" CATEGORY = "Advice">
  <Short_Question> Oil baths? </Short_Question>
  <Full_Question> Any spa with oil baths? </Full_Question>
  <Comment CID = "Q1_C1" ANNOTATION = "good "><Subject> Try </Subject><Body> Try Al Sharq Spa.</Body></Comment>
  <Comment CID = "Q1_C2" ANNOTATION = "bad"><Subject> no </Subject><Body> no idea</Body></Comment>
</Question>
</root>
"""
SEMEVAL_2016 = """<?xml version="1.0" encoding="UTF-8"?>
<xml>
<OrgQuestion ORGQ_ID="Q1"><OrgQSubject>Bank</OrgQSubject><OrgQBody>Best bank?</OrgQBody>
  <Thread THREAD_SEQUENCE="Q1_R1">
    <RelQuestion RELQ_ID="Q1_R1"><RelQSubject>Salary account</RelQSubject><RelQBody>Where?</RelQBody></RelQuestion>
    <RelComment RELC_ID="Q1_R1_C1" RELC_RELEVANCE2ORGQ="Bad" RELC_RELEVANCE2RELQ="Good">
      <RelCText>At QNB.</RelCText></RelComment>
    <RelComment RELC_ID="Q1_R1_C2" RELC_RELEVANCE2ORGQ="Good" RELC_RELEVANCE2RELQ="Bad">
      <RelCText>Hi</RelCText></RelComment>
  </Thread>
</OrgQuestion>
<OrgQuestion ORGQ_ID="Q2"><OrgQSubject>Salary</OrgQSubject><OrgQBody>Account?</OrgQBody>
  <Thread THREAD_SEQUENCE="Q1_R1">
    <RelQuestion RELQ_ID="Q1_R1"><RelQSubject>Salary account</RelQSubject><RelQBody>Where?</RelQBody></RelQuestion>
    <RelComment RELC_ID="Q1_R1_C1" RELC_RELEVANCE2ORGQ="Good" RELC_RELEVANCE2RELQ="Good">
      <RelCText>At QNB.</RelCText></RelComment>
  </Thread>
</OrgQuestion>
</xml>
"""
ORIGINAL_ONLY_2016 = SEMEVAL_2016.replace('RELC_RELEVANCE2RELQ="Good"', 'RELC_RELEVANCE2RELQ="N/A"') \
    .replace('RELC_RELEVANCE2RELQ="Bad"', 'RELC_RELEVANCE2RELQ="N/A"')


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- Qatar Living ----------------------------------------------------------------------------------

def test_qatarliving_layouts(tmp_path):
    assert read_qatarliving(write(tmp_path / "a.xml", SEMEVAL_2015)) == [
        ("Good bank? Which bank is best in Doha?", "QNB is good."),
        ("Good bank? Which bank is best in Doha?", "Try Commercial Bank."),
        ("Visa", "Apply online.")]
    assert read_qatarliving(write(tmp_path / "trial.xml", TRIAL_2015)) == [
        ("Oil baths? Any spa with oil baths?", "Try Al Sharq Spa.")]
    # Labels against the related question count, not those against the original one; a thread listed
    # under two original questions gives its pairs once.
    assert read_qatarliving(write(tmp_path / "b.xml", SEMEVAL_2016)) == [("Salary account Where?", "At QNB.")]


def test_qatarliving_folder_leaves_out_evaluation_files(tmp_path, caplog):
    root = tmp_path / "cqa-qatarliving"
    write(root / "semeval2015-task3/CQA-QL-devel.xml", SEMEVAL_2015)
    write(root / "semeval2015-task3/CQA-QL-trial.xml", TRIAL_2015)
    write(root / "semeval2016-task3/SemEval2016-Task3-CQA-QL-train-part1.xml", ORIGINAL_ONLY_2016)
    write(root / "semeval2016-task3/SemEval2016-Task3-CQA-QL-test.xml", SEMEVAL_2016)
    write(root / "cleaned/subtask-a/VAL-BASE.csv", "feature,question,answer,labels\nx,y,z,Good\n")
    with caplog.at_level(logging.INFO, logger="sentforge.data.qa"):
        pairs = read_qa_pairs(root)
    assert len(pairs) == 4 and ("Salary account Where?", "At QNB.") not in pairs
    assert "train-part1.xml: 0 question-answer pairs" in caplog.text
    with pytest.raises(InputFileError, match="no comment is labelled Good"):
        read_qatarliving(root / "semeval2016-task3/SemEval2016-Task3-CQA-QL-train-part1.xml")


def test_qatarliving_errors_name_the_file(tmp_path):
    broken = write(tmp_path / "broken.xml", "<root>\n<Question QID='Q1'>\n</root>\n")
    with pytest.raises(InputFileError, match=r"broken.xml, line 3"):
        read_qa_pairs(broken)
    with pytest.raises(InputFileError, match="no Question or Thread"):
        read_qa_pairs(write(tmp_path / "other.xml", "<root><item/></root>"))


# --- WikiQA ----------------------------------------------------------------------------------------

def write_wikiqa(directory, rows):
    for name, column in (("a.toks", 0), ("b.toks", 1), ("sim.txt", 2)):
        write(directory / name, "".join(f"{row[column]}\n" for row in rows))
    write(directory / "id.txt", "".join(f"{i}\n" for i, _ in enumerate(rows)))


def test_wikiqa_positives_of_train_and_dev(tmp_path):
    root = tmp_path / "wikiqa"
    write_wikiqa(root / "train", [("how are caves formed ?", "rain .", 0), ("how are caves formed ?", "by ice .", 1),
                                  ("who won ?", "the red team .", 1), ("who won ?", "the red team .", 1)])
    write_wikiqa(root / "dev", [("what is tea ?", "a drink .", 1)])
    write_wikiqa(root / "test", [("test question ?", "test answer .", 1)])
    expected = [("how are caves formed ?", "by ice ."), ("who won ?", "the red team ."), ("what is tea ?", "a drink .")]
    assert read_qa_pairs(root) == expected
    assert read_qa_pairs(root / "test") == [("test question ?", "test answer .")]
    assert read_wikiqa_answers(root, splits=("dev",)) == [("what is tea ?", "a drink .")]


def test_wikiqa_errors(tmp_path):
    write_wikiqa(tmp_path / "bad", [("q ?", "a .", 1), ("q ?", "b .", "yes")])
    with pytest.raises(InputFileError, match=r"sim.txt, line 2: label must be 0 or 1, not 'yes'"):
        read_qa_pairs(tmp_path / "bad")
    write_wikiqa(tmp_path / "short", [("q ?", "a .", 1)])
    write(tmp_path / "short/b.toks", "a .\nb .\n")
    with pytest.raises(InputFileError, match="must have one line per pair each"):
        read_qa_pairs(tmp_path / "short")


# --- QQP -------------------------------------------------------------------------------------------

QQP_ROWS = [("1", "11", "12", "How do I learn Python?", "What is the best way to learn Python?", "1"),
            ("2", "13", "14", "Is tea healthy?", "Why is the sky blue?", "0"),
            ("3", "15", "16", "How old is the moon?", "What is the age of the moon?", "1")]


def qqp_text(rows):
    return "".join("\t".join(row) + "\n" for row in rows)


def test_qqp_duplicates_with_or_without_header(tmp_path, caplog):
    expected = [("How do I learn Python?", "What is the best way to learn Python?"),
                ("How old is the moon?", "What is the age of the moon?")]
    assert read_qqp_duplicates(write(tmp_path / "plain.tsv", qqp_text(QQP_ROWS))) == expected
    header = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
    assert read_qa_pairs(write(tmp_path / "glue/train.tsv", header + qqp_text(QQP_ROWS))) == expected
    assert read_qa_pairs(tmp_path / "glue") == expected  # a folder of QQP files
    # A broken row (as in GLUE's QQP) is skipped with a warning that names its line.
    broken = QQP_ROWS + [("9", "1", "2", "a broken row 1"), (*QQP_ROWS[1][:5], "maybe")]
    with caplog.at_level(logging.WARNING, logger="sentforge.data.nli"):
        assert read_qqp_duplicates(write(tmp_path / "broken.tsv", qqp_text(broken))) == expected
    assert "broken.tsv:4" in caplog.text and "broken.tsv:5" in caplog.text
    with pytest.raises(InputFileError, match="holds no question-answer pairs"):
        read_qa_pairs(write(tmp_path / "no_duplicates.tsv", qqp_text(QQP_ROWS[1:2])))


def test_pair_tables_and_unknown_inputs(tmp_path):
    table = write(tmp_path / "pairs.tsv", "sentence1\tsentence2\nwhat is tea ?\ta drink\nwhat is tea ?\ta drink\n")
    assert read_qa_pairs(table) == [("what is tea ?", "a drink")]
    with pytest.raises(InputFileError, match="bad.csv:2"):
        read_qa_pairs(write(tmp_path / "bad.csv", "question,answer\nq,a\n"))
    with pytest.raises(InputFileError, match="unsupported QA data"):
        read_qa_pairs(write(tmp_path / "notes.md", "hello"))
    with pytest.raises(InputFileError, match="not found"):
        read_qa_pairs(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputFileError, match="not a WikiQA, Qatar Living or QQP folder"):
        read_qa_pairs(tmp_path / "empty")


# --- NLI triples -----------------------------------------------------------------------------------

def test_triples_group_by_premise():
    pairs = [("p1", "e1", "entailment"), ("p1", "n1", "neutral"), ("p1", "c1", "contradiction"),
             ("p1", "e2", "entailment"), ("p1", "c2", "CONTRADICTION"), ("p1", "e3", "entailment"),
             ("p2", "e4", "entailment"), ("p2", "n2", "neutral"),  # no contradiction: no triple
             ("p3", "c3", "contradiction"),  # no entailment: no triple
             ("c5", "p4", "contradiction"), ("p4", "e5", "entailment"),  # contradiction read both ways
             ("p5", "e6", None)]
    assert nli_triples(pairs) == [("p1", "e1", "c1"), ("p1", "e2", "c2"), ("p1", "e3", "c1"), ("p4", "e5", "c5")]


def test_triples_from_snli_and_sick_files(tmp_path):
    snli = tmp_path / "SNLI"
    for split, offset in (("dev", 0), ("test", 10)):
        write(snli / f"s1.{split}", "".join(f"premise {offset + i} .\n" for i in range(2) for _ in range(3)))
        write(snli / f"s2.{split}", "".join(f"{kind} {offset + i} .\n" for i in range(2)
                                            for kind in ("same", "other", "maybe")))
        write(snli / f"labels.{split}", "entailment\ncontradiction\nneutral\n" * 2)
    assert read_nli_triples(snli) == [(f"premise {k} .", f"same {k} .", f"other {k} .") for k in (0, 1, 10, 11)]
    sick = write(tmp_path / "SICK_train.txt",
                 "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
                 "1\tA kid plays\tA child plays\t4.5\tENTAILMENT\n"
                 "2\tA kid plays\tNobody plays\t1.5\tCONTRADICTION\n"
                 "3\tA dog runs\tAn animal runs\t4.0\tENTAILMENT\n")
    assert read_nli_triples(sick) == [("A kid plays", "A child plays", "Nobody plays")]
    neutral = write(tmp_path / "neutral.tsv", "sentence1\tsentence2\tlabel\na\tb\tneutral\n")
    with pytest.raises(InputFileError, match="no premise has both"):
        read_nli_triples(neutral)


# --- the real files --------------------------------------------------------------------------------

@pytest.mark.slow
@needs(DATA / "cqa-qatarliving")
def test_real_qa_and_nli_counts():
    cqa = read_qa_pairs(DATA / "cqa-qatarliving")
    # SemEval-2015 Good comments (devel 875, test 997, trial 275 with the spaced label), minus empty
    # bodies and duplicates; the 2016 part 1 labels comments only against original questions.
    assert len(cqa) == 2135
    assert ("from DUBAI to QATAR i am currently working here in dubai and i got an offer from qatar company.. they "
            "offered 8000QAR +camp accommodation +meal and transportation is provided by the company... will this "
            "be enough to accept the offer? how good is the transportation there in qatar?") == cqa[0][0]
    wikiqa = read_qa_pairs(DATA / "wikiqa")
    assert len(wikiqa) == 1180  # train 1040 + dev 140 answers labelled 1
    assert wikiqa[0] == ("how are glacier caves formed ?",
                         "a glacier cave is a cave formed within the ice of a glacier .")
    assert len(read_qa_pairs(DATA / "glue/qqp-partial")) == 8747  # the README's duplicate count
    snli = read_nli_triples(DATA / "senteval/downstream/SNLI")
    sick = read_nli_triples(DATA / "senteval/downstream/SICK/SICK_train.txt")
    assert (len(snli), len(sick)) == (6338, 253)
    assert all(negative not in (premise, positive) for premise, positive, negative in snli + sick)
