"""Encoding across a Ray cluster: a Ray Data pipeline with one model actor per worker.

The dataset holds one small descriptor per chunk (its index, the byte offset and line where its first
record begins, and the SHA-256 of its texts), found by the driver in one pass over the input that keeps
no texts. Ray Data's `map_batches` hands the descriptors one at a time to a fixed pool of `workers`
actors; each actor loads the model once, reads its chunk from the input file with sentforge's own record
reader, checks it against the checksum and encodes it with `Encoder.encode`, the same unit of work as
the local engine, so the vectors are identical. The driver receives the vectors in chunk order
(`preserve_order`) as a stream, so it holds a bounded number of chunks however long the input is.
Workers read the input themselves: on a cluster it must be at the same absolute path on every node.
`ray.init()` joins the cluster named by RAY_ADDRESS (or started with `ray start`) and otherwise starts
a local one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.data.texts import Position
from sentforge.scale.engines.chunks import ChunkSource, ChunkStart
from sentforge.support.errors import ConfigError, InputFileError

logger = logging.getLogger(__name__)


class ChunkEncoder:
    """Ray Data's actor class: loads the model once, then reads and encodes one chunk per batch."""

    def __init__(self, spec: str, source: ChunkSource, options: dict[str, Any]) -> None:
        from sentforge.loading import load

        self.encoder = load(spec)
        self.source = source
        self.options = options

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        (index,), (offset,), (line,), (sha256,) = batch["index"], batch["offset"], batch["line"], batch["sha256"]
        try:
            texts = self.source.read_chunk(ChunkStart(int(index), Position(int(offset), int(line)), str(sha256)))
        except InputFileError as err:  # returned, not raised: the driver reports it as one line, as locally
            return {"index": batch["index"], "vectors": np.zeros((1, 0, 0), np.float32), "error": np.array([str(err)])}
        vectors = self.encoder.encode(texts, show_progress=False, **self.options)
        return {"index": batch["index"], "vectors": np.ascontiguousarray(vectors, dtype=np.float32)[np.newaxis],
                "error": np.array([""])}


def ray_engine(spec: str | None, encoder: Any, source: ChunkSource, options: dict[str, Any],
               workers: int = 1) -> Iterator[tuple[int, np.ndarray]]:
    try:
        import ray
        import ray.data
    except ImportError:
        raise ConfigError("--engine ray needs Ray: pip install 'sentforge[ray]'") from None
    if spec is None:
        raise ConfigError("the ray engine needs a model spec (a directory or short name): each worker loads it")
    # Workers may run in another directory: they get absolute paths.
    source = dataclasses.replace(source, path=source.path.resolve())
    spec = str(Path(spec).resolve()) if Path(spec).exists() else spec
    chunks = [{"index": start.index, "offset": start.position.offset, "line": start.position.line,
               "sha256": start.sha256} for start in source.iter_starts()]
    if not chunks:
        return
    if not ray.is_initialized():
        ray.init(log_to_driver=False)
    dataset = ray.data.from_items(chunks, override_num_blocks=len(chunks))  # one block per chunk
    context = dataset.context  # this dataset's own copy: the process-wide defaults stay as they are
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False  # the caller shows its own
    encoded = dataset.map_batches(ChunkEncoder, fn_constructor_args=(spec, source, options), batch_size=1,
                                  batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=workers),
                                  num_cpus=1)
    logger.info("encoding %d chunks on %d Ray Data actors, each loading %s once", len(chunks), workers, spec)
    # Closing the rows stops the pipeline and its actors, so an interrupted job leaves no model loaded.
    with contextlib.closing(iter(encoded.iter_rows())) as rows:
        for row in rows:
            if row["error"]:
                raise InputFileError(f"{row['error']} (read by a Ray worker: with --engine ray every node reads the "
                                     "input itself, so it must be the same file at the same path on all of them)")
            yield int(row["index"]), row["vectors"]
