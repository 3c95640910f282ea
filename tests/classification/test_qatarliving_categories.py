"""The Qatar Living categories set of benchmarks/classes (qatarliving_categories.py) on small written XML files in
SemEval 2016's and 2015's layouts (and 2015's trial layout): the texts as the forum shows them, one row per
text, no test text in training, the category rule, bad files refused; and the set through setfit_ab.py's
SETS and labels_check.py's split (a third of a small training side as dev)."""

from __future__ import annotations

import argparse
import importlib

import pytest
from conftest import REPO

# 2016: related questions under original questions (which carry no category), commas exported as ';',
# CSV quoting, HTML entities kept as text; the same related question twice, under two original questions.
XML_2016 = """<?xml version="1.0" encoding="UTF-8"?>
<xml version="1.0">
<OrgQuestion ORGQ_ID="Q1"><OrgQSubject>Good bank</OrgQSubject><OrgQBody>Which bank?</OrgQBody>
  <Thread THREAD_SEQUENCE="Q1_R1">
    <RelQuestion RELQ_ID="Q1_R1" RELQ_CATEGORY="Advice and Help">
      <RelQSubject>Best Bank</RelQSubject>
      <RelQBody>Hi Guys; which   bank
        is best? I&amp;#39;m new</RelQBody>
    </RelQuestion>
    <RelComment RELC_ID="Q1_R1_C1"><RelCText>Commercial bank</RelCText></RelComment>
  </Thread>
</OrgQuestion>
<OrgQuestion ORGQ_ID="Q2"><OrgQSubject>Bank</OrgQSubject><OrgQBody>A bank?</OrgQBody>
  <Thread THREAD_SEQUENCE="Q2_R1">
    <RelQuestion RELQ_ID="Q2_R1" RELQ_CATEGORY="Advice and Help">
      <RelQSubject>Best Bank</RelQSubject><RelQBody>Hi Guys; which bank is best? I&amp;#39;m new</RelQBody>
    </RelQuestion>
  </Thread>
  <Thread THREAD_SEQUENCE="Q2_R2">
    <RelQuestion RELQ_ID="Q2_R2" RELQ_CATEGORY="Visas and Permits">
      <RelQSubject>"What is ""RP""?</RelQSubject><RelQBody>Is it a visa; or not?"</RelQBody>
    </RelQuestion>
  </Thread>
  <Thread THREAD_SEQUENCE="Q2_R3">
    <RelQuestion RELQ_ID="Q2_R3" RELQ_CATEGORY="Qatar Living Lounge">
      <RelQSubject>Hello QL</RelQSubject><RelQBody>Anyone awake?</RelQBody>
    </RelQuestion>
  </Thread>
</OrgQuestion>
</xml>
"""
# 2015: the forum's subject is the body's opening (kept once); the second question is also a test question.
XML_2015 = """<root>
<Question QID="Q1" QCATEGORY="Visas and Permits" QTYPE="GENERAL">
  <QSubject>How long does a visit visa take?</QSubject>
  <QBody>How long does a visit visa take? For my mother, thanks</QBody>
  <Comment CID="Q1_C1"><CSubject>RE</CSubject><CBody>a week</CBody></Comment>
</Question>
<Question QID="Q2" QCATEGORY="Advice and Help"><QSubject>Cheap cafe</QSubject><QBody>Where, in Doha?</QBody>
</Question>
</root>
"""
XML_TRIAL = """<root>
<Question QID = "Q1" CATEGORY = "Visas and Permits" QTYPE = "GENERAL">
  <Short_Question> Exit permit </Short_Question> <Full_Question> </Full_Question>
</Question>
</root>
"""
XML_TEST = """<root>
<Question QID="Q9" QCATEGORY="Advice and Help"><QSubject>Cheap cafe</QSubject><QBody>Where, in Doha?</QBody>
</Question>
<Question QID="Q10" QCATEGORY="Visas and Permits"><QSubject>Family visa</QSubject><QBody>Salary needed?</QBody>
</Question>
<Question QID="Q11" QCATEGORY="Visas and Permits"><QSubject>Family visa</QSubject><QBody>Salary needed?</QBody>
</Question>
<Question QID="Q12" QCATEGORY="Qatar Living Lounge"><QSubject>Bored</QSubject><QBody>Any plans?</QBody>
</Question>
</root>
"""


