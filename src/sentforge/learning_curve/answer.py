"""What the runs say, each conclusion from a stated test.

- Does the score rise with the labels? The paired gain of the largest size over the smallest on the dev
  units (bootstrap, the runs of each size averaged): rising when its 95 % interval lies above 0, falling
  when below, otherwise not distinguishable from flat. The fitted change per doubling gets the same words
  from its own interval, so the report never calls flat what an interval there places off 0.
- Saturating or straight in log n? The F-test of the saturating curve against the straight line
  (curve.py); without evidence of saturation the predictions use the straight line, the simpler model.
- The expected dev score with 2× and 5× the labels, the gain per doubling and with 5× the labels, each with
  its 95 % interval from the chosen fit (or "not estimable" when the runs leave it no residual freedom).
- How many labels reach a target score: measured, predicted by the chosen fit (only for a rising curve;
  beyond LABEL_CAP times the labels given, only that), or not reached.
- The holdout check: the chosen curve fitted without the largest size predicts it; the error in dev points.
- Runs too short to learn (fewer than MIN_LEARNING_STEPS steps) never conclude that more labels are not
  worth it: the answer then cannot tell.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError
from sentforge.learning_curve.curve import (
    MIN_LINE_SIZES, MIN_SIZES, SATURATING, fit_curve, fit_kind, fit_log_linear, shape_test)

MULTIPLES = (2, 5)
FLAT_POINTS = 1.0  # more labels are not worth it when 5× the labels add fewer dev points than this
LABEL_CAP = 100  # label counts for a target beyond this multiple of the labels given are not extrapolated
RISING, FALLING, FLAT = "rising", "falling", "flat"
# A run of fewer optimizer steps cannot show what its labels hold: a handful of updates at the recipes'
# learning rates (1e-5 to 1e-4) barely moves the start model, so its dev score is about the start model's
# whatever its labels, and a flat curve of such runs says nothing about more labels.
MIN_LEARNING_STEPS = 10


def metric_range(metric: str) -> tuple[float, float]:
    """The range of a dev metric as sentforge reports it (×100): correlations in [−100, 100], the rest in
    [0, 100]."""
    return (-100.0, 100.0) if metric.startswith(("spearman", "pearson")) else (0.0, 100.0)


def check_target(target: float | None, metric: str) -> None:
    low, high = metric_range(metric)
    if target is not None and not low <= target <= high:
        raise ConfigError(f"--target {target:g}: the dev metric {metric} lies in [{low:g}, {high:g}]")


def basis(points: list[tuple[int, float]]) -> str:
    """"N sizes x R repeats": what the fits stand on (R, the most runs of a size)."""
    counts = {n: sum(size == n for size, _ in points) for n, _ in points}
    repeats = max(counts.values(), default=0)
    return f"{len(counts)} sizes x {repeats} repeat{'s' if repeats != 1 else ''}"


def direction(estimate: dict[str, Any] | None) -> str | None:
    """rising, falling or flat by a 95 % interval ({"low", "high"}) as the report prints it (two decimals):
    flat exactly when it holds 0; None without an interval."""
    if estimate is None or estimate["low"] is None:
        return None
    low, high = round(estimate["low"], 2), round(estimate["high"], 2)
    return RISING if low > 0 else FALLING if high < 0 else FLAT


def trend(size_gain: dict[str, Any] | None) -> str | None:
    """rising, falling or flat, by the interval of the largest size's paired gain over the smallest's."""
    return direction(size_gain)


def short_runs(runs: list[tuple[int, int]]) -> list[dict[str, int]]:
    """[{"labels", "steps"}]: the sizes with a run (labels, steps) shorter than MIN_LEARNING_STEPS, each with
    the fewest steps of its runs, by size."""
    short: dict[int, int] = {}
    for labels, steps in runs:
        if steps < MIN_LEARNING_STEPS:
            short[labels] = min(steps, short.get(labels, steps))
    return [{"labels": labels, "steps": steps} for labels, steps in sorted(short.items())]


def answer(points: list[tuple[int, float]], means: dict[int, float], size_gain: dict[str, Any] | None,
           target: float | None = None, flat_points: float = FLAT_POINTS,
           short: list[dict[str, int]] | None = None) -> dict[str, Any]:
    """The report's answer from every run's (labels, dev score), the measured mean per size, and the paired
    gain of the largest size over the smallest (PairedInterval.to_json(), with `sizes`). short: short_runs()
    of the runs, whose sizes' runs were too short to learn."""
    sizes, scores = [n for n, _ in points], [y for _, y in points]
    if len(set(sizes)) < MIN_SIZES:
        raise ConfigError(f"a learning curve needs at least {MIN_SIZES} sizes, got {len(set(sizes))}")
    line = fit_log_linear(sizes, scores)
    try:
        curve = fit_curve(sizes, scores)
    except RuntimeError:  # the saturating fit did not converge: the straight line stands alone
        curve = None
    shape = shape_test(curve, line)
    fit = curve if shape["kind"] == SATURATING else line
    largest = max(means)
    result: dict[str, Any] = {"labels": largest, "measured": means[largest], "basis": basis(points),
                              "trend": trend(size_gain), "size_gain": size_gain, "shape": shape, "model": fit.kind,
                              "fits": {"saturating": None if curve is None else curve.to_json(),
                                       "log-linear": line.to_json()}}
    for multiple in MULTIPLES:
        result[f"at_{multiple}x"] = {"labels": multiple * largest, **fit.predict(multiple * largest).to_json()}
    result["per_doubling"] = fit.difference(2 * largest, largest).to_json()
    result["slope"] = direction(result["per_doubling"])
    gain = fit.difference(MULTIPLES[-1] * largest, largest).to_json()
    result["gain_5x"] = gain
    result["flat_points"] = flat_points
    result["worth"] = ("above" if gain["low"] is not None and gain["low"] >= flat_points else
                       # runs that could not learn say nothing about what more labels would add
                       "cannot tell" if short else
                       "below" if gain["high"] is not None and gain["high"] < flat_points else "undecided")
    if fit.kind == SATURATING:
        result["ceiling"] = {"score": fit.a, "error": fit.to_json()["a_err"]}
    if target is not None:
        result["target"] = target_answer(fit, means, target, result["trend"])
    return result


