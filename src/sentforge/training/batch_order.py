"""A seeded, resumable batch order over an in-memory dataset, shared out across processes.

The order of epoch e is a pure function of (seed, e), so the data-order state of a run is two
integers: the epoch and the number of global batches already taken from it. Every process computes
the same global batch and takes its own contiguous slice, which makes N processes with per-process
batch b see exactly the examples of one process with batch N*b.

A `BatchSampler` replaces the random permutation with batches of its own (PAUSE's class-proportional
batches, data/samplers.py): it gives the global batches of an epoch once, and their order is the
seeded permutation of epoch e, so resume and the per-process slices work unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from sentforge.support.errors import ConfigError

# Length grouping sorts pools of this many global batches by length, then shuffles the batches.
_LENGTH_POOL_BATCHES = 50


class BatchSampler(Protocol):
    def batches(self, global_batch_size: int) -> np.ndarray:
        """(n_batches, global_batch_size) example indices: the batches of every epoch, in any order."""
        ...


@dataclass
class DataState:
    epoch: int = 0
    batches_done: int = 0  # global batches taken from `epoch`

    def to_json(self) -> dict[str, int]:
        return {"epoch": self.epoch, "batches_done": self.batches_done}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DataState:
        return cls(epoch=int(data["epoch"]), batches_done=int(data["batches_done"]))


class BatchOrder:
    """Global batches of `global_batch_size` example indices; the last incomplete batch of an epoch is
    dropped so that every batch (and every process's share) has the same size.

    lengths: optional per-example lengths; batches then hold examples of similar length (less padding)
    while the batch order stays random.
    sampler: fixed batches of its own instead of a permutation of the examples (see BatchSampler).
    """

    def __init__(self, n_examples: int, global_batch_size: int, seed: int, lengths: Sequence[int] | None = None,
                 shuffle: bool = True, sampler: BatchSampler | None = None) -> None:
        if global_batch_size < 1:
            raise ConfigError(f"batch size must be >= 1, got {global_batch_size}")
        if n_examples < global_batch_size:
            raise ConfigError(f"the training data has {n_examples} examples, fewer than one global batch "
                              f"({global_batch_size}); lower the batch size or add data")
        if lengths is not None and len(lengths) != n_examples:
            raise ConfigError(f"{len(lengths)} lengths for {n_examples} examples")
        self.n_examples = n_examples
        self.global_batch_size = global_batch_size
        self.seed = seed
        self.lengths = None if lengths is None else np.asarray(lengths)
        self.shuffle = shuffle
        self.fixed_batches = None if sampler is None else np.asarray(sampler.batches(global_batch_size))
        self.state = DataState()
        self._epoch_batches: np.ndarray | None = None
        self._cached_epoch = -1

    @property
    def batches_per_epoch(self) -> int:
        if self.fixed_batches is not None:
            return len(self.fixed_batches)
        return self.n_examples // self.global_batch_size

    def epoch_batches(self, epoch: int) -> np.ndarray:
        """(batches_per_epoch, global_batch_size) example indices of `epoch`."""
        if self._cached_epoch != epoch:
            rng = np.random.default_rng([self.seed, epoch])
            if self.fixed_batches is not None:
                self._epoch_batches, self._cached_epoch = self._shuffled(self.fixed_batches, rng), epoch
                return self._epoch_batches
            order = rng.permutation(self.n_examples) if self.shuffle else np.arange(self.n_examples)
            usable = self.batches_per_epoch * self.global_batch_size
            if self.lengths is None:
                batches = order[:usable].reshape(-1, self.global_batch_size)
            else:
                batches = self._length_grouped(order[:usable], rng)
            self._epoch_batches, self._cached_epoch = batches, epoch
        return self._epoch_batches

    def _length_grouped(self, order: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        pool = _LENGTH_POOL_BATCHES * self.global_batch_size
        chunks = [order[i:i + pool] for i in range(0, len(order), pool)]
        grouped = np.concatenate([c[np.argsort(-self.lengths[c], kind="stable")] for c in chunks])
        return self._shuffled(grouped.reshape(-1, self.global_batch_size), rng)

    def _shuffled(self, batches: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return batches[rng.permutation(len(batches))] if self.shuffle else batches

    def next_batch(self) -> np.ndarray:
        """The next global batch; moves to the next epoch when this one is used up."""
        if self.state.batches_done >= self.batches_per_epoch:
            self.state = DataState(self.state.epoch + 1, 0)
        batch = self.epoch_batches(self.state.epoch)[self.state.batches_done]
        self.state.batches_done += 1
        return batch


def process_slice(global_batch: np.ndarray, rank: int, world_size: int) -> np.ndarray:
    """This process's contiguous share of a global batch."""
    per_process = len(global_batch) // world_size
    return global_batch[rank * per_process:(rank + 1) * per_process]


def text_lengths(data: Sequence[Any]) -> list[int]:
    """Characters of each example (a text or a tuple of texts), which `group_by_length` batches by."""
    lengths = []
    for i, example in enumerate(data):
        parts = [example] if isinstance(example, str) else example
        if not all(isinstance(p, str) for p in parts):
            raise ConfigError(f"group_by_length needs texts or tuples of texts; example {i} is {type(example)}")
        lengths.append(sum(len(p) for p in parts))
    return lengths
