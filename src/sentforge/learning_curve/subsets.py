"""Seeded nested subsets of the labelled units: for each repeat one random order of the units, and every
size takes the first n of that order, so that a smaller subset lies inside each larger one of the same
repeat (the curve then measures added labels, not a fresh draw) and repeats differ by their order."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from sentforge.support.errors import ConfigError

DEFAULT_FRACTIONS = (5.0, 10.0, 25.0, 50.0, 100.0)
MIN_SIZE = 2  # a contrastive batch needs two pairs


def sizes_of(total: int, fractions: Sequence[float]) -> list[int]:
    """The distinct subset sizes (ascending) for `fractions` (percent) of `total` units."""
    if not fractions:
        raise ConfigError("--fractions: give at least one percentage")
    bad = [f for f in fractions if not 0 < f <= 100]
    if bad:
        raise ConfigError(f"--fractions: percentages must lie in (0, 100], got {', '.join(f'{f:g}' for f in bad)}")
    if total < MIN_SIZE:
        raise ConfigError(f"--labelled: {total} labelled unit(s); a learning curve needs at least {MIN_SIZE}")
    return sorted({max(MIN_SIZE, min(total, math.ceil(total * f / 100 - 1e-9))) for f in fractions})


def repeat_order(total: int, seed: int, repeat: int) -> np.ndarray:
    """The seeded order of the units of one repeat (a permutation of range(total))."""
    return np.random.default_rng([seed, repeat]).permutation(total)


def nested_subsets(total: int, sizes: Sequence[int], seed: int, repeat: int) -> dict[int, np.ndarray]:
    """{size: the sorted unit indices of the subset} for one repeat; each is the first `size` of the
    repeat's order, so smaller subsets are contained in larger ones."""
    order = repeat_order(total, seed, repeat)
    return {size: np.sort(order[:size]) for size in sizes}
