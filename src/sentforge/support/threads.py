"""torch's intra-op thread count, set for a block and restored after it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """torch on one thread within. For pipelines of a few small memory-bound ops (a static model's gather,
    mean and normalisation): split across threads, each op waits for the slowest of them, and a core busy with
    other work stalls it (200 tweets through a static model: 16 to 32 ms on two busy cores, 4 ms on one thread)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
