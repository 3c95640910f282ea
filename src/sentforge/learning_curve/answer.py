"""What the fitted curve says: the expected dev score with 2× and 5× the labels, how many labels reach a
target score (or that it lies above the curve's ceiling), whether the curve has flattened, and the
holdout check (the curve fitted without the largest size predicts it; the error in dev points)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sentforge.errors import ConfigError
from sentforge.learning_curve.curve import C_BOUNDS, MIN_SIZES, Z95, CurveFit, fit_curve

MULTIPLES = (2, 5)
FLAT_POINTS = 1.0  # the curve has flattened when 5× the labels add fewer dev points than this


def prediction(fit: CurveFit, n: float) -> dict[str, Any]:
    """The fitted score at n labels with its 95 % interval (None where the fit leaves it undetermined)."""
    value, error = fit.predict(n)
    if not np.isfinite(error):
        return {"labels": n, "score": value, "error": None, "low": None, "high": None}
    return {"labels": n, "score": value, "error": error, "low": value - Z95 * error, "high": value + Z95 * error}


def answer(fit: CurveFit, means: dict[int, float], target: float | None = None,
           flat_points: float = FLAT_POINTS) -> dict[str, Any]:
    """The report's answer from the fit and the measured mean dev score per size."""
    largest = max(means)
    result: dict[str, Any] = {"labels": largest, "measured": means[largest]}
    for multiple in MULTIPLES:
        result[f"at_{multiple}x"] = prediction(fit, multiple * largest)
    gain = result[f"at_{MULTIPLES[-1]}x"]["score"] - fit.predict(largest)[0]
    result["gain_5x"] = gain
    result["flattened"] = bool(gain < flat_points)
    result["flat_points"] = flat_points
    result["per_doubling"] = fit.predict(2 * largest)[0] - fit.predict(largest)[0]
    # c at its lower bound: a − b·n^(−c) ≈ (a − b) + b·c·ln n, a straight line in log n with no ceiling in sight.
    result["log_linear"] = bool(fit.c <= C_BOUNDS[0] * 1.001)
    result["rising"] = bool(fit.b > 0)  # b ≤ 0: the fitted scores do not grow with the labels
    result["ceiling"] = {"score": fit.a, "error": fit.to_json()["a_err"]}
    if target is not None:
        result["target"] = target_answer(fit, means, target)
    return result


def target_answer(fit: CurveFit, means: dict[int, float], target: float) -> dict[str, Any]:
    """Where the measured means first reach `target`, and where the fitted curve does."""
    reached = [n for n in sorted(means) if means[n] >= target]
    labels = fit.labels_for(target)
    status = "reached" if reached else "predicted" if labels is not None else "not reached"
    return {"score": target, "status": status, "measured_labels": reached[0] if reached else None,
            "fitted_labels": labels}


def holdout(points: list[tuple[int, float]], means: dict[int, float]) -> dict[str, Any]:
    """Fit on every size below the largest, predict the largest, compare with its measured mean."""
    largest = max(means)
    kept = [(n, y) for n, y in points if n < largest]
    if len({n for n, _ in kept}) < MIN_SIZES:
        return {"status": "not enough sizes", "reason": f"the check fits {MIN_SIZES} sizes below the largest; "
                                                        f"{len({n for n, _ in kept})} measured"}
    try:
        fit = fit_curve([n for n, _ in kept], [y for _, y in kept])
    except (ConfigError, RuntimeError) as err:
        return {"status": "fit failed", "reason": str(err)}
    predicted = prediction(fit, largest)
    error = predicted["score"] - means[largest]
    return {"status": "done", "labels": largest, "fit": fit.to_json(), "predicted": predicted,
            "measured": means[largest], "error": error,
            "within_interval": None if predicted["low"] is None
            else bool(predicted["low"] <= means[largest] <= predicted["high"])}
