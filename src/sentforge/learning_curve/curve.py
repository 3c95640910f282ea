"""The two learning curves fitted to the dev scores of every run, and the test that chooses between them.

saturating: score(n) = a − b·n^(−c), fitted by least squares (`scipy.optimize.curve_fit`); a is the
ceiling the curve approaches, b how far below it the curve starts, c how fast it closes the gap.
log-linear: score(n) = a + b·ln n, ordinary least squares: every doubling adds b·ln 2.
The straight line is the saturating curve's limit as c → 0 (a − b·n^(−c) ≈ (a − b) + b·c·ln n), so the
saturating curve has one parameter more, and the extra-sum-of-squares F-test (1 and N − 3 degrees of
freedom) says whether its curvature fits the points better than chance would. Every prediction and
difference carries a 95 % interval from the fit's parameter covariance (the delta method) with Student's
t at the fit's residual degrees of freedom; with none left (as many runs as parameters) it has none.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError

MIN_SIZES = 3  # three parameters need three distinct sizes
MIN_LINE_SIZES = 2
C_BOUNDS = (1e-3, 5.0)
CONFIDENCE = 0.95
SIGNIFICANCE = 0.05  # the F-test's level: saturating only when p is below it
SATURATING, LOG_LINEAR = "saturating", "log-linear"


def saturating(n: Any, a: float, b: float, c: float) -> Any:
    return a - b * np.power(n, -c)


def t_quantile(dof: int) -> float | None:
    """The two-sided 95 % quantile of Student's t with `dof` degrees of freedom (None when dof < 1)."""
    from scipy.stats import t

    return float(t.ppf(0.5 + CONFIDENCE / 2, dof)) if dof >= 1 else None


