"""Class-proportional mini-batches for PAUSE: every batch mirrors the dataset's composition of
labelled classes and unlabelled pairs, so that even a class holding 0.3% of the pairs appears in
the batches at its rate instead of in bursts.

The strata (one per labelled class, one for the unlabelled pairs) are merged into one sequence slot
by slot: slot m goes to the stratum furthest behind its share (largest m * n_s / n - taken_s), and
takes that stratum's next member in a seeded shuffle. After any number of slots every stratum is
within one pair of its exact share, so each run of `batch_size` slots -- a batch -- holds
batch_size * n_s / n pairs of stratum s, give or take one.

`ProportionalSampler` is the Trainer's batch sampler (`Trainer(..., batch_sampler=...)`): its global
batches are a pure function of (labels, global batch size, seed); the Trainer shuffles their order
each epoch, gives every process its contiguous share, and its checkpoints resume it exactly.
`ProportionalBatches` shows the same batches as a sequence of lists of examples.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError

UNLABELLED = "<unlabelled>"


def stratum(label: Any) -> Hashable:
    """The stratum of a label: the class (a tuple for multi-label), or UNLABELLED for None."""
    if label is None:
        return UNLABELLED
    return tuple(label) if isinstance(label, (list, tuple)) else label


def proportional_order(labels: Sequence[Any], seed: int) -> np.ndarray:
    """A permutation of range(len(labels)) in which every prefix holds each stratum in proportion
    to its size, within one item."""
    rng = np.random.default_rng(seed)
    groups: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(stratum(label), []).append(i)
    keys = sorted(groups, key=str)  # a fixed stratum order: the result depends on the seed only
    members = [rng.permutation(groups[key]) for key in keys]
    shares = np.array([len(m) for m in members], dtype=np.float64) / len(labels)
    taken = np.zeros(len(keys), dtype=np.int64)
    order = np.empty(len(labels), dtype=np.int64)
    for slot in range(len(labels)):
        chosen = int(np.argmax((slot + 1) * shares - taken))
        order[slot] = members[chosen][taken[chosen]]
        taken[chosen] += 1
    return order


class ProportionalSampler:
    """Global batches whose composition mirrors the labels (a BatchSampler of the Trainer); the last
    len(labels) % global_batch_size items of the order are left out."""

    def __init__(self, labels: Sequence[Any], seed: int = 0) -> None:
        self.order = proportional_order(labels, seed)

    def batches(self, global_batch_size: int) -> np.ndarray:
        if len(self.order) < global_batch_size:
            raise ConfigError(f"{len(self.order)} pairs are fewer than one batch of {global_batch_size}")
        return self.order[:len(self.order) // global_batch_size * global_batch_size].reshape(-1, global_batch_size)


class ProportionalBatches(Sequence):
    """len(examples) // batch_size batches of examples (sentence1, sentence2, label); the last
    len(examples) % batch_size pairs of the order are left out."""

    def __init__(self, examples: Sequence[tuple], batch_size: int, seed: int = 0) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        self.examples = examples
        self.batch_size = batch_size
        self.batches = ProportionalSampler([example[2] for example in examples], seed).batches(batch_size)

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, index: int) -> list[tuple]:
        return [self.examples[int(i)] for i in self.batches[index]]
