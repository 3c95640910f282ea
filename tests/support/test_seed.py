"""One rule for a seed (support/seed.py): a whole number that every generator takes, 0 to 2**64 - 1."""

from __future__ import annotations

import pytest

from sentforge.support.errors import ConfigError
from sentforge.support.seed import SEED_LIMIT, check_seed, set_seed


@pytest.mark.parametrize("seed", [0, 1111, 2**32, SEED_LIMIT - 1])
def test_a_seed_every_generator_takes_passes(seed):
    assert check_seed(seed) == seed


@pytest.mark.parametrize("seed", [-1, SEED_LIMIT, 1.5, True, "7"])
def test_a_seed_some_generator_refuses_is_an_error_naming_the_option(seed):
    with pytest.raises(ConfigError, match=r"^--seed must be a whole number from 0 to 18446744073709551615"):
        check_seed(seed)


def test_set_seed_refuses_before_seeding():
    with pytest.raises(ConfigError, match="^seed must be"):
        set_seed(-1)
    set_seed(SEED_LIMIT - 1)  # torch.manual_seed's largest
