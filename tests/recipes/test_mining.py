"""Hard negatives mined with the start model (recipes/mining.py), on hand-placed vectors."""

from __future__ import annotations

import numpy as np
import pytest

from sentforge.support.errors import ConfigError
from sentforge.recipes.mining import mine_hard_negatives

# Unit vectors at these angles (degrees) from the anchor direction: cosine = cos(angle).
ANGLES = {"q1": 0, "p1": 30, "near": 35, "hard": 50, "mid": 70, "far": 120, "q2": 90, "p2": 100}


class Placed:
    def encode(self, texts, batch_size=32, normalize=False):
        radians = np.deg2rad([ANGLES[t] for t in texts])
        return np.stack([np.cos(radians), np.sin(radians)], axis=1).astype(np.float32)


def test_the_hardest_text_below_the_positive_by_the_margin_is_mined():
    # q1's positive p1 has cosine cos 30° = 0.866; "near" (cos 35° = 0.819) is within 0.1 of it: a likely
    # unlabelled positive, skipped; "hard" (cos 50° = 0.643) is the hardest beyond the margin.
    mined = mine_hard_negatives(Placed(), [("q1", "p1")], corpus=["near", "hard", "mid", "far"], margin=0.1)
    assert mined == [("q1", "p1", "hard")]
    # With no margin the nearest other text is taken; the anchor itself and its positive never are.
    assert mine_hard_negatives(Placed(), [("q1", "p1")], corpus=["q1", "near", "hard"], margin=0.0) == \
        [("q1", "p1", "near")]


def test_every_pair_keeps_its_own_negative_and_gets_the_same_number_of_mined_ones():
    examples = [("q1", "p1", "far"), ("q2", "p2", "mid")]
    mined = mine_hard_negatives(Placed(), examples, corpus=["hard"], per_pair=2, margin=0.1)
    assert [len(row) for row in mined] == [5, 5] and [row[:3] for row in mined] == examples
    # q2 (90°) and p2 (100°): cos 10° = 0.985, so at most 0.885: far (cos 30° = 0.866), then hard (cos 40° =
    # 0.766); mid (cos 20° = 0.940) is too close. A text of another pair is a fair negative.
    assert mined[1][3:] == ("far", "hard")
    # q1: "hard" (0.643), then "mid" (cos 70° = 0.342) — the pool holds the pairs' own texts too.
    assert mined[0][3:] == ("hard", "mid")


def test_a_pair_without_enough_candidates_beyond_the_margin_takes_the_least_similar():
    mined = mine_hard_negatives(Placed(), [("q1", "p1")], corpus=["near", "far"], margin=0.5)
    assert mined == [("q1", "p1", "far")]  # at most 0.866 - 0.5 = 0.366: only "far" (cos 120° = -0.5)
    mined = mine_hard_negatives(Placed(), [("q1", "p1")], corpus=["near", "mid"], margin=0.9)
    assert mined == [("q1", "p1", "mid")]  # none within the margin: the least similar text keeps the arity


def test_mining_refuses_single_texts_and_a_pool_too_small():
    with pytest.raises(ConfigError, match="pairs"):
        mine_hard_negatives(Placed(), ["q1"])
    with pytest.raises(ConfigError, match="larger pool"):
        mine_hard_negatives(Placed(), [("q1", "p1")], per_pair=1)
