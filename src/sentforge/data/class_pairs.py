"""SetFit's training pairs from class-labelled texts (Tunstall et al., 2022): for each of `iterations` rounds
and each text, one pair with a text of its class (similarity 1) and one with a text of another class
(similarity 0), drawn with a seed: 2 * iterations * n balanced pairs, whatever the number of classes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sentforge.data.classes import ClassExample, class_members
from sentforge.support.errors import ConfigError


def class_pairs(examples: Sequence[ClassExample], iterations: int, seed: int) -> list[tuple[str, str, float]]:
    """(text, other text, 1.0 or 0.0) pairs: per round and text a same-class and a different-class partner."""
    if iterations < 1:
        raise ConfigError(f"iterations must be at least 1, got {iterations}")
    rng = np.random.default_rng(seed)
    labels = [label for _, label in examples]
    members = class_members(labels)
    pairs: list[tuple[str, str, float]] = []
    for _ in range(iterations):
        for i, (text, label) in enumerate(examples):
            own = [j for j in members[label] if j != i]
            positive = own[int(rng.integers(len(own)))]
            negative = int(rng.integers(len(examples)))
            while labels[negative] == label:
                negative = int(rng.integers(len(examples)))
            pairs.append((text, examples[positive][0], 1.0))
            pairs.append((text, examples[negative][0], 0.0))
    return pairs