def target_answer(fit: Any, means: dict[int, float], target: float, direction: str | None) -> dict[str, Any]:
    """Where the measured means first reach `target`; else where the fitted curve does (a rising curve
    only), capped at LABEL_CAP times the labels given."""
    reached = [n for n in sorted(means) if means[n] >= target]
    result: dict[str, Any] = {"score": target, "measured_labels": reached[0] if reached else None,
                              "fitted_labels": None, "cap": LABEL_CAP * max(means)}
    if reached:
        return result | {"status": "reached"}
    if direction != RISING:
        return result | {"status": "not predicted"}
    with np.errstate(over="ignore"):
        labels = fit.labels_for(target)
    if labels is None:
        return result | {"status": "not reached"}
    if not labels <= result["cap"]:
        return result | {"status": "beyond"}
    return result | {"status": "predicted", "fitted_labels": labels}


def holdout(points: list[tuple[int, float]], means: dict[int, float], kind: str) -> dict[str, Any]:
    """Fit the `kind` curve on every size below the largest, predict the largest, compare with its mean."""
    largest = max(means)
    kept = [(n, y) for n, y in points if n < largest]
    needed = MIN_SIZES if kind == SATURATING else MIN_LINE_SIZES
    below = len({n for n, _ in kept})
    if below < needed:
        return {"status": "not enough sizes", "reason": f"the {kind} check fits {needed} sizes below the largest; "
                                                        f"{below} measured"}
    try:
        fit = fit_kind(kind, [n for n, _ in kept], [y for _, y in kept])
    except (ConfigError, RuntimeError) as err:
        return {"status": "fit failed", "reason": str(err)}
    predicted = {"labels": largest, **fit.predict(largest).to_json()}
    error = predicted["score"] - means[largest]
    return {"status": "done", "labels": largest, "fit": fit.to_json(), "predicted": predicted, "basis": basis(kept),
            "measured": means[largest], "error": error,
            "within_interval": None if predicted["low"] is None
            else bool(predicted["low"] <= means[largest] <= predicted["high"])}
