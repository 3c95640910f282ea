"""Batches of class groups for supervised contrastive training: every text of a batch has a text of its class
beside it (a batch of random texts of 50 classes, 8 texts each, gives most texts no positive).

Each of `iterations` rounds takes every class's texts in a seeded order in groups of `per_class`, shuffles the
groups and lays them end to end; the sequence is cut into batches (the last, partial one left out). A BatchSampler
of the Trainer (training/batch_order.py): the batches are a pure function of (labels, batch size, seed).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from sentforge.data.classes import class_members
from sentforge.support.errors import ConfigError


class ClassGroupSampler:
    def __init__(self, labels: Sequence[Hashable], iterations: int, per_class: int = 2, seed: int = 0) -> None:
        if iterations < 1 or per_class < 2:
            raise ConfigError(f"iterations must be at least 1 and per_class at least 2, got {iterations}, {per_class}")
        self.labels, self.iterations, self.per_class, self.seed = list(labels), iterations, per_class, seed

    def order(self) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        members = class_members(self.labels)
        keys = sorted(members, key=str)
        sequence: list[np.ndarray] = []
        for _ in range(self.iterations):
            groups = [chunk for key in keys
                      for chunk in np.array_split(rng.permutation(members[key]),
                                                  max(1, len(members[key]) // self.per_class))]
            sequence.extend(groups[int(i)] for i in rng.permutation(len(groups)))
        return np.concatenate(sequence)

    def batches(self, global_batch_size: int) -> np.ndarray:
        order = self.order()
        if len(order) < global_batch_size:
            raise ConfigError(f"{len(order)} texts are fewer than one batch of {global_batch_size}")
        return order[:len(order) // global_batch_size * global_batch_size].reshape(-1, global_batch_size)
