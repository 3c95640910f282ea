"""Engines that turn a file's chunks of texts into vectors: in this process, or across a Ray cluster.

Each engine maps a `ChunkSource` to (chunk index, float32 vectors) in chunk order and encodes a chunk
exactly as `Encoder.encode` does, so every engine writes the same vectors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from sentforge.scale.engines.chunks import ChunkSource
from sentforge.support.errors import ConfigError


def local_engine(spec: str | None, encoder: Any, source: ChunkSource, options: dict[str, Any],
                 workers: int = 1) -> Iterator[tuple[int, np.ndarray]]:
    for index, texts in source.iter_chunks():
        yield index, encoder.encode(texts, show_progress=False, **options)


def _ray_engine(*args: Any, **kwargs: Any) -> Iterator[tuple[int, np.ndarray]]:
    from sentforge.scale.engines.ray_engine import ray_engine

    return ray_engine(*args, **kwargs)


ENGINES = {"local": local_engine, "ray": _ray_engine}


def check_engine(name: str, workers: int) -> None:
    """Refuse an unknown engine, or several workers on the local one (checked before any model loads)."""
    if name not in ENGINES:
        raise ConfigError(f"--engine {name!r}: choose one of {', '.join(ENGINES)}")
    if name == "local" and workers != 1:
        raise ConfigError("the local engine runs one worker; use --engine ray for several")


def run_engine(name: str, spec: str | None, encoder: Any, source: ChunkSource, options: dict[str, Any],
               workers: int = 1) -> Iterator[tuple[int, np.ndarray]]:
    check_engine(name, workers)
    return ENGINES[name](spec, encoder, source, options, workers=workers)