@pytest.fixture()
def categories(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    monkeypatch.syspath_prepend(str(REPO / "benchmarks" / "classes"))
    return importlib.import_module("qatarliving_categories")


def write_files(folder) -> tuple[list, object]:
    paths = {}
    for name, text in (("2016.xml", XML_2016), ("2015.xml", XML_2015), ("trial.xml", XML_TRIAL),
                       ("test.xml", XML_TEST)):
        paths[name] = folder / name
        paths[name].write_text(text, encoding="utf-8")
    return [paths["2016.xml"], paths["2015.xml"], paths["trial.xml"]], paths["test.xml"]


def test_each_layout_read_as_the_forum_shows_it(categories, tmp_path):
    train_paths, _ = write_files(tmp_path)
    assert categories.read_questions(train_paths[0]) == [
        ("Best Bank Hi Guys, which bank is best? I'm new", "Advice and Help"),
        ("Best Bank Hi Guys, which bank is best? I'm new", "Advice and Help"),
        ('What is "RP"? Is it a visa, or not?', "Visas and Permits"),
        ("Hello QL Anyone awake?", "Qatar Living Lounge")]
    assert categories.read_questions(train_paths[1]) == [
        ("How long does a visit visa take? For my mother, thanks", "Visas and Permits"),
        ("Cheap cafe Where, in Doha?", "Advice and Help")]
    assert categories.read_questions(train_paths[2]) == [("Exit permit", "Visas and Permits")]


def test_distinct_texts_and_no_test_text_in_training(categories, tmp_path):
    train, test = categories.read_qatarliving(*write_files(tmp_path), min_train=1, min_test=1)
    assert train == [("Best Bank Hi Guys, which bank is best? I'm new", "Advice and Help"),
                     ('What is "RP"? Is it a visa, or not?', "Visas and Permits"),
                     ("How long does a visit visa take? For my mother, thanks", "Visas and Permits"),
                     ("Exit permit", "Visas and Permits")]
    assert test == [("Cheap cafe Where, in Doha?", "Advice and Help"),
                    ("Family visa Salary needed?", "Visas and Permits")]


def test_the_category_rule(categories, tmp_path):
    train_paths, test_path = write_files(tmp_path)
    # Visas: 3 training and 1 test text; Advice: 1 and 1; the Lounge (1 and 1) never
    assert {y for _, y in categories.read_qatarliving(train_paths, test_path, min_train=2, min_test=1)[0]} == {
        "Visas and Permits"}
    assert categories.read_qatarliving(train_paths, test_path, min_train=1, min_test=2) == ([], [])


def test_a_text_with_two_categories_is_dropped(categories):
    assert categories.distinct([("a", "x"), ("b", "y"), ("a", "z"), ("b", "y")]) == [("b", "y")]


def test_bad_files_refused_with_one_error_line(categories, tmp_path, capsys):
    for text, message in (("<root><Question QID='1'><QSubject>x", "test.xml:1: not well-formed XML"),
                          ("<root><Question QID='1'><QSubject>x</QSubject></Question></root>",
                           "test.xml: a <Question> without a category attribute"),
                          ("<root><Other/></root>", "test.xml: no questions with a category")):
        (tmp_path / "test.xml").write_text(text, encoding="utf-8")
        with pytest.raises(SystemExit) as exit_:
            categories.read_questions(tmp_path / "test.xml")
        assert exit_.value.code == 2
        error = capsys.readouterr().err
        assert error.startswith("error: ") and message in error and error.count("\n") == 1


def test_the_set_in_sets_and_its_dev_split(categories, tmp_path, monkeypatch):
    labels_check = importlib.import_module("labels_check")
    setfit_ab = importlib.import_module("setfit_ab")
    train_paths, test_path = write_files(tmp_path)
    reader, train_files, test_file = setfit_ab.SETS["qatarliving"]
    assert reader is categories.read_qatarliving and test_file.endswith("CQA-QL-test.xml")
    assert [name.rsplit("/", 1)[1] for name in train_files] == [
        "SemEval2016-Task3-CQA-QL-train-part1.xml", "CQA-QL-trial.xml", "CQA-QL-devel.xml"]
    data = tmp_path / "data"
    for name, path in zip((*train_files, test_file), (*train_paths, test_path)):
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setitem(setfit_ab.SETS, "qatarliving", (
        lambda train, test: categories.read_qatarliving(train, test, min_train=1, min_test=1), train_files, test_file))
    options = argparse.Namespace(set="qatarliving", data_dir=data, coarse=False, dev_size=None, seed=0)
    pool, dev, test = labels_check.splits(options)
    assert len(dev) == 1 and len(pool) == 3 and len(test) == 2  # a third of the 4 training texts
    assert not {t for t, _ in pool + dev} & {t for t, _ in test}
    options.dev_size = 4
    with pytest.raises(SystemExit):
        labels_check.splits(options)
