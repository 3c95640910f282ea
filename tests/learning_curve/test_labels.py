"""`sentforge labels`: nested seeded subsets, the saturating fit against known parameters, the report's
answer against values computed by hand, a tiny end-to-end run that resumes without retraining, and
command-line errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sentforge
from sentforge.support.errors import ConfigError
from sentforge.evaluation.paired import paired_bootstrap
from sentforge.learning_curve.answer import answer, check_target, direction, holdout, metric_range, short_runs
from sentforge.learning_curve.curve import fit_curve, fit_log_linear, saturating, shape_test
from sentforge.learning_curve.data import write_rows
from sentforge.learning_curve.read import read_label_data
from sentforge.learning_curve.report import answer_lines
from sentforge.learning_curve.run import time_for_run
from sentforge.learning_curve.run_record import LabelsRun
from sentforge.learning_curve.subsets import nested_subsets, repeat_order, sizes_of

import labels_worker
from conftest import assert_one_line_error, run_cli
from labels_domain import SENTENCES, write_domain, write_jsonl

WORKER = Path(__file__).parents[1] / "helpers" / "labels_worker.py"


# --- subsets -------------------------------------------------------------------------------------------

def test_sizes_are_shares_of_the_units_rounded_up_distinct_and_at_least_two():
    assert sizes_of(200, [5, 10, 25, 50, 100]) == [10, 20, 50, 100, 200]
    assert sizes_of(30, [1, 5, 10, 100]) == [2, 3, 30]  # 0.3 and 1.5 -> 2, 3 -> 3
    with pytest.raises(ConfigError, match="--fractions"):
        sizes_of(30, [0, 50])
    with pytest.raises(ConfigError, match="--fractions"):
        sizes_of(30, [150])


def test_subsets_are_nested_within_a_repeat_and_seeded():
    sizes = sizes_of(100, [5, 10, 25, 50, 100])
    first = nested_subsets(100, sizes, seed=7, repeat=0)
    for small, large in zip(sizes, sizes[1:]):
        assert set(first[small]) < set(first[large])
        assert len(first[small]) == small
    assert sorted(first[100]) == list(range(100))
    again = nested_subsets(100, sizes, seed=7, repeat=0)
    assert all(np.array_equal(first[s], again[s]) for s in sizes)  # same seed and repeat: same subsets
    second = nested_subsets(100, sizes, seed=7, repeat=1)
    assert not np.array_equal(first[5], second[5]) and not np.array_equal(first[25], second[25])
    other_seed = nested_subsets(100, sizes, seed=8, repeat=0)
    assert not np.array_equal(first[10], other_seed[10])
    # The order is numpy's seeded permutation: an independent reference.
    assert np.array_equal(repeat_order(100, 7, 1), np.random.default_rng([7, 1]).permutation(100))


def test_pause_subsets_keep_every_pair_and_only_the_chosen_labels(tmp_path):
    rows = [{"sentence1": f"a{i}", "sentence2": f"b{i}", "label": (i % 2) if i % 3 else None} for i in range(12)]
    data = read_label_data(write_jsonl(tmp_path / "partial.jsonl", rows))
    assert data.method == "pause" and data.units == [i for i in range(12) if i % 3]
    kept = data.subset_rows([0, 2])  # units 0 and 2: rows 1 and 4
    assert len(kept) == 12
    assert [i for i, row in enumerate(kept) if row[2] is not None] == [1, 4]
    assert kept[1] == ("a1", "b1", "1") and kept[4] == ("a4", "b4", "0")


@pytest.mark.parametrize("rows", [
    [{"sentence1": f"a{i}", "sentence2": f"b{i}", "negative": f"c{i}"} for i in range(6)],
    [{"sentence1": f"a{i}", "sentence2": f"b{i}", "score": i / 5} for i in range(6)],
    [{"sentence1": f"a{i}", "sentence2": f"b{i}", "label": [0, 1, None][i % 3]} for i in range(6)]])
def test_a_subset_file_reads_back_as_the_subset(tmp_path, rows):
    data = read_label_data(write_jsonl(tmp_path / "all.jsonl", rows))
    subset = data.subset_rows([0, 2])
    write_rows(tmp_path / "subset.jsonl", data.method, subset)
    again = read_label_data(tmp_path / "subset.jsonl", data.method)
    assert again.rows == subset and len(again.units) == 2


def test_method_is_decided_by_the_file_and_checked(tmp_path):
    positives = write_jsonl(tmp_path / "pos.jsonl", [{"sentence1": "a", "sentence2": "b"}] * 3)
    scored = write_jsonl(tmp_path / "sts.jsonl", [{"sentence1": "a", "sentence2": "b", "score": 0.5}] * 3)
    assert read_label_data(positives).method == "mnrl"
    assert read_label_data(scored).method == "sts"
    with pytest.raises(ConfigError, match="--method sts"):
        read_label_data(positives, "sts")
    with pytest.raises(ConfigError, match="--method pause"):
        read_label_data(positives, "pause")
    with pytest.raises(ConfigError, match="--method 'nli'"):
        read_label_data(positives, "nli")


# --- the curve and the answer ------------------------------------------------------------------------------

def test_fit_recovers_known_parameters_from_noiseless_points():
    n = np.array([50, 100, 250, 500, 1000] * 2)
    fit = fit_curve(n, saturating(n, 80.0, 120.0, 0.6))
    assert (fit.a, fit.b, fit.c) == pytest.approx((80.0, 120.0, 0.6), rel=1e-5)
    assert np.all(fit.errors < 1e-4)  # noiseless: the covariance vanishes
    predicted = fit.predict(2000)
    assert predicted.value == pytest.approx(80 - 120 * 2000 ** -0.6, rel=1e-6) and predicted.error < 1e-4
    with pytest.raises(ConfigError, match="at least 3 sizes"):
        fit_curve([10, 10, 20], [1.0, 1.1, 2.0])


def test_fit_errors_match_the_linearised_least_squares_covariance():
    """With c fixed at its estimate, a and b enter linearly: their covariance is s²(XᵀX)⁻¹ of that linear fit
    (the Jacobian's a, b columns); the fitted covariance's a,b block holds the same, with c's column too."""
    rng = np.random.default_rng(0)
    n = np.repeat([20, 40, 100, 200, 400], 3).astype(float)
    y = saturating(n, 70.0, 60.0, 0.5) + rng.normal(0, 0.5, len(n))
    fit = fit_curve(n, y)
    power = n ** -fit.c
    jacobian = np.column_stack([np.ones_like(n), -power, fit.b * np.log(n) * power])
    residuals = y - saturating(n, fit.a, fit.b, fit.c)
    reference = residuals @ residuals / (len(n) - 3) * np.linalg.inv(jacobian.T @ jacobian)
    assert fit.covariance == pytest.approx(reference, rel=1e-3, abs=1e-8)


def _points(n, y):
    return [(int(k), float(v)) for k, v in zip(n, y)], {int(k): float(v) for k, v in zip(n, y)}


RISES = {"difference": 3.0, "low": 1.0, "high": 5.0, "sizes": [4, 100]}
FALLS = {"difference": -3.0, "low": -5.0, "high": -1.0, "sizes": [4, 100]}
SPANS = {"difference": 0.4, "low": -1.0, "high": 2.0, "sizes": [4, 100]}


def test_answer_on_points_computed_by_hand():
    # score(n) = 90 - 100/sqrt(n): at n = 100 it is 80; 2x = 200 -> 90 - 100/sqrt(200) = 82.9289;
    # 5x = 500 -> 90 - 100/sqrt(500) = 85.5279; a target of 85 needs (100/5)^2 = 400 labels.
    n = np.array([4, 16, 25, 100])
    points, means = _points(n, saturating(n, 90.0, 100.0, 0.5))
    result = answer(points, means, RISES, target=85.0)
    assert result["trend"] == "rising" and result["model"] == "saturating"  # noiseless curvature: F is infinite
    assert result["shape"]["tested"] and result["shape"]["p"] < 1e-6 and result["shape"]["dof"] == [1, 1]
    assert result["labels"] == 100 and result["measured"] == pytest.approx(80.0)
    assert result["at_2x"]["labels"] == 200 and result["at_2x"]["score"] == pytest.approx(82.9289, abs=1e-3)
    assert result["at_5x"]["score"] == pytest.approx(85.5279, abs=1e-3)
    assert result["at_5x"]["low"] == pytest.approx(85.5279, abs=1e-2)  # noiseless: the interval closes
    assert result["target"]["status"] == "predicted"
    assert result["target"]["fitted_labels"] == pytest.approx(400, rel=1e-4)
    assert result["worth"] == "above"  # 5x adds 5.53 points
    assert result["per_doubling"]["score"] == pytest.approx(2.9289, abs=1e-3)
    assert result["ceiling"]["score"] == pytest.approx(90.0, abs=1e-3)
    assert answer(points, means, RISES, target=95.0)["target"]["status"] == "not reached"  # above the ceiling a = 90
    reached = answer(points, means, RISES, target=70.0)["target"]  # 90 - 100/sqrt(16) = 65 < 70 <= 90 - 100/5 = 70
    assert reached["status"] == "reached" and reached["measured_labels"] == 25
    # Not shown to rise: no number of labels is predicted for a target, whatever the fit says.
    assert answer(points, means, SPANS, target=85.0)["target"]["status"] == "not predicted"
    assert answer(points, means, FALLS, target=85.0)["trend"] == "falling"
    # A nearly flat curve: 5x adds 2*(1/sqrt(100) - 1/sqrt(500)) = 0.1106 points, all of it below 1.
    flat_points, flat_means = _points(n, saturating(n, 60.0, 2.0, 0.5))
    flat = answer(flat_points, flat_means, RISES, flat_points=1.0)
    assert flat["gain_5x"]["score"] == pytest.approx(0.1106, abs=1e-3) and flat["worth"] == "below"
    # Scores that grow by the same 1.5 points per doubling, without saturation: the straight line in log n.
    line_points, line_means = _points(n, 70 + 1.5 * np.log2(n))
    straight = answer(line_points, line_means, RISES)
    assert straight["model"] == "log-linear" and straight["per_doubling"]["score"] == pytest.approx(1.5, abs=1e-9)
    assert straight["at_2x"]["score"] == pytest.approx(70 + 1.5 * np.log2(200), abs=1e-9)
    assert "ceiling" not in straight
    with pytest.raises(ConfigError, match="at least 3 sizes"):
        answer(points[:2], {4: 40.0, 16: 65.0}, RISES)


def test_runs_too_short_to_learn_never_conclude_that_more_labels_are_not_worth_it():
    # The nearly flat curve above: 5x adds 0.1106 points, all below 1, "below" from runs long enough; the
    # same scores from runs shorter than MIN_LEARNING_STEPS (10) steps cannot tell.
    assert short_runs([(4, 1), (4, 3), (16, 12), (25, 9), (100, 10)]) == [{"labels": 4, "steps": 1},
                                                                         {"labels": 25, "steps": 9}]
    n = np.array([4, 16, 25, 100])
    points, means = _points(n, saturating(n, 60.0, 2.0, 0.5))
    assert answer(points, means, RISES, flat_points=1.0, short=[])["worth"] == "below"
    short = answer(points, means, RISES, flat_points=1.0, short=[{"labels": 4, "steps": 1}])
    assert short["worth"] == "cannot tell"
    lines = answer_lines({"metric": "map", "answer": short})
    assert any("cannot tell whether more labels are worth it" in line for line in lines)
    assert not any("not worth it" in line for line in lines)
    # A gain shown above the threshold stands: short runs can hide a gain, not make one.
    rising, rising_means = _points(n, saturating(n, 90.0, 100.0, 0.5))
    assert answer(rising, rising_means, RISES, short=[{"labels": 4, "steps": 1}])["worth"] == "above"


def _falling_by_half_a_point_per_doubling(noise: float):
    # 70 − 0.5·log2 n at n = 4, 16, 25, 100, two runs per size at ±noise: the least-squares line is the noiseless
    # one (the noise averages out at each size), so the fitted change per doubling is −0.50 exactly.
    n = np.repeat([4, 16, 25, 100], 2)
    y = 70 - 0.5 * np.log2(n) + noise * np.tile([1.0, -1.0], 4)
    return [(int(k), float(v)) for k, v in zip(n, y)], {int(k): float(70 - 0.5 * np.log2(k)) for k in set(n)}


def test_the_words_follow_the_intervals_a_fitted_fall_is_not_called_flat():
    assert direction({"low": 5e-15, "high": 1e-14}) == "flat"  # prints as [+0.00, +0.00]: holds 0
    assert direction({"low": 0.01, "high": 0.2}) == "rising" and direction({"low": -0.26, "high": -0.06}) == "falling"
    assert direction({"low": None, "high": None}) is None
    # The paired gain includes 0 (SPANS) while the fit's slope lies below 0: falling, more labels scored lower.
    points, means = _falling_by_half_a_point_per_doubling(noise=0.05)
    result = answer(points, means, SPANS)
    doubling = result["per_doubling"]
    assert doubling["score"] == pytest.approx(-0.5, abs=1e-9) and doubling["high"] < 0
    assert result["trend"] == "flat" and result["slope"] == "falling"
    text = "\n".join(answer_lines({"metric": "map", "answer": result}))
    assert "not distinguishable from flat" not in text and "flat by the fit" not in text
    assert "the score **falls** with the labels (more labels scored lower)" in text
    assert "changes by -0.50 points" in text and "below 0, falling (more labels scored lower)" in text
    # Noise of 5 points: the slope's interval holds 0 too, and only then is the curve called flat.
    noisy = answer(*_falling_by_half_a_point_per_doubling(noise=5.0), SPANS)
    assert noisy["per_doubling"]["low"] < 0 < noisy["per_doubling"]["high"] and noisy["slope"] == "flat"
    noisy_text = "\n".join(answer_lines({"metric": "map", "answer": noisy}))
    assert "**not distinguishable from flat**" in noisy_text and "flat by the fit" in noisy_text
    assert "**falls**" not in noisy_text


def test_log_linear_fit_and_its_intervals_by_hand():
    # x = ln n = 0, 1, 2 (n = 1, e, e²); y = 1, 3, 4: x̄ = 1, Sxx = 2, ȳ = 8/3,
    # b = Σ(x−x̄)(y−ȳ)/Sxx = ((−1)(−5/3) + 0 + (1)(4/3)) / 2 = 1.5, a = ȳ − b·x̄ = 7/6;
    # residuals 1 − 7/6 = −1/6, 3 − 8/3 = 1/3, 4 − 25/6 = −1/6: RSS = 1/36 + 4/36 + 1/36 = 1/6, s² = RSS/1.
    n = np.exp([0.0, 1.0, 2.0])
    fit = fit_log_linear(n, [1.0, 3.0, 4.0])
    assert (fit.a, fit.b, fit.rss, fit.dof) == pytest.approx((7 / 6, 1.5, 1 / 6, 1))
    assert fit.errors[1] == pytest.approx(np.sqrt((1 / 6) / 2))  # se(b)² = s²/Sxx
    # At x0 = 3: value 7/6 + 4.5, se² = s²(1/3 + (3 − 1)²/2); t with 1 degree of freedom is Cauchy:
    # its 97.5 % quantile is tan(0.475 π) = 12.7062.
    predicted = fit.predict(np.exp(3.0))
    se = np.sqrt((1 / 6) * (1 / 3 + 4 / 2))
    assert predicted.value == pytest.approx(7 / 6 + 4.5) and predicted.error == pytest.approx(se)
    assert predicted.high - predicted.value == pytest.approx(np.tan(0.475 * np.pi) * se)
    doubling = fit.difference(2 * np.exp(2.0), np.exp(2.0))
    assert doubling.value == pytest.approx(1.5 * np.log(2))
    assert doubling.error == pytest.approx(fit.errors[1] * np.log(2))
    # Two sizes: the line goes through both points and leaves no freedom for an interval.
    assert fit_log_linear([1, np.e], [1.0, 3.0]).predict(10.0).low is None


def test_shape_test_is_the_extra_sum_of_squares_f_test_by_hand():
    # Five points with curvature and noise: F = (RSS_line − RSS_sat) / (RSS_sat / 2). With 2 denominator degrees of
    # freedom F(1, 2) is T² for Student's t with 2: p = P(|T| > √F) = 1 − √F / √(2 + F).
    n = np.array([10, 20, 50, 100, 200])
    y = saturating(n, 80.0, 60.0, 0.7) + np.array([0.3, -0.2, 0.1, -0.3, 0.2])
    curve, line = fit_curve(n, y), fit_log_linear(n, y)
    design = np.column_stack([np.ones(5), np.log(n)])
    residual_line = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    residual_sat = y - saturating(n, curve.a, curve.b, curve.c)
    f_value = (residual_line @ residual_line - residual_sat @ residual_sat) / (residual_sat @ residual_sat / 2)
    test = shape_test(curve, line)
    assert test["f"] == pytest.approx(f_value, rel=1e-6) and test["dof"] == [1, 2]
    assert test["p"] == pytest.approx(1 - np.sqrt(f_value) / np.sqrt(2 + f_value), rel=1e-6)
    assert test["kind"] == ("saturating" if test["p"] < 0.05 else "log-linear")
    # Three runs: the saturating curve has no residual freedom, so the test is not made and the line is used.
    three = shape_test(fit_curve(n[:3], y[:3]), fit_log_linear(n[:3], y[:3]))
    assert not three["tested"] and three["kind"] == "log-linear" and "no residual degree of freedom" in three["reason"]


def test_targets_are_capped_and_checked_against_the_metric_range():
    n = np.array([4, 16, 25, 100])
    points, means = _points(n, 70 + 0.1 * np.log2(n))  # 0.1 points per doubling
    far = answer(points, means, RISES, target=99.0)["target"]  # 2^(290) labels: not a number to print
    assert far["status"] == "beyond" and far["cap"] == 100 * 100 and far["fitted_labels"] is None
    near = answer(points, means, RISES, target=70.0 + 0.1 * np.log2(400))["target"]
    assert near["status"] == "predicted" and near["fitted_labels"] == pytest.approx(400, rel=1e-6)
    assert metric_range("map") == (0, 100) and metric_range("spearman") == (-100, 100)
    check_target(-50.0, "spearman")
    with pytest.raises(ConfigError, match="--target 500"):
        check_target(500.0, "map")
    with pytest.raises(ConfigError, match=r"\[0, 100\]"):
        check_target(-1.0, "ap")


def test_paired_gain_of_groups_is_the_gain_of_their_mean_scores():
    """For per-query metrics the mean of two runs' metrics is the metric of their averaged per-query scores."""
    from sentforge.evaluation.paired import ItemScores

    rng = np.random.default_rng(1)
    small = [ItemScores("mean", rng.uniform(0, 100, 30)) for _ in range(2)]
    large = [ItemScores("mean", rng.uniform(0, 100, 30)) for _ in range(2)]
    grouped = paired_bootstrap(small, large, 2000, 0.95, 3)
    averaged = paired_bootstrap(ItemScores("mean", (small[0].values + small[1].values) / 2),
                                ItemScores("mean", (large[0].values + large[1].values) / 2), 2000, 0.95, 3)
    assert (grouped.difference, grouped.low, grouped.high) == pytest.approx(
        (averaged.difference, averaged.low, averaged.high))


def test_holdout_predicts_the_largest_size_from_the_smaller_ones():
    n = [10, 20, 50, 100, 200]
    true = saturating(np.array(n, float), 75.0, 50.0, 0.4)
    measured = {200: float(true[-1]) - 1.5}  # the largest size measured 1.5 points below the curve
    points = [(k, float(v)) for k, v in zip(n[:-1], true[:-1])] + [(200, measured[200])]
    check = holdout(points, {**{k: float(v) for k, v in zip(n[:-1], true[:-1])}, **measured}, "saturating")
    assert check["status"] == "done" and check["labels"] == 200
    assert check["predicted"]["score"] == pytest.approx(float(true[-1]), abs=1e-4)
    assert check["error"] == pytest.approx(1.5, abs=1e-4)
    assert holdout(points[:2] + [(200, 1.0)], {10: 1.0, 20: 1.0, 200: 1.0}, "saturating")["status"] == \
        "not enough sizes"
    line = holdout(points[:2] + [(200, 1.0)], {10: 1.0, 20: 1.0, 200: 1.0}, "log-linear")
    assert line["status"] == "done" and line["predicted"]["low"] is None  # two sizes: no interval


# --- end to end ------------------------------------------------------------------------------------------

@pytest.fixture()
def domain(tmp_path) -> Path:
    return write_domain(tmp_path / "data")


FAST = {"fractions": [50, 100], "repeats": 2, "steps": 2, "batch_size": 4, "show_progress": False}


class StopAt:
    """A training callback that counts steps and raises at step `stop` of the `run`-th run it sees."""

    def __init__(self, run: int | None = None, stop: int | None = None) -> None:
        self.steps, self.run, self.stop, self.runs = 0, run, stop, 0

    def __call__(self, state) -> None:
        self.steps += 1
        if state.step == 1:
            self.runs += 1
        if self.runs == self.run and state.step == self.stop:
            raise KeyboardInterrupt


@pytest.mark.usefixtures("one_torch_thread")
def test_end_to_end_report_and_resume_without_retraining(tiny_bert_dir, domain, tmp_path):
    out = tmp_path / "curve"
    args = (str(tiny_bert_dir), domain / "labelled.jsonl", domain / "dev.jsonl", out)
    interrupted = StopAt(run=3, stop=2)  # the third run (n6-r1) stops after its 2nd step's checkpoint
    with pytest.raises(KeyboardInterrupt):
        sentforge.labels(*args, callbacks=[interrupted], **FAST)
    assert interrupted.steps == 6
    resumed = StopAt()
    report = sentforge.labels(*args, callbacks=[resumed], **FAST)
    assert resumed.steps == 2  # only the interrupted run's... none of the finished runs was retrained
    assert json.loads((out / "report.json").read_text()) == json.loads(json.dumps(report))
    assert (out / "report.md").read_text().startswith("# sentforge labels")
    assert (out / "learning-curve.png").stat().st_size > 1000
    assert [row["labels"] for row in report["sizes"]] == [6, 12] and report["method"] == "mnrl"
    runs = report["runs"]
    assert set(runs) == {"n6-r0", "n12-r0", "n6-r1", "n12-r1"} and all(r["status"] == "done" for r in runs.values())
    # Nested: the 6-pair subset's rows are among the 12-pair subset's rows of the same repeat.
    for repeat in (0, 1):
        small = (out / "subsets" / f"n6-r{repeat}.jsonl").read_text().splitlines()
        assert set(small) < set((out / "subsets" / f"n12-r{repeat}.jsonl").read_text().splitlines())
    # Each run's dev score is the trained model's own evaluation; the interval is the paired bootstrap.
    from sentforge.evaluation import load_dataset
    from sentforge.harness.dev_scores import load_items

    task = load_dataset(domain / "dev.jsonl")
    for name in ("n6-r0", "n12-r1"):
        model = sentforge.load(str(out / "runs" / name))
        assert runs[name]["dev"] == pytest.approx(task.evaluate(model)[task.metadata.main_metric], abs=1e-6)
        gain = paired_bootstrap(load_items(out, "start"), load_items(out, name), 5000, 0.95, 0)
        assert runs[name]["dev_gain"]["difference"] == pytest.approx(gain.difference, abs=1e-3)
    start = task.evaluate(sentforge.load(str(tiny_bert_dir)))[task.metadata.main_metric]
    assert report["start"] == pytest.approx(start, abs=1e-6)
    for row in report["sizes"]:
        scores = [runs[f"n{row['labels']}-r{r}"]["dev"] for r in (0, 1)]
        assert row["mean"] == pytest.approx(np.mean(scores)) and row["spread"] == pytest.approx(np.std(scores, ddof=1))
    assert report["fit"] is None and "at least 3 sizes" in report["fit_error"]  # two sizes fit no curve
    # A finished run keeps its model and metrics, not its checkpoints; the report gives the output's size.
    for name in runs:
        assert not (out / "runs" / name / "training" / "checkpoints").exists()
        assert (out / "runs" / name / "training" / "metrics.jsonl").is_file()
    markdown = (out / "report.md").read_text()
    assert "checkpoints were removed" in markdown and report["output_bytes"] > 0
    # 2 steps of 4 rows see 8 of the 12 pairs of the largest subset: said in the log and the report.
    assert report["unseen"] == [{"labels": 12, "examples": 12, "seen": 8}]
    assert "**Warning**: the runs of some sizes never see their whole subset" in markdown
    assert "12 (8 of 12 rows)" in markdown
    # A rerun of the finished command trains nothing and gives the same report.
    again = StopAt()
    assert sentforge.labels(*args, callbacks=[again], **FAST)["runs"] == runs and again.steps == 0
    assert sentforge.labels(*args, callbacks=[again], target=50.0, **FAST)["runs"] == runs and again.steps == 0
    with pytest.raises(ConfigError, match="different command"):
        sentforge.labels(*args, **{**FAST, "steps": 3})


@pytest.mark.usefixtures("one_torch_thread")
def test_resume_after_sigkill_reuses_finished_runs_and_continues_the_interrupted(tiny_bert_dir, domain, tmp_path):
    straight = labels_worker.run(tiny_bert_dir, domain, tmp_path / "straight")
    out = tmp_path / "killed"
    killed = subprocess.run([sys.executable, str(WORKER), str(tiny_bert_dir), str(domain), str(out),
                             "--kill-in-run", "3", "--kill-at-step", "2"], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    state = json.loads((out / "labels.json").read_text())
    assert set(state["results"]) == {"start", "n6-r0", "n12-r0"} and state["running"]["name"] == "n6-r1"
    assert (out / "runs/n6-r1/training/checkpoints").is_dir()  # the interrupted run keeps what resumes it
    assert not (out / "runs/n6-r0/training/checkpoints").exists()  # a finished one does not
    first = {name: (out / "runs" / name / "train.json").stat().st_mtime_ns for name in ("n6-r0", "n12-r0")}
    resumed = labels_worker.run(tiny_bert_dir, domain, out)
    assert {name: (out / "runs" / name / "train.json").stat().st_mtime_ns for name in first} == first  # not retrained
    events = [json.loads(line) for line in (out / "runs/n6-r1/training/metrics.jsonl").read_text().splitlines()]
    assert any(e.get("event") == "resume" and e["step"] == 2 for e in events)
    for name, expected in straight["runs"].items():  # the same scores as a run never killed
        assert resumed["runs"][name]["dev"] == expected["dev"] and resumed["runs"][name]["steps"] == 4
    assert resumed["runs"]["n6-r1"]["wall_s"] >= state["running"]["elapsed_s"]  # its time before the kill counts


@pytest.mark.usefixtures("one_torch_thread")
def test_budget_skips_runs_and_says_which_sizes(tiny_bert_dir, domain, tmp_path):
    report = sentforge.labels(str(tiny_bert_dir), domain / "labelled.jsonl", domain / "dev.jsonl", tmp_path / "c",
                              budget_minutes=1e-4, **FAST)
    assert report["skipped"] == ["n6-r0", "n12-r0", "n6-r1", "n12-r1"] and report["sizes_without_runs"] == [6, 12]
    assert "budget" in report["runs"]["n6-r0"]["reason"]
    assert "sizes without any run: 6, 12" in (tmp_path / "c" / "report.md").read_text()


def test_a_run_starts_only_when_its_steps_fit_in_the_time_left():
    finished = [LabelsRun(status="done", wall_s=30.0, steps=10),  # (30-10 + 70-10) / 40 = 2 s a step
                LabelsRun(status="done", wall_s=70.0, steps=30)]
    assert time_for_run(500.0, 10.0, 50, 0.0, []) == (490.0, "")  # nothing measured yet: it runs
    assert time_for_run(111.0, 10.0, 50, 0.0, finished) == (101.0, "")  # 50 * 2 + 10 = 110 s needed
    limit, why = time_for_run(109.0, 10.0, 50, 0.0, finished)
    assert limit is None and "need about 110 s" in why and "2.00 s a step" in why
    assert time_for_run(109.0, 10.0, 50, 5.0, finished)[0] == 99.0  # 5 s of it ran before an interruption
    assert time_for_run(10.5, 10.0, 1, 0.0, [])[0] is None  # not even the overhead fits


def test_cli_errors_exit_2_with_one_line(tiny_bert_dir, domain, tmp_path, capsys):
    base = ["labels", "--model", tiny_bert_dir, "--labelled", domain / "labelled.jsonl", "--dev",
            domain / "dev.jsonl", "--output", tmp_path / "o"]
    assert_one_line_error(*run_cli([*base, "--fractions", "5,x"], capsys)[::2], "--fractions")
    assert_one_line_error(*run_cli([*base, "--fractions", "0,50"], capsys)[::2], "--fractions")
    assert_one_line_error(*run_cli([*base, "--method", "nli"], capsys)[::2], "--method")
    missing = ["labels", "--model", tiny_bert_dir, "--labelled", tmp_path / "none.jsonl", "--dev",
               domain / "dev.jsonl", "--output", tmp_path / "o"]
    assert_one_line_error(*run_cli(missing, capsys)[::2], "none.jsonl")
    assert_one_line_error(*run_cli([*base, "--repeats", "0"], capsys)[::2], "--repeats")
    assert_one_line_error(*run_cli([*base, "--target", "500"], capsys)[::2], "--target 500", "map", "[0, 100]")
    zeros = write_jsonl(tmp_path / "zeros.jsonl", [{"sentence1": s, "sentence2": s, "label": 0} for s in SENTENCES])
    code, err = run_cli(["labels", "--model", tiny_bert_dir, "--labelled", zeros, "--dev", domain / "dev.jsonl",
                         "--output", tmp_path / "o"], capsys)[::2]
    assert_one_line_error(code, err, "zeros.jsonl", "labels trains on")
    assert "adapt" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.usefixtures("one_torch_thread")
def test_cli_calls_the_library_function(tiny_bert_dir, domain, tmp_path, capsys):
    out = tmp_path / "o"
    code, stdout, _ = run_cli(["labels", "--model", tiny_bert_dir, "--labelled", domain / "labelled.jsonl", "--dev",
                               domain / "dev.jsonl", "--output", out, "--fractions", "50,100", "--repeats", "1",
                               "--budget-minutes", "0.000001", "--max-seq-length", "16", "--seed", "3"], capsys)
    assert code == 0 and "no curve fitted" in stdout
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["seed"] == 3 and report["settings"]["max_seq_length"] == 16
    assert report["settings"]["sizes"] == [6, 12] and report["skipped"] == ["n6-r0", "n12-r0"]


@pytest.mark.usefixtures("one_torch_thread")
def test_runs_too_short_to_learn_are_warned_before_training_and_the_answer_cannot_tell(tiny_bert_dir, domain,
                                                                                     tmp_path, capsys, caplog):
    # 3, 6 and 12 pairs at batch 4, one epoch each: 1 step, 1 step and 3 steps, all fewer than 10.
    code, stdout, err = run_cli(["labels", "--model", tiny_bert_dir, "--labelled", domain / "labelled.jsonl",
                                 "--dev", domain / "dev.jsonl", "--output", tmp_path / "o", "--fractions",
                                 "25,50,100", "--repeats", "1", "--batch-size", "4", "--max-seq-length", "16"], capsys)
    assert code == 0, err
    messages = [r.getMessage() for r in caplog.records]
    warning = next(i for i, r in enumerate(caplog.records) if r.levelname == "WARNING")
    assert messages[warning].startswith("runs too short to learn: the runs of 3 labels (1 step), 6 labels (1 step), "
                                        "12 labels (3 steps) take fewer than 10 optimizer steps")
    assert warning < next(i for i, m in enumerate(messages) if m.startswith("start model: dev"))  # before any work
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["short_runs"] == [{"labels": 3, "steps": 1}, {"labels": 6, "steps": 1}, {"labels": 12, "steps": 3}]
    assert report["answer"]["worth"] in ("cannot tell", "above")
    markdown = (tmp_path / "o" / "report.md").read_text()
    assert "**Warning**: runs too short to learn: the runs of 3 labels (1 step)" in markdown
    assert "not worth it" not in markdown
    assert "runs too short to learn: cannot tell what more labels would add" in stdout


@pytest.mark.usefixtures("one_torch_thread")
def test_keep_checkpoints_keeps_them_and_the_printed_answer_has_its_interval(tiny_bert_dir, domain, tmp_path, capsys):
    out = tmp_path / "o"
    code, stdout, err = run_cli(["labels", "--model", tiny_bert_dir, "--labelled", domain / "labelled.jsonl",
                                 "--dev", domain / "dev.jsonl", "--output", out, "--fractions", "25,50,100",
                                 "--repeats", "1", "--steps", "1", "--batch-size", "4", "--max-seq-length", "16",
                                 "--keep-checkpoints"], capsys)
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    assert all((out / "runs" / name / "training" / "checkpoints").is_dir() for name in report["runs"])
    assert "training checkpoints kept" in (out / "report.md").read_text()
    # Three sizes, one repeat: the straight line has one residual degree of freedom, so 2x has an interval.
    at_2x = report["answer"]["at_2x"]
    assert f"dev map {at_2x['score']:.2f} [95 % interval {at_2x['low']:.2f}, {at_2x['high']:.2f}]" in stdout
    markdown = (out / "report.md").read_text()
    assert "± -" not in markdown and "interval -," not in markdown
    verdicts = ("**rises**", "**falls**", "**not distinguishable from flat**", "**saturates**",
                "**straight line in log n**")
    assert sum(v in markdown for v in verdicts[:3]) == 1 and sum(v in markdown for v in verdicts[3:]) == 1
