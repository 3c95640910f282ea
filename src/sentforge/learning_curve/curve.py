"""The saturating learning curve score(n) = a − b·n^(−c), fitted by least squares
(`scipy.optimize.curve_fit`) to the dev scores of every run; a is the ceiling the curve approaches,
b how far below it the curve starts, c how fast it closes the gap. Predictions carry a 95 % interval
from the fit's parameter covariance (the delta method)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from sentforge.errors import ConfigError

Z95 = 1.959964  # the two-sided 95 % quantile of the normal distribution
MIN_SIZES = 3  # three parameters need three distinct sizes
C_BOUNDS = (1e-3, 5.0)


def saturating(n: Any, a: float, b: float, c: float) -> Any:
    return a - b * np.power(n, -c)


@dataclass(frozen=True)
class CurveFit:
    a: float
    b: float
    c: float
    covariance: np.ndarray  # 3 × 3, of (a, b, c)
    points: int
    sizes: list[int]

    @property
    def errors(self) -> np.ndarray:
        """The parameters' standard errors (the square roots of the covariance's diagonal; inf when the
        data do not determine them)."""
        with np.errstate(invalid="ignore"):
            return np.sqrt(np.diag(self.covariance))

    def predict(self, n: float) -> tuple[float, float]:
        """(the fitted score at n labels, its standard error from the covariance: nan or inf when the points
        do not determine it)."""
        power = float(np.power(n, -self.c))
        gradient = np.array([1.0, -power, self.b * np.log(n) * power])
        with np.errstate(invalid="ignore"):
            variance = float(gradient @ self.covariance @ gradient)
        return float(self.a - self.b * power), float(np.sqrt(variance)) if variance >= 0 else float("nan")

    def labels_for(self, score: float) -> float | None:
        """The (fractional) number of labels at which the curve reaches `score`; None when it never does."""
        if self.b <= 0 or score >= self.a:
            return None
        return float((self.b / (self.a - score)) ** (1 / self.c))

    def to_json(self) -> dict[str, Any]:
        a_err, b_err, c_err = (_finite(e) for e in self.errors)
        return {"a": self.a, "b": self.b, "c": self.c, "a_err": a_err, "b_err": b_err, "c_err": c_err,
                "points": self.points, "sizes": self.sizes}


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def fit_curve(sizes: Any, scores: Any) -> CurveFit:
    """Fit a − b·n^(−c) to (labels, dev score) points (several per size allowed)."""
    from scipy.optimize import OptimizeWarning, curve_fit

    n = np.asarray(sizes, dtype=np.float64)
    y = np.asarray(scores, dtype=np.float64)
    distinct = sorted({int(v) for v in n})
    if len(distinct) < MIN_SIZES:
        raise ConfigError(f"fitting a − b·n^(−c) needs at least {MIN_SIZES} sizes, got {len(distinct)}")
    # Start from a ceiling a little above the best score and a gap that closes like 1/sqrt(n).
    c0 = 0.5
    a0 = float(y.max() + 0.1 * (np.ptp(y) + 1e-3))
    b0 = float((a0 - y[n == n.min()].mean()) * n.min() ** c0)
    bounds = ([-np.inf, -np.inf, C_BOUNDS[0]], [np.inf, np.inf, C_BOUNDS[1]])
    with warnings.catch_warnings():  # an undetermined covariance (as many points as parameters) is inf: reported
        warnings.simplefilter("ignore", OptimizeWarning)
        (a, b, c), covariance = curve_fit(saturating, n, y, p0=[a0, b0, c0], bounds=bounds, maxfev=20000)
    return CurveFit(float(a), float(b), float(c), np.asarray(covariance, dtype=np.float64), len(n), distinct)
