"""How adapt chooses: the "significant" rule on hand-made score tables (the start model wins ties and
near-ties, the simplest candidate within one standard error of the best wins), the "best" rule, and dev
hygiene (counts on a constructed corpus; the kept files are what the candidates train on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sentforge
from sentforge.adaptation.hygiene import apply_hygiene
from sentforge.adaptation.inputs import read_inputs
from sentforge.adaptation.select import select

import adapt_worker

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def gain(difference, low, high, se=None):
    return {"difference": difference, "low": low, "high": high, "confidence": 0.95,
            "standard_error": (high - low) / 3.92 if se is None else se}


def table(**rows):
    """{name: result}; each row is (kind, dev, steps)."""
    return {name.replace("_", "."): {"status": "done", "kind": kind, "dev": dev, "steps": steps}
            for name, (kind, dev, steps) in rows.items()}


def test_the_best_rule_prefers_the_start_model_and_ignores_candidates_that_did_not_run():
    results = {"a.start": {"status": "done", "dev": 50.0}, "a.tsdae": {"status": "done", "dev": 49.0},
               "a.mnrl": {"status": "done", "dev": 50.0}, "a.ct": {"status": "skipped", "dev": 99.0}}
    assert select(results, ["a.start"], "best")[0] == "a.start"  # worse and equal candidates never replace it
    results["a.simcse"] = {"status": "done", "dev": 50.5}
    results["meta-gcca"] = {"status": "done", "dev": 50.5}
    assert select(results, ["a.start"], "best")[0] == "a.simcse"  # the first of two equal best
    two_starts = {"a.start": {"status": "done", "dev": 40.0}, "b.start": {"status": "done", "dev": 60.0},
                  "a.tsdae": {"status": "done", "dev": 55.0}}
    assert select(two_starts, ["a.start", "b.start"], "best")[0] == "b.start"


def test_the_start_model_wins_ties_and_near_ties():
    results = table(a_start=("start", 80.0, 0), a_tsdae=("train", 80.0, 100), a_mnrl=("train", 80.4, 50),
                    meta_concat=("meta", 81.0, 0))
    gains = {"a.start": gain(0, 0, 0), "a.tsdae": gain(0.0, -0.5, 0.5), "a.mnrl": gain(0.4, -0.01, 0.9),
             "meta.concat": gain(1.0, -0.2, 2.1)}
    chosen, why = select(results, ["a.start"], "significant", gains)
    assert chosen == "a.start"
    assert "no candidate" in why and "interval" in why
    # With "best", the highest dev score would have replaced it.
    assert select(results, ["a.start"], "best")[0] == "meta.concat"


def test_a_clear_gain_wins_and_the_simplest_within_one_standard_error_is_chosen():
    results = table(a_start=("start", 80.0, 0), a_tsdae=("train", 81.0, 300), a_mnrl=("train", 81.8, 40),
                    a_tsdae_mnrl=("train", 82.0, 340), meta_concat=("meta", 82.3, 0))
    gains = {"a.start": gain(0, 0, 0), "a.tsdae": gain(1.0, 0.2, 1.8), "a.mnrl": gain(1.8, 0.9, 2.7, se=0.45),
             "a.tsdae.mnrl": gain(2.0, 1.1, 2.9, se=0.45), "meta.concat": gain(2.3, 1.4, 3.2, se=0.45)}
    chosen, why = select(results, ["a.start"], "significant", gains)
    # Within 2.3 - 0.45: mnrl (1.8 < 1.85? no) is out; tsdae+mnrl (2.0) and meta (2.3) are in: the single
    # encoder is simpler than the meta-embedding.
    assert chosen == "a.tsdae.mnrl"
    assert "simplest" in why and "meta.concat" in why
    gains["a.mnrl"] = gain(1.9, 1.0, 2.8, se=0.45)  # now within one standard error, with fewer steps
    assert select(results, ["a.start"], "significant", gains)[0] == "a.mnrl"
    gains["a.mnrl"], gains["a.tsdae.mnrl"] = gain(1.9, -0.1, 2.8), gain(2.0, -0.2, 2.9)  # no longer clear
    assert select(results, ["a.start"], "significant", gains)[0] == "meta.concat"


def test_gains_are_measured_from_the_best_start_model():
    results = table(a_start=("start", 70.0, 0), b_start=("start", 75.0, 0), a_tsdae=("train", 74.0, 10))
    gains = {"a.start": gain(-5.0, -6.0, -4.0), "b.start": gain(0, 0, 0), "a.tsdae": gain(-1.0, -2.0, -0.1)}
    assert select(results, ["a.start", "b.start"], "significant", gains)[0] == "b.start"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture()
def overlapping(tmp_path) -> Path:
    """A domain whose unlabelled texts and labelled pairs hold dev and test texts, exact and near copies."""
    data = tmp_path / "data"
    data.mkdir()
    dev_queries = ["how do i renew my residence permit", "where can i buy a cheap used car"]
    test_queries = ["which school is best for small kids"]
    others = ["the weather is hot in summer", "a new mall opened near the airport", "my phone screen is broken",
              "traffic on the corniche was slow", "the museum opens at nine", "rent prices went up this year",
              "looking for a tennis partner", "the visa office closes early on thursday",
              "our cat likes to sleep all day", "fresh fish at the souq every morning"]
    unlabelled = [*others,
                  "how do i renew my residence permit",            # exact dev text
                  "how do i renew my residence permit quickly",    # near copy (Jaccard 7/8)
                  "which school is best for small kids",           # exact test text
                  "where to buy bread in the old market today"]    # shares words but is no near copy
    (data / "unlabelled.txt").write_text("".join(t + "\n" for t in unlabelled), encoding="utf-8")
    write_jsonl(data / "dev.jsonl", [{"query": q, "positive": [f"{q} please help"], "negative": [others[i]]}
                                     for i, q in enumerate(dev_queries)])
    write_jsonl(data / "test.jsonl", [{"query": q, "positive": [f"{q} in doha"], "negative": [others[5]]}
                                      for q in test_queries])
    write_jsonl(data / "labelled.jsonl", [
        {"sentence1": "where can i buy a cheap used car", "sentence2": "cheap cars for sale"},   # dev text
        {"sentence1": "best beach for a family picnic", "sentence2": "a good beach for families"},
        {"sentence1": "how to open a bank account", "sentence2": "which school is best for small kids in doha"},
        {"sentence1": "is tap water safe to drink", "sentence2": "can i drink the tap water"}])
    return data


def test_hygiene_counts_and_drops_dev_and_test_texts_and_their_near_copies(overlapping, tmp_path):
    inputs = read_inputs(overlapping / "unlabelled.txt", overlapping / "dev.jsonl", overlapping / "labelled.jsonl",
                         overlapping / "test.jsonl")
    # Held out: the dev and test queries, positives and negatives (others 0, 1 and 5): 3 + 3 texts match.
    cleaned, counts = apply_hygiene(inputs, tmp_path / "out" / "data", keep_dev_texts=False)
    assert counts["unlabelled"] == {"read": 14, "near_duplicates": 3 + 3}
    assert counts["positives"] == {"read": 4, "near_duplicates": 2}
    assert "how do i renew my residence permit quickly" not in cleaned.texts
    assert "where to buy bread in the old market today" in cleaned.texts
    assert [a for a, _ in cleaned.labelled.positives] == ["best beach for a family picnic", "is tap water safe to drink"]
    assert cleaned.unlabelled.read_text(encoding="utf-8").splitlines() == cleaned.texts
    kept, same = apply_hygiene(inputs, tmp_path / "kept" / "data", keep_dev_texts=True)
    assert kept is inputs and same["applied"] is False and same["unlabelled"] == counts["unlabelled"]
    assert not (tmp_path / "kept").exists()


def test_adapt_trains_on_the_hygienic_data_and_reports_counts_and_intervals(tiny_bert_dir, overlapping, tmp_path):
    options = {**adapt_worker.FAST, "keep_dev_texts": False, "candidates": ["tsdae", "mnrl"],
               "overrides": {"tsdae": {"lr": 1e-3}, "mnrl": {"lr": 1e-3, "batch_size": 2}}}
    report = sentforge.adapt(str(tiny_bert_dir), overlapping / "unlabelled.txt", overlapping / "dev.jsonl",
                             tmp_path / "adapted", labelled=overlapping / "labelled.jsonl",
                             test=overlapping / "test.jsonl", **options)
    assert report["hygiene"]["applied"] and report["hygiene"]["unlabelled"]["near_duplicates"] == 6
    tsdae = report["candidates"][f"{tiny_bert_dir.name}.tsdae"]
    assert tsdae["examples"] == 8 and tsdae["commands"][0].count("data/unlabelled.txt") == 1
    assert report["candidates"][f"{tiny_bert_dir.name}.mnrl"]["examples"] == 2
    for result in report["candidates"].values():
        interval = result["dev_gain"]
        assert interval["low"] <= interval["difference"] <= interval["high"] and interval["resamples"] == 5000
        assert interval["difference"] == pytest.approx(result["dev"] - report["candidates"][
            f"{tiny_bert_dir.name}.start"]["dev"], abs=1e-6)
    text = (tmp_path / "adapted" / "report.md").read_text(encoding="utf-8")
    assert "Dev hygiene: dropped before training" in text and "6 of 14 unlabelled" in text
    assert "Rule `significant`" in text
    assert report["selection"]["base"] == f"{tiny_bert_dir.name}.start"
