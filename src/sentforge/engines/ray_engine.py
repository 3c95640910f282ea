"""Encoding across a Ray cluster with Ray Data: `map_batches` over chunks with one model actor per worker.

Each actor loads the model once and encodes whole chunks with `Encoder.encode`, the same unit of work as
the local engine, so the vectors are identical. `ray.init()` joins the cluster named by RAY_ADDRESS (or
started with `ray start`) and otherwise starts a local one.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from typing import Any

import numpy as np

from sentforge.errors import ConfigError

logger = logging.getLogger(__name__)

# Chunks handed to Ray per dataset: enough to keep every actor busy, few enough to bound driver memory.
CHUNKS_PER_WORKER = 4


class ChunkEncoder:
    """A Ray actor: loads the model once, then encodes one chunk per call."""

    def __init__(self, spec: str, options: dict[str, Any]) -> None:
        from sentforge.loading import load

        self.encoder = load(spec)
        self.options = options

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = [np.ascontiguousarray(self.encoder.encode(list(texts), show_progress=False, **self.options),
                                        dtype=np.float32) for texts in batch["texts"]]
        return {"chunk": batch["chunk"], "rows": np.array([len(v) for v in vectors]),
                "data": np.array([v.tobytes() for v in vectors], dtype=object)}


def ray_engine(spec: str | None, encoder: Any, chunks: Iterator[tuple[int, list[str]]], options: dict[str, Any],
               workers: int = 1) -> Iterator[tuple[int, np.ndarray]]:
    try:
        import ray
    except ImportError:
        raise ConfigError("--engine ray needs Ray: pip install 'sentforge[ray]'") from None
    if spec is None:
        raise ConfigError("the ray engine needs a model spec (a directory or short name): each worker loads it")
    if not ray.is_initialized():
        ray.init(log_to_driver=False)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    dim = encoder.dim
    while window := list(itertools.islice(chunks, workers * CHUNKS_PER_WORKER)):
        dataset = ray.data.from_items([{"chunk": index, "texts": texts} for index, texts in window])
        encoded = dataset.map_batches(ChunkEncoder, fn_constructor_kwargs={"spec": spec, "options": options},
                                      batch_size=1, batch_format="numpy", concurrency=workers, num_cpus=1)
        for row in encoded.iter_rows():
            vectors = np.frombuffer(row["data"], dtype=np.float32).reshape(int(row["rows"]), dim)
            yield int(row["chunk"]), vectors
