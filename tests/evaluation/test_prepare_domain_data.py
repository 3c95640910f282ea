"""The domain-data preparation script (benchmarks/data/prepare_domain_data.py) on small written files: the
Qatar Living CSV grouping and relevance, PIT-2015 dev binarisation, the TEST-BASE guard; and (slow) the
WikiQA and Qatar Living outputs on the real data read back by the own-data loader."""

from __future__ import annotations

import importlib
import json

import pytest
from conftest import DATA, REPO, needs

from sentforge.support.errors import InputFileError, SentforgeError
from sentforge.evaluation import load_dataset


@pytest.fixture()
def prepare(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks" / "data"))
    return importlib.import_module("prepare_domain_data")


def test_qatarliving_csv_grouping_and_relevance(prepare, tmp_path):
    path = tmp_path / "VAL.csv"
    path.write_text('feature,question,rel_question,labels\n'
                    'a b,"Where is a bank?","Which bank, in Doha?",PerfectMatch\n'
                    'a c,Where is a bank?,Best cafe,Irrelevant\n'
                    'd e,Visa rules?,Visa  renewal,Relevant\n', encoding="utf-8")
    queries = prepare.read_cleaned_subtask_b(path)
    assert [(q.query, q.candidates, q.relevant) for q in queries] == [
        ("Where is a bank?", ("Which bank, in Doha?", "Best cafe"), (True, False)),
        ("Visa rules?", ("Visa renewal",), (True,))]
    path.write_text("feature,question,rel_question,labels\nx,q,r,Maybe\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"VAL\.csv:2: label 'Maybe'"):
        prepare.read_cleaned_subtask_b(path)


def test_pit_dev_votes_binarised_as_the_pit_readme_says(prepare, tmp_path):
    path = tmp_path / "dev.data"
    rows = [f"1\ttopic\ts{i}\tt{i}\t({yes}, {5 - yes})\ttags" for i, yes in enumerate(range(6))]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    pairs = prepare.read_pit2015_dev(path)
    assert pairs.labels.tolist() == [0, 0, prepare.DEBATABLE, 1, 1, 1]
    assert [r["label"] for r in prepare.pair_records(pairs)] == [0, 0, 1, 1, 1]
    path.write_text("1\ttopic\ts\tt\t(2, 2)\ttags\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"dev\.data:1"):
        prepare.read_pit2015_dev(path)


def test_test_base_files_are_never_read(prepare, tmp_path):
    (tmp_path / "TEST-BASE.csv").write_text("x\n")
    with pytest.raises(SentforgeError, match="TEST-BASE files are never read"):
        prepare.source(tmp_path, "TEST-BASE.csv")


@pytest.mark.slow
@needs(DATA / "wikiqa")
@needs(DATA / "cqa-qatarliving")
def test_real_wikiqa_and_qatarliving_outputs_load(prepare, tmp_path, capsys):
    assert prepare.main(["--data-dir", str(DATA), "--output", str(tmp_path / "out"),
                         "--domains", "wikiqa,qatarliving"]) == 0
    counts = json.loads((tmp_path / "out" / "counts.json").read_text())
    assert counts["qatarliving"]["original_questions_shared_by_labelled_and_dev"] == {"exact": 0, "near_duplicate": 0}
    assert counts["wikiqa"]["test_questions"] == len(load_dataset(tmp_path / "out" / "wikiqa" / "test.jsonl").queries)
    assert load_dataset(tmp_path / "out" / "qatarliving" / "dev.jsonl").metadata.extra["kind"] == "reranking"
    assert "labelled_positive_pairs" in capsys.readouterr().out
    assert prepare.main(["--output", str(tmp_path / "out"), "--domains", "wikiqa"]) == 2  # no silent overwrite
