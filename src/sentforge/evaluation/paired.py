"""How sure is a difference between two models on one evaluation set? A paired bootstrap interval.

Both models are scored on the same units (queries of a ranking set, pairs of a pair set); a resample
draws units with replacement and recomputes each model's main metric on the same draw, so what the
two share (hard queries, easy pairs) cancels out of the difference. Per-query metrics are averaged; a
pair set's AP and Spearman are recomputed from the pair scores on every resample (they are not means
over pairs). Percentile intervals, as `scipy.stats.bootstrap(..., paired=True, method="percentile")`
computes them; written here with numpy so that thousands of resamples of a metric that sorts take
seconds (scipy's calls a Python statistic once per batch of resamples and has no tie-aware AP): the units are
sorted once, and each resample is how many times it draws each unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError

# Resamples are drawn in blocks of at most this many (resample, unit) cells: bounded memory on large sets.
MAX_BLOCK_CELLS = 2_000_000
STATISTICS = ("mean", "ap", "spearman")


@dataclass(frozen=True)
class ItemScores:
    """One model's scores on the units of an evaluation set.

    statistic "mean": `values` is each query's metric (×100), the set's metric their mean;
    "ap": `values` are pair similarities and `targets` 0/1 labels, the metric AP ×100 (ties as scikit-learn);
    "spearman": `values` are pair similarities and `targets` gold scores, the metric Spearman ×100.
    """

    statistic: str
    values: np.ndarray
    targets: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.statistic not in STATISTICS:
            raise ConfigError(f"statistic {self.statistic!r}: choose from {', '.join(STATISTICS)}")
        if (self.targets is None) != (self.statistic == "mean"):
            raise ConfigError(f"statistic {self.statistic!r}: targets are needed for ap and spearman, only there")

    def __len__(self) -> int:
        return len(self.values)

    def score(self) -> float:
        """The metric on all units (what the task reports)."""
        return float(self.resampled(np.arange(len(self))[None, :])[0])

    def resampled(self, draws: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
        """The metric on each row of unit indices `draws` (resamples × units). `counts`: how many times each row
        draws each unit, when already built for the same draws (AP and Spearman read only them)."""
        values = np.asarray(self.values, dtype=np.float64)
        if self.statistic == "mean":
            return values[draws].mean(axis=1)
        if counts is None:
            counts = _unit_counts(draws, len(values))
        targets = np.asarray(self.targets, dtype=np.float64)
        return (_average_precision(values, targets, counts) if self.statistic == "ap"
                else _spearman(values, targets, counts))

    def to_npz(self) -> dict[str, np.ndarray]:
        arrays = {"statistic": np.array(self.statistic), "values": np.asarray(self.values)}
        return arrays if self.targets is None else {**arrays, "targets": np.asarray(self.targets)}

    @classmethod
    def from_npz(cls, arrays: Any) -> ItemScores:
        return cls(str(arrays["statistic"]), np.asarray(arrays["values"]),
                   np.asarray(arrays["targets"]) if "targets" in arrays else None)


@dataclass(frozen=True)
class PairedInterval:
    """other − base on the full set, the percentile interval of that difference, and its bootstrap
    standard error."""

    difference: float
    low: float
    high: float
    standard_error: float
    confidence: float
    resamples: int
    units: int

    @property
    def above_zero(self) -> bool:
        return self.low > 0

    def to_json(self) -> dict[str, Any]:
        return {key: round(value, 4) if isinstance(value, float) else value for key, value in asdict(self).items()}


def paired_bootstrap(base: ItemScores | Sequence[ItemScores], other: ItemScores | Sequence[ItemScores],
                     resamples: int = 5000, confidence: float = 0.95, seed: int = 0) -> PairedInterval:
    """The difference other − base of the metric, with a seeded paired percentile bootstrap interval.

    base or other may be several models' scores on the same units (repeated runs): their metric is then the
    mean of the models' metrics, on every resample as on the full set."""
    bases = [base] if isinstance(base, ItemScores) else list(base)
    others = [other] if isinstance(other, ItemScores) else list(other)
    reference = bases[0]
    for scores in [*bases[1:], *others]:
        if reference.statistic != scores.statistic or len(reference) != len(scores):
            raise ConfigError(f"paired scores differ: {reference.statistic} over {len(reference)} units vs "
                              f"{scores.statistic} over {len(scores)}; both models must be scored on the same "
                              "evaluation set")
        if reference.targets is not None and not np.array_equal(reference.targets, scores.targets):
            raise ConfigError("paired scores have different labels or gold scores: not the same evaluation set")
    if resamples < 1 or not 0 < confidence < 1:
        raise ConfigError(f"resamples must be positive and confidence within (0, 1); got {resamples}, {confidence}")
    units = len(reference)
    rng = np.random.default_rng(seed)
    block = max(1, MAX_BLOCK_CELLS // max(units, 1))
    differences = []
    for start in range(0, resamples, block):
        draws = rng.integers(0, units, size=(min(block, resamples - start), units))
        counts = None if reference.statistic == "mean" else _unit_counts(draws, units)  # shared by every model
        differences.append(_mean_resampled(others, draws, counts) - _mean_resampled(bases, draws, counts))
    spread = np.concatenate(differences)
    tail = (1 - confidence) / 2
    low, high = np.quantile(spread, [tail, 1 - tail])
    difference = float(np.mean([s.score() for s in others]) - np.mean([s.score() for s in bases]))
    return PairedInterval(difference, float(low), float(high), float(spread.std(ddof=1)), confidence, resamples,
                          units)


def _mean_resampled(group: list[ItemScores], draws: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
    return np.mean([scores.resampled(draws, counts) for scores in group], axis=0)


def _unit_counts(draws: np.ndarray, units: int) -> np.ndarray:
    """How many times each unit is drawn in each row of `draws` (resamples × drawn units)."""
    rows = len(draws)
    flat = (draws + units * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * units).reshape(rows, units).astype(np.float64)


def _tie_groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The units in ascending order of `values`, each sorted position's run of equal values (its index), and
    each run's last sorted position."""
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    starts = np.concatenate([[True], ranked[1:] != ranked[:-1]])
    group = np.cumsum(starts) - 1
    ends = np.concatenate([np.flatnonzero(starts)[1:] - 1, [len(values) - 1]])
    return order, group, ends


def _average_precision(scores: np.ndarray, labels: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """AP ×100 of each row of `counts` (the resample holding each unit that many times), as scikit-learn's
    average_precision_score: tied scores form one threshold, whose precision counts all of them. A row without
    a positive scores 0."""
    order, _, ends = _tie_groups(-scores)
    drawn = counts[:, order]
    hits = np.cumsum(drawn * labels[order], axis=1)[:, ends]  # positives up to each threshold
    seen = np.cumsum(drawn, axis=1)[:, ends]
    precision = np.divide(hits, seen, out=np.zeros_like(hits), where=seen > 0)
    gained = np.diff(hits, axis=1, prepend=0.0)  # each threshold's positives, read at its precision
    positives = hits[:, -1]
    return 100 * np.divide((gained * precision).sum(axis=1), positives, out=np.zeros(len(counts)),
                           where=positives > 0)


def _average_ranks(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each unit's rank in each resample of `counts` (average ranks for ties, as scipy's rankdata)."""
    order, group, ends = _tie_groups(values)
    through = np.cumsum(counts[:, order], axis=1)[:, ends]  # drawn units up to each run's end
    before = np.concatenate([np.zeros((len(counts), 1)), through[:, :-1]], axis=1)
    ranks = np.empty_like(counts)
    ranks[:, order] = (before + (through - before + 1) / 2)[:, group]
    return ranks


def _spearman(scores: np.ndarray, gold: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Spearman ×100 of each row of `counts` (average ranks for ties); 0 where a row is constant, as
    `correlations` does."""
    x, y = _average_ranks(scores, counts), _average_ranks(gold, counts)
    drawn = counts.sum(axis=1, keepdims=True)
    x -= (counts * x).sum(axis=1, keepdims=True) / drawn
    y -= (counts * y).sum(axis=1, keepdims=True) / drawn
    norm = np.sqrt((counts * x * x).sum(axis=1) * (counts * y * y).sum(axis=1))
    return 100 * np.divide((counts * x * y).sum(axis=1), norm, out=np.zeros(len(counts)), where=norm > 0)
