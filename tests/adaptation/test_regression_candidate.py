"""The regression candidate: when named and the labelled pairs hold both labels, the `sts` recipe trains from the
start model on the label-1 pairs scored 1 and the label-0 pairs scored 0; without label-0 pairs it is left out;
it is never a default."""

from __future__ import annotations

import json

import pytest

from adapt_domain import SENTENCES, run as adapt_run, write_jsonl

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_regression_trains_on_both_labels_as_scores(tiny_bert_dir, domain, tmp_path):
    n = len(SENTENCES)
    rows = [{"sentence1": SENTENCES[i], "sentence2": f"{SENTENCES[i]} and {SENTENCES[(i + 1) % n]}", "label": 1}
            for i in range(n)] + [{"sentence1": SENTENCES[i], "sentence2": SENTENCES[(i + 5) % n], "label": 0}
                                  for i in range(n)]
    labelled = write_jsonl(tmp_path / "zero-one.jsonl", rows)
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["regression"], labelled=labelled,
                       keep_dev_texts=True, overrides={"regression": {"lr": 1e-3, "batch_size": 4}})
    (result,) = [r for name, r in report["candidates"].items() if name.endswith(".regression")]
    assert result["status"] == "done", result
    assert "sentforge train sts" in result["commands"][-1] and "--score-max 1.0" in result["commands"][-1]
    written = [json.loads(line) for line in (tmp_path / "adapted" / "data" / "scored.jsonl").read_text(
        encoding="utf-8").splitlines()]
    expected = {(r["sentence1"], r["sentence2"], float(r["label"])) for r in rows}
    assert len(written) == len(rows) == result["examples"]
    assert result["planned_steps"] == len(rows) // 4  # one pass at batch 4
    assert {(r["sentence1"], r["sentence2"], r["score"]) for r in written} == expected


def test_without_label_0_pairs_regression_is_left_out_and_never_a_default(tiny_bert_dir, domain, tmp_path):
    from sentforge.adaptation.candidates import check_methods

    assert "regression" not in check_methods(None) and "regression" not in check_methods(None, teacher=True)
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["regression"])
    (name,) = [n for n in report["candidates"] if n.endswith(".regression")]
    assert report["candidates"][name]["status"] == "not applicable"
    assert "labelled 1 and 0" in report["candidates"][name]["reason"]
