"""One place that seeds every random number generator sentforge uses, and the one rule for a seed."""

from __future__ import annotations

import random

from sentforge.support.errors import ConfigError

# torch.manual_seed takes seeds below 2**64; numpy's generators take any non-negative integer.
SEED_LIMIT = 2**64


def check_seed(seed: int, option: str = "--seed") -> int:
    """Refuse a seed that some generator would refuse (checked before any work, so a bad seed leaves nothing)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ConfigError(f"{option} must be a whole number from 0 to {SEED_LIMIT - 1}, got {seed!r}")
    return seed


def set_seed(seed: int) -> None:
    import numpy as np
    import torch

    check_seed(seed, "seed")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
