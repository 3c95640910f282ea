"""Encoding across a Ray cluster: one model actor per worker, alive for the whole job.

Each actor loads the model once and encodes whole chunks with `Encoder.encode`, the same unit of work as
the local engine, so the vectors are identical. Chunks go to idle actors through Ray's `ActorPool` and
come back in submission order, at most `CHUNKS_IN_FLIGHT_PER_WORKER x workers` at a time, so the driver
holds a bounded number of chunks however long the input is, and the writer receives them in order.
`ray.init()` joins the cluster named by RAY_ADDRESS (or started with `ray start`) and otherwise starts a
local one.

Why not Ray Data's `map_batches`: a Ray Data pipeline needs its inputs listed up front (or read by the
workers from storage they all share), so bounding memory meant one pipeline per window of chunks, and
every pipeline started new actors that loaded the model again.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator
from typing import Any

import numpy as np

from sentforge.errors import ConfigError

logger = logging.getLogger(__name__)

# One chunk encoding and one waiting per actor keeps every actor busy without holding more in memory.
CHUNKS_IN_FLIGHT_PER_WORKER = 2


class ChunkEncoder:
    """A Ray actor: loads the model once, then encodes one chunk per call."""

    def __init__(self, spec: str, options: dict[str, Any]) -> None:
        from sentforge.loading import load

        self.encoder = load(spec)
        self.options = options

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.ascontiguousarray(self.encoder.encode(texts, show_progress=False, **self.options),
                                    dtype=np.float32)


def ray_engine(spec: str | None, encoder: Any, chunks: Iterator[tuple[int, list[str]]], options: dict[str, Any],
               workers: int = 1) -> Iterator[tuple[int, np.ndarray]]:
    try:
        import ray
        from ray.util import ActorPool
    except ImportError:
        raise ConfigError("--engine ray needs Ray: pip install 'sentforge[ray]'") from None
    if spec is None:
        raise ConfigError("the ray engine needs a model spec (a directory or short name): each worker loads it")
    if not ray.is_initialized():
        ray.init(log_to_driver=False)
    actor = ray.remote(num_cpus=1)(ChunkEncoder)
    actors = [actor.remote(spec, options) for _ in range(workers)]
    pool = ActorPool(actors)
    logger.info("encoding on %d Ray actors, each loading %s once", workers, spec)
    in_flight: deque[int] = deque()  # chunk indices, in the order ActorPool returns their vectors
    try:
        for index, texts in chunks:
            pool.submit(lambda worker, value: worker.encode.remote(value), texts)
            in_flight.append(index)
            if len(in_flight) == CHUNKS_IN_FLIGHT_PER_WORKER * workers:
                yield in_flight.popleft(), pool.get_next()
        while in_flight:
            yield in_flight.popleft(), pool.get_next()
    finally:
        for worker in actors:  # an interrupted job leaves no model loaded on the cluster
            ray.kill(worker)
