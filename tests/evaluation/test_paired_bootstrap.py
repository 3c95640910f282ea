"""The paired bootstrap interval: equal to scipy's paired percentile bootstrap on toys, its metrics equal
scikit-learn's AP and scipy's Spearman on the full set, and each own-data task's item scores give back the
task's main metric."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import bootstrap, spearmanr
from sklearn.metrics import average_precision_score

from sentforge.evaluation import load_dataset
from sentforge.evaluation.paired import ItemScores, paired_bootstrap


def test_mean_interval_matches_scipy_paired_bootstrap():
    rng = np.random.default_rng(3)
    base = rng.uniform(40, 90, size=60)
    other = base + rng.normal(1.0, 4.0, size=60)
    ours = paired_bootstrap(ItemScores("mean", base), ItemScores("mean", other), resamples=20_000, seed=1)
    reference = bootstrap((base, other), lambda a, b, axis: np.mean(b, axis=axis) - np.mean(a, axis=axis),
                          paired=True, vectorized=True, n_resamples=20_000, method="percentile",
                          confidence_level=0.95, random_state=np.random.default_rng(7))
    assert ours.difference == pytest.approx(np.mean(other) - np.mean(base), abs=1e-12)
    assert ours.low == pytest.approx(reference.confidence_interval.low, abs=0.05)
    assert ours.high == pytest.approx(reference.confidence_interval.high, abs=0.05)
    assert ours.standard_error == pytest.approx(reference.standard_error, rel=0.03)


def test_ap_interval_matches_scipy_on_a_toy_and_ap_equals_scikit_learn():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, size=40)
    base = np.round(labels * 0.3 + rng.uniform(0, 1, size=40), 1)  # rounded: many tied scores
    other = np.round(labels * 0.5 + rng.uniform(0, 1, size=40), 1)
    for scores in (base, other):
        assert ItemScores("ap", scores, labels).score() == pytest.approx(
            100 * average_precision_score(labels, scores), abs=1e-9)

    def ap_difference(first, second, gold, axis):
        def ap(scores):
            return np.array([100 * average_precision_score(g, s) if g.any() else 0.0 for s, g in zip(scores, gold)])
        return ap(second) - ap(first)

    ours = paired_bootstrap(ItemScores("ap", base, labels), ItemScores("ap", other, labels), resamples=5000, seed=2)
    reference = bootstrap((base, other, labels), ap_difference, paired=True, vectorized=True, n_resamples=5000,
                          method="percentile", random_state=np.random.default_rng(9))
    width = reference.confidence_interval.high - reference.confidence_interval.low
    assert abs(ours.low - reference.confidence_interval.low) < 0.05 * width
    assert abs(ours.high - reference.confidence_interval.high) < 0.05 * width


def test_spearman_equals_scipy_with_ties_and_constant_resamples_score_zero():
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 5, size=30).astype(float)
    scores = np.round(gold + rng.normal(0, 1.5, size=30), 0)
    assert ItemScores("spearman", scores, gold).score() == pytest.approx(100 * spearmanr(scores, gold)[0], abs=1e-9)
    constant = ItemScores("spearman", np.ones(30), gold)
    assert constant.score() == 0.0


def test_each_resample_scores_as_scikit_learn_and_scipy_on_the_drawn_units():
    """A resample holds units several times (or not at all): its AP and Spearman are those of the drawn
    multiset, ties across copies included."""
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 2, size=50)
    gold = rng.integers(0, 4, size=50).astype(float)
    scores = np.round(labels * 0.4 + rng.uniform(0, 1, size=50), 1)
    draws = rng.integers(0, 50, size=(40, 50))
    ap = ItemScores("ap", scores, labels).resampled(draws)
    rho = ItemScores("spearman", scores, gold).resampled(draws)
    for row, drawn in enumerate(draws):
        assert ap[row] == pytest.approx(100 * average_precision_score(labels[drawn], scores[drawn]), abs=1e-9)
        assert rho[row] == pytest.approx(100 * spearmanr(scores[drawn], gold[drawn])[0], abs=1e-9)
    halves = np.stack([rng.permutation(50)[:25] for _ in range(5)])  # cross-fitting draws without replacement
    for row, drawn in enumerate(halves):
        assert ItemScores("ap", scores, labels).resampled(halves)[row] == pytest.approx(
            100 * average_precision_score(labels[drawn], scores[drawn]), abs=1e-9)


def test_identical_models_have_a_zero_interval_and_it_is_seeded():
    scores = ItemScores("mean", np.linspace(0, 100, 25))
    same = paired_bootstrap(scores, scores, resamples=500)
    assert (same.difference, same.low, same.high) == (0.0, 0.0, 0.0) and not same.above_zero
    other = ItemScores("mean", np.linspace(0, 100, 25) + np.sin(np.arange(25)) * 5 + 1)
    assert paired_bootstrap(scores, other, seed=4) == paired_bootstrap(scores, other, seed=4)


def test_item_scores_give_each_own_task_its_main_metric(tmp_path):

    from sentforge.specs.external import CallableEncoder

    vocabulary = "cat dog mat park password reset invoice charge app crash guitar beach".split()

    def encode(texts):  # counts of vocabulary words: a deterministic encoder with ties and zero vectors
        return np.array([[text.split().count(w) for w in vocabulary] + [1.0] for text in texts], dtype=np.float32)

    model = CallableEncoder(encode, name="counts")
    rerank = tmp_path / "rerank.jsonl"
    rerank.write_text("".join(json.dumps(r) + "\n" for r in [
        {"query": "cat on mat", "positive": ["the cat mat"], "negative": ["dog park", "app crash"]},
        {"query": "reset password", "positive": ["password reset", "reset"], "negative": ["invoice charge"]},
        {"query": "guitar beach", "positive": ["beach"], "negative": ["guitar dog", "cat", "park"]}]), encoding="utf-8")
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text("".join(json.dumps({"sentence1": a, "sentence2": b, "label": y}) + "\n" for a, b, y in [
        ("cat mat", "the cat", 1), ("dog park", "app crash", 0), ("password reset", "reset password", 1),
        ("invoice", "guitar beach", 0), ("cat dog", "dog cat", 1), ("mat", "crash", 0)]), encoding="utf-8")
    scored = tmp_path / "scored.jsonl"
    scored.write_text("".join(json.dumps({"sentence1": a, "sentence2": b, "score": y}) + "\n" for a, b, y in [
        ("cat mat", "the cat", 3.5), ("dog park", "app crash", 0.5), ("password reset", "reset password", 5),
        ("invoice", "guitar beach", 0), ("cat dog", "dog cat", 4), ("mat", "crash", 1)]), encoding="utf-8")
    for path in (rerank, labelled, scored):
        task = load_dataset(path)
        assert task.item_scores(model).score() == pytest.approx(
            task.evaluate(model)[task.metadata.main_metric], abs=1e-9)
