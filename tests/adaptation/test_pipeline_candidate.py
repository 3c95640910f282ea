"""The rerank candidate: with a --cross-encoder, the leading candidate with the cross-encoder re-ranking its top
10 (the weight of its score chosen on dev), scored, timed per query and, when chosen, saved as OUTPUT/model and
OUTPUT/reranker, which `sentforge eval --reranker` scores as adapt did."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import sentforge
from sentforge.adaptation import run as adapt_module
from sentforge.adaptation.candidates import METHODS, Candidate
from sentforge.adaptation.pipeline import TIMED_PAIRS, WEIGHTS, pair_seconds, rerank_seconds, timing_pairs
from sentforge.adaptation.planning import RESERVE_MARGIN, Costs, Planner
from sentforge.adaptation.state_records import MeasuredCosts
from sentforge.adaptation.speed import parameters
from sentforge.evaluation import load_dataset
from sentforge.evaluation.reranker import Reranked

from adapt_domain import run as adapt_run
from conftest import run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")



def _pipeline(report):
    (name,) = [n for n, r in report["candidates"].items() if r["kind"] == "pipeline"]
    return name, report["candidates"][name]


def test_the_pipeline_reranks_the_leader_with_the_weight_of_the_best_dev_score(tiny_bert_dir, tiny_ce_dir, domain,
                                                                            tmp_path):
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["rerank"], cross_encoder=tiny_ce_dir,
                       test=domain / "test.jsonl")
    name, result = _pipeline(report)
    assert name == "rerank" and result["status"] == "done", result
    start = next(n for n, r in report["candidates"].items() if r["kind"] == "start")
    assert result["first_stage"] == start and result["top_k"] == 10 and result["pairs_per_query"] == 10
    # Each weight scored independently by the re-ranking scorer the ranking tasks evaluate.
    first, teacher = sentforge.load(str(tiny_bert_dir)), sentforge.load_cross_encoder(tiny_ce_dir)
    dev, test = load_dataset(domain / "dev.jsonl"), load_dataset(domain / "test.jsonl")
    expected = [dev.evaluate(Reranked(first, teacher, 10, weight=w))["map"] for w in WEIGHTS]
    assert [w["weight"] for w in result["weights"]] == list(WEIGHTS)
    assert [w["dev"] for w in result["weights"]] == pytest.approx(expected, abs=1e-3)
    best = max(range(len(WEIGHTS)), key=lambda i: (round(expected[i], 3), -i))
    assert result["weight"] == WEIGHTS[best] and result["dev"] == pytest.approx(max(expected), abs=1e-3)
    assert result["test"] == pytest.approx(test.evaluate(Reranked(first, teacher, 10, weight=result["weight"]))["map"],
                                           abs=1e-6)
    # Timed per query: two encoders, both models' parameters.
    assert result["speed"]["encoders"] == 2
    assert result["speed"]["parameters"] == parameters(first) + parameters(teacher)
    evaluations = sorted((tmp_path / "adapted" / "dev-items" / "evaluations" / name).glob("step-*.npz"))
    assert len(evaluations) == len(WEIGHTS)  # the cross-fitted rule weighs the choice of weight
    assert name in report["dev_cross_fitted"]
    assert not (tmp_path / "adapted" / "reranker").exists() or report["selected"] == name
    # The cross-encoder's re-ranking was timed before the run, for the time plan to keep it.
    measured = json.loads((tmp_path / "adapted" / "adapt.json").read_text(encoding="utf-8"))["measured"]
    assert measured["rerank_s"] > 0
    assert measured["interval_s"] > 0  # and one paired interval, for the selection's


def test_on_labelled_pairs_each_pair_is_scored_once_per_query(tiny_bert_dir, tiny_ce_dir, domain, tmp_path):
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["rerank"], cross_encoder=tiny_ce_dir,
                       dev=domain / "pairs-dev.jsonl")
    _, result = _pipeline(report)
    assert result["status"] == "done" and result["pairs_per_query"] == 1
    first, teacher = sentforge.load(str(tiny_bert_dir)), sentforge.load_cross_encoder(tiny_ce_dir)
    dev = load_dataset(domain / "pairs-dev.jsonl")
    scores = [dev.evaluate(Reranked(first, teacher, 10, weight=w))["ap"] for w in WEIGHTS]
    assert result["dev"] == pytest.approx(max(scores), abs=1e-3)


def test_a_chosen_pipeline_is_saved_as_model_and_reranker_which_eval_scores_the_same(
        tiny_bert_dir, tiny_ce_dir, domain, tmp_path, monkeypatch, capsys):
    def choose_the_pipeline(results, *args, **kwargs):
        made = select(results, *args, **kwargs)
        pipeline = next(name for name, r in results.items() if r.done and r.kind == "pipeline")
        return adapt_module.dataclasses.replace(made, chosen=pipeline)

    select = adapt_module.select
    monkeypatch.setattr(adapt_module, "select", choose_the_pipeline)
    output = tmp_path / "adapted"
    report = adapt_run(tiny_bert_dir, domain, output, candidates=["rerank"], cross_encoder=tiny_ce_dir,
                       test=domain / "test.jsonl")
    name, result = _pipeline(report)
    assert report["selected"] == name
    assert json.loads((output / "reranker" / "pipeline.json").read_text(encoding="utf-8")) == {
        "rerank_top": 10, "rerank_weight": result["weight"]}
    markdown = (output / "report.md").read_text(encoding="utf-8")
    assert "The selected model is a pipeline" in markdown and f"--rerank-weight {result['weight']:g}" in markdown
    code, _, _ = run_cli(["eval", "--model", str(output / "model"), "--reranker", str(output / "reranker"),
                          "--rerank-top", "10", "--rerank-weight", f"{result['weight']:g}", "--dataset",
                          str(domain / "test.jsonl"), "--output", str(tmp_path / "r.json")], capsys)
    assert code == 0
    (entry,) = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["tasks"].values()
    assert entry["main_score"] == pytest.approx(result["test"], abs=1e-6)
    # Sentence-transformers reads the saved cross-encoder and scores as the one given.
    from sentence_transformers import CrossEncoder as STCrossEncoder

    pairs = [("a cat sits", "a dog runs"), ("the sky", "the blue sky")]
    assert STCrossEncoder(str(output / "reranker")).predict(pairs) == pytest.approx(
        sentforge.load_cross_encoder(tiny_ce_dir).predict(pairs), abs=1e-5)


def test_without_a_cross_encoder_rerank_is_left_out_and_a_default_with_one(tiny_bert_dir, domain, tmp_path):
    from sentforge.adaptation.candidates import check_methods

    assert "rerank" not in check_methods(None) and "rerank" in check_methods(None, teacher=True)
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["rerank"])
    assert report["candidates"]["rerank"]["status"] == "not applicable"
    assert "--cross-encoder" in report["candidates"]["rerank"]["reason"]


class _Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_reranking_is_timed_per_pair_and_kept_from_the_trained_candidates_shares(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr("sentforge.adaptation.pipeline.time.perf_counter", clock)

    class HalfSecondPerPair:
        def predict(self, pairs, **_):
            clock.now += 0.5 * len(pairs)
            return np.zeros(len(pairs))

    dev = SimpleNamespace(texts=lambda: [f"dev {i}" for i in range(40)])
    test = SimpleNamespace(texts=lambda: [f"test {i}" for i in range(60)])
    # Timed after a warm-up pair, then about a pair per text of dev and test at that cost per pair.
    per_pair = pair_seconds(HalfSecondPerPair(), timing_pairs(dev))
    assert per_pair == pytest.approx(0.5)
    assert rerank_seconds(per_pair, dev, test) == pytest.approx(0.5 * 100)
    assert rerank_seconds(per_pair, dev, None) == pytest.approx(0.5 * 40)

    rerank = Candidate("rerank", METHODS["rerank"], None, None)
    costs = Costs(dev_s=7.0, test_s=10.0, per_text_s=0.02, load_s=1.5, rerank_s=300.0)
    assert rerank.method.kind.reserve_s(costs, 2, 400) == pytest.approx(300.0 + 2 * (7.0 + 10.0))

    def plan(rerank_s, results=None):
        monkeypatch.setattr("sentforge.harness.run_state.time.monotonic", clock)
        from sentforge.harness.run_state import Budget

        measured = MeasuredCosts(7.0, 10.0, 0.02, 1.5, rerank_s)
        state = SimpleNamespace(results=results or {}, measured=measured)
        trained = Candidate("m.mnrl", METHODS["mnrl"], "m", "m")
        return Planner(state, SimpleNamespace(texts=["text"] * 400), None, [trained, rerank],
                       Budget(3600.0, 0.0, clock()), meta_members=2, speed_sample=["text"] * 64)

    # Until the pipeline has run, its measured re-ranking is kept from what the trained candidates share, with
    # the reserve's margin.
    assert plan(300.0).room().reserve_s - plan(None).room().reserve_s == pytest.approx(RESERVE_MARGIN * 300.0)
    assert plan(300.0).room().equal_s == pytest.approx(plan(None).room().equal_s - RESERVE_MARGIN * 300.0)


def test_the_pipeline_runs_before_distil_which_distils_the_leading_meta_embedding_not_the_pipeline():
    from sentforge.adaptation.candidates.distil import distil_plan
    from sentforge.adaptation.result import finished

    order = list(METHODS)
    assert order.index("meta-gcca") < order.index("rerank") < order.index("distil") < order.index("static")
    results = {"m.mnrl": finished("train", "mnrl", "m", dev=0.80),
               "meta-concat": finished("meta", "meta-concat", None, dev=0.82, members=["m.mnrl"]),
               "rerank": finished("pipeline", "rerank", None, dev=0.90, first_stage="meta-concat")}
    assert distil_plan(results) == ("meta-concat", "m.mnrl", "")


def test_the_cross_encoder_is_timed_on_a_seeded_draw_of_the_labelled_pairs_else_on_consecutive_dev_texts():
    dev = SimpleNamespace(texts=lambda: [f"dev {i}" for i in range(200)])
    labelled = [(f"q {i}", f"a {i}", "hard negative") for i in range(100)] + [("q 0", "a 0")]  # one repeated
    drawn = timing_pairs(dev, labelled)
    assert len(drawn) == TIMED_PAIRS == len(set(drawn))
    assert set(drawn) <= {(f"q {i}", f"a {i}") for i in range(100)}
    assert drawn == timing_pairs(dev, labelled)  # the same draw on every run
    assert sorted(timing_pairs(dev, labelled[:10])) == sorted((f"q {i}", f"a {i}") for i in range(10))  # all
    assert timing_pairs(dev) == [(f"dev {i}", f"dev {i + 1}") for i in range(TIMED_PAIRS)]