@dataclass(frozen=True)
class Estimate:
    """A fitted quantity, its standard error and 95 % interval (None where the fit leaves it undetermined)."""

    value: float
    error: float | None
    low: float | None
    high: float | None

    def to_json(self) -> dict[str, Any]:
        return {"score": self.value, "error": self.error, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class _Fit:
    covariance: np.ndarray
    points: int
    sizes: list[int]
    rss: float  # the residual sum of squares

    kind = ""
    parameters = 0

    @property
    def dof(self) -> int:
        """Residual degrees of freedom."""
        return self.points - self.parameters

    @property
    def errors(self) -> np.ndarray:
        """The parameters' standard errors (inf or nan when the data do not determine them)."""
        with np.errstate(invalid="ignore"):
            return np.sqrt(np.diag(self.covariance))

    def value(self, n: float) -> float:
        raise NotImplementedError

    def gradient(self, n: float) -> np.ndarray:
        raise NotImplementedError

    def _estimate(self, value: float, gradient: np.ndarray) -> Estimate:
        with np.errstate(invalid="ignore"):
            variance = float(gradient @ self.covariance @ gradient)
        quantile = t_quantile(self.dof)
        if quantile is None or not np.isfinite(variance) or variance < 0:
            return Estimate(value, None, None, None)
        error = float(np.sqrt(variance))
        return Estimate(value, error, value - quantile * error, value + quantile * error)

    def predict(self, n: float) -> Estimate:
        """The fitted score at n labels with its interval."""
        return self._estimate(self.value(n), self.gradient(n))

    def difference(self, n: float, reference: float) -> Estimate:
        """The fitted score at n minus that at `reference` labels, with its interval."""
        return self._estimate(self.value(n) - self.value(reference), self.gradient(n) - self.gradient(reference))


@dataclass(frozen=True)
class CurveFit(_Fit):
    a: float = 0.0
    b: float = 0.0
    c: float = 0.0

    kind = SATURATING
    parameters = 3

    def value(self, n: float) -> float:
        return float(saturating(n, self.a, self.b, self.c))

    def gradient(self, n: float) -> np.ndarray:
        power = float(np.power(n, -self.c))
        return np.array([1.0, -power, self.b * np.log(n) * power])

    @property
    def at_lower_bound(self) -> bool:
        """c at its lower bound: the curve is the straight line in log n, no ceiling in sight."""
        return self.c <= C_BOUNDS[0] * 1.001

    def labels_for(self, score: float) -> float | None:
        """The (fractional) number of labels at which the curve reaches `score`; None when it never does."""
        if self.b <= 0 or score >= self.a:
            return None
        return float((self.b / (self.a - score)) ** (1 / self.c))

    def to_json(self) -> dict[str, Any]:
        a_err, b_err, c_err = (_finite(e) for e in self.errors)
        return {"kind": self.kind, "a": self.a, "b": self.b, "c": self.c, "a_err": a_err, "b_err": b_err,
                "c_err": c_err, "points": self.points, "sizes": self.sizes, "rss": self.rss}


@dataclass(frozen=True)
class LogLinearFit(_Fit):
    a: float = 0.0
    b: float = 0.0

    kind = LOG_LINEAR
    parameters = 2

    def value(self, n: float) -> float:
        return float(self.a + self.b * np.log(n))

    def gradient(self, n: float) -> np.ndarray:
        return np.array([1.0, float(np.log(n))])

    def labels_for(self, score: float) -> float | None:
        """The (fractional) number of labels at which the line reaches `score`; None when it never rises."""
        if self.b <= 0:
            return None
        return float(np.exp((score - self.a) / self.b))

    def to_json(self) -> dict[str, Any]:
        a_err, b_err = (_finite(e) for e in self.errors)
        return {"kind": self.kind, "a": self.a, "b": self.b, "a_err": a_err, "b_err": b_err, "points": self.points,
                "sizes": self.sizes, "rss": self.rss}


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _points(sizes: Any, scores: Any, needed: int, formula: str) -> tuple[np.ndarray, np.ndarray, list[int]]:
    n = np.asarray(sizes, dtype=np.float64)
    y = np.asarray(scores, dtype=np.float64)
    distinct = sorted({int(v) for v in n})
    if len(distinct) < needed:
        raise ConfigError(f"fitting {formula} needs at least {needed} sizes, got {len(distinct)}")
    return n, y, distinct


def fit_curve(sizes: Any, scores: Any) -> CurveFit:
    """Fit a − b·n^(−c) to (labels, dev score) points (several per size allowed)."""
    from scipy.optimize import OptimizeWarning, curve_fit

    n, y, distinct = _points(sizes, scores, MIN_SIZES, "a − b·n^(−c)")
    # Start from a ceiling a little above the best score and a gap that closes like 1/sqrt(n).
    c0 = 0.5
    a0 = float(y.max() + 0.1 * (np.ptp(y) + 1e-3))
    b0 = float((a0 - y[n == n.min()].mean()) * n.min() ** c0)
    bounds = ([-np.inf, -np.inf, C_BOUNDS[0]], [np.inf, np.inf, C_BOUNDS[1]])
    with warnings.catch_warnings():  # an undetermined covariance (as many points as parameters) is inf: reported
        warnings.simplefilter("ignore", OptimizeWarning)
        (a, b, c), covariance = curve_fit(saturating, n, y, p0=[a0, b0, c0], bounds=bounds, maxfev=20000)
    rss = float(np.sum((y - saturating(n, a, b, c)) ** 2))
    return CurveFit(np.asarray(covariance, dtype=np.float64), len(n), distinct, rss, float(a), float(b), float(c))


def fit_log_linear(sizes: Any, scores: Any) -> LogLinearFit:
    """Fit a + b·ln n by ordinary least squares; the covariance s²(XᵀX)⁻¹ (inf with no residual freedom)."""
    n, y, distinct = _points(sizes, scores, MIN_LINE_SIZES, "a + b·ln n")
    design = np.column_stack([np.ones_like(n), np.log(n)])
    (a, b), *_ = np.linalg.lstsq(design, y, rcond=None)
    rss = float(np.sum((y - design @ np.array([a, b])) ** 2))
    dof = len(n) - 2
    variance = rss / dof if dof > 0 else np.inf
    return LogLinearFit(variance * np.linalg.inv(design.T @ design), len(n), distinct, rss, float(a), float(b))


def fit_kind(kind: str, sizes: Any, scores: Any) -> CurveFit | LogLinearFit:
    return fit_curve(sizes, scores) if kind == SATURATING else fit_log_linear(sizes, scores)


def shape_test(curve: CurveFit | None, line: LogLinearFit) -> dict[str, Any]:
    """Saturating or straight in log n: the F-test of the saturating fit's extra parameter.

    F = (RSS_line − RSS_saturating) / (RSS_saturating / (N − 3)) on 1 and N − 3 degrees of freedom; the curve
    is saturating when p < 0.05 and c lies above its lower bound (there the two curves are one)."""
    from scipy.stats import f

    if curve is None:
        return {"kind": LOG_LINEAR, "tested": False, "reason": f"the saturating curve needs {MIN_SIZES} sizes"}
    if curve.dof < 1:
        return {"kind": LOG_LINEAR, "tested": False,
                "reason": f"the saturating curve has {curve.parameters} parameters and {curve.points} runs leave it "
                          "no residual degree of freedom"}
    gain = max(line.rss - curve.rss, 0.0)
    statistic = float("inf") if curve.rss <= 0 else gain / (curve.rss / curve.dof)
    p = 0.0 if curve.rss <= 0 and gain > 0 else 1.0 if gain == 0 else float(f.sf(statistic, 1, curve.dof))
    saturates = p < SIGNIFICANCE and not curve.at_lower_bound
    return {"kind": SATURATING if saturates else LOG_LINEAR, "tested": True, "f": statistic, "p": p,
            "dof": [1, curve.dof]}


def curve_values(fit: dict[str, Any], n: Any) -> Any:
    """The fitted scores at `n` of a fit given as to_json()."""
    if fit["kind"] == SATURATING:
        return saturating(n, fit["a"], fit["b"], fit["c"])
    return fit["a"] + fit["b"] * np.log(n)


def formula(fit: dict[str, Any]) -> str:
    """The fitted curve in one line, e.g. for a legend."""
    if fit["kind"] == SATURATING:
        return f"{fit['a']:.1f} − {fit['b']:.3g}·n^(−{fit['c']:.3g})"
    return f"{fit['a']:.1f} + {fit['b']:.3g}·ln n"
