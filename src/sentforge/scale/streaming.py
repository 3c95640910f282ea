"""Streaming encode: a text file of any size to vectors on disk, chunk by chunk, resumable.

Records are read lazily and encoded `chunk_size` at a time, so memory is bounded by one chunk whatever
the input size. Two outputs:

- a `.npy` file: one array of known shape (n, dim), rows appended as chunks finish;
- a directory: numbered shards `shard-000000.npy`, ... and a `manifest.json` holding each shard's row
  count and SHA-256, the job settings and the model identity.

Both are written under a hidden `.NAME.partial` path beside the output and renamed into place when
complete, so an existing output is replaced only by a finished one. A run that is killed and started
again with the same settings continues from the last complete chunk; since the chunks are the same, the
result equals an uninterrupted run bit for bit.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from sentforge.data.texts import check_text_file, count_texts, iter_texts
from sentforge.support.errors import ConfigError, InputFileError, OutputExistsError
from sentforge.support.identity import ModelIdentity
from sentforge.support.io import save_json, save_npy
from sentforge.support.output_guard import guard_output, locked_output, write_marker
from sentforge.interface.quantization import quantization_ranges, quantize_embeddings

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"
PRECISIONS = ("float32", "float16", "int8", "uint8", "binary", "ubinary")
DEFAULT_CHUNK_SIZE = 10_000
ENCODE = "encode"  # the command family named in the output marker and the lock
_HASH_BLOCK = 1 << 20


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _partial_path(output: Path) -> Path:
    return output.with_name(f".{output.name}.partial")


def _jsonable(job: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(job))


class NpyWriter:
    """Rows appended to one .npy of known shape; a JSON sidecar records how many rows are durable."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.partial = _partial_path(output)
        self.state_file = output.with_name(f".{output.name}.progress.json")

    def start(self, job: dict[str, Any], shape: tuple[int, int], dtype: np.dtype, overwrite: bool) -> dict[str, Any]:
        """The saved state of an unfinished run of this same job, or a fresh one."""
        state = _own_state(self.output, self.state_file, self.partial)
        if state is not None and self.partial.exists() and _same_job(state, job, self.output, overwrite):
            with open(self.partial, "r+b") as handle:
                handle.truncate(state["header_bytes"] + state["rows_done"] * state["row_bytes"])
            return state
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                      "fortran_order": False, "shape": shape})
        state = {"job": job, "header_bytes": header.tell(), "row_bytes": int(shape[1] * dtype.itemsize),
                 "rows_done": 0, "chunks_done": 0, "ranges": None}
        save_json(self.state_file, state)  # first: a partial file without its state is never ours to replace
        with open(self.partial, "wb") as handle:
            handle.write(header.getvalue())
        return state

    def write(self, state: dict[str, Any], chunk: np.ndarray) -> None:
        # Data is durable before the state says so: a kill in between only repeats this chunk.
        with open(self.partial, "ab") as handle:
            handle.write(np.ascontiguousarray(chunk).tobytes())
            handle.flush()
            os.fsync(handle.fileno())
        state["rows_done"] += len(chunk)
        state["chunks_done"] += 1
        save_json(self.state_file, state)

    def finish(self, state: dict[str, Any], overwrite: bool) -> None:
        if overwrite:
            os.replace(self.partial, self.output)
        else:  # a file that appeared meanwhile is never replaced: linking fails where a name exists
            try:
                os.link(self.partial, self.output)
            except FileExistsError:
                raise OutputExistsError(f"output {self.output} appeared while encoding; the vectors stay in "
                                        f"{self.partial} (pass overwrite=True (--overwrite) to replace it)") from None
            self.partial.unlink()
        self.state_file.unlink(missing_ok=True)


class ShardWriter:
    """Numbered .npy shards and a manifest with their checksums, in a directory."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.partial = _partial_path(output)
        self.state_file = self.partial / MANIFEST

    def start(self, job: dict[str, Any], shape: tuple[int, int], dtype: np.dtype, overwrite: bool) -> dict[str, Any]:
        state = _own_state(self.output, self.state_file, self.partial)
        if state is not None and _same_job(state, job, self.output, overwrite):
            state["shards"] = _verified_prefix(self.partial, state["shards"])
            state["chunks_done"] = len(state["shards"])
            state["rows_done"] = sum(s["rows"] for s in state["shards"])
            return state
        shutil.rmtree(self.partial, ignore_errors=True)
        self.partial.mkdir(parents=True)
        state = {"format": "sentforge-shards", "version": 1, "complete": False, "job": job,
                 "rows": shape[0], "columns": shape[1], "dtype": np.dtype(dtype).name,
                 "rows_done": 0, "chunks_done": 0, "ranges": None, "shards": []}
        save_json(self.state_file, state)
        return state

    def write(self, state: dict[str, Any], chunk: np.ndarray) -> None:
        name = f"shard-{state['chunks_done']:06d}.npy"
        save_npy(self.partial / name, chunk)
        state["shards"].append({"file": name, "rows": len(chunk), "sha256": file_sha256(self.partial / name)})
        state["rows_done"] += len(chunk)
        state["chunks_done"] += 1
        save_json(self.state_file, state)

    def finish(self, state: dict[str, Any], overwrite: bool) -> None:
        state["complete"] = True
        save_json(self.state_file, state)
        write_marker(self.partial, ENCODE)
        if self.output.exists() and not overwrite:
            raise OutputExistsError(f"output {self.output} appeared while encoding; the shards stay in "
                                    f"{self.partial} (pass overwrite=True (--overwrite) to replace it)")
        if self.output.exists():  # --overwrite: the old output goes only now that the new one is whole
            trash = Path(tempfile.mkdtemp(prefix=f".{self.output.name}.old-", dir=self.output.parent))
            os.replace(self.output, trash / self.output.name)
            os.replace(self.partial, self.output)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(self.partial, self.output)


def _read_state(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _own_state(output: Path, state_file: Path, partial: Path) -> dict[str, Any] | None:
    """The saved state of an earlier encode into `output`, or None; OutputExistsError when a working file
    beside the output (or its state) is someone else's: it is never replaced."""
    state = _read_state(state_file)
    ours = isinstance(state, dict) and isinstance(state.get("job"), dict)
    foreign = None
    if state_file.exists() and not ours:
        foreign = state_file
    elif not ours and (partial.is_file() or (partial.is_dir() and any(partial.iterdir()))):
        foreign = partial  # an empty folder is what a run killed before its first state leaves
    if foreign is not None:
        raise OutputExistsError(f"{foreign} is in the way of the working files of {output} and was not written by "
                                "sentforge encode; move it away or choose another output")
    return state if ours else None


def _same_job(state: dict[str, Any], job: dict[str, Any], output: Path, overwrite: bool) -> bool:
    if state.get("job") == job:
        return True
    if overwrite:
        return False
    differ = sorted(k for k in set(job) | set(state.get("job", {})) if state.get("job", {}).get(k) != job.get(k))
    raise ConfigError(f"{output}: an unfinished encode with other settings ({', '.join(differ)}) is in progress "
                      "there; rerun it with the same settings to resume, or pass overwrite=True (--overwrite) "
                      "to start again")


def _verified_prefix(folder: Path, shards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The shards before the first missing or corrupt one (those after it are encoded again)."""
    for i, shard in enumerate(shards):
        path = folder / shard["file"]
        if not path.exists() or file_sha256(path) != shard["sha256"]:
            logger.warning("%s is missing or corrupt: encoding again from chunk %d", path, i)
            return shards[:i]
    return shards


def _writer(output: Path) -> NpyWriter | ShardWriter:
    return NpyWriter(output) if output.suffix == ".npy" else ShardWriter(output)


def output_shape(rows: int, dim: int, precision: str) -> tuple[tuple[int, int], np.dtype]:
    if precision in ("binary", "ubinary"):
        return (rows, (dim + 7) // 8), np.dtype(np.int8 if precision == "binary" else np.uint8)
    dtype = {"float32": np.float32, "float16": np.float16, "int8": np.int8, "uint8": np.uint8}[precision]
    return (rows, dim), np.dtype(dtype)


def _convert(vectors: np.ndarray, precision: str, state: dict[str, Any]) -> np.ndarray:
    if precision in ("float32", "float16"):
        return vectors.astype(precision)
    if precision in ("int8", "uint8") and state["ranges"] is None:
        # Calibrated once on the first chunk and kept, so every chunk shares the same buckets.
        state["ranges"] = quantization_ranges(vectors).tolist()
    ranges = None if state["ranges"] is None else np.asarray(state["ranges"], dtype=np.float32)
    return quantize_embeddings(vectors, precision, ranges=ranges)


@locked_output(ENCODE)
def encode_file(model: Any, input: str | Path, output: str | Path, *, chunk_size: int = DEFAULT_CHUNK_SIZE,
                batch_size: int = 32, normalize: bool = False, max_seq_length: int | None = None,
                precision: str = "float32", field: str | None = None, column: str | None = None,
                overwrite: bool = False, engine: str = "local", workers: int = 1, device: str | None = None,
                show_progress: bool | None = None, dtype: str | None = None, seed: int | None = None) -> Path:
    """Encode a text file into `output` (.npy file or shard directory), resuming an unfinished run.

    `model` is a model spec or an encoder (the "ray" engine needs a spec: each worker loads it).
    `dtype` is the compute precision of the forward pass (`encode(dtype=...)`); `precision` the
    format of the rows written. `seed` seeds the random generators (`set_seed`) once the options and the
    output are checked; None leaves them as they are.
    Returns the output path.
    """
    from sentforge.interface.dtypes import dtype_name
    from sentforge.scale.engines import check_engine
    from sentforge.support.seed import check_seed

    # Every option and the output are checked before the model stack is imported or any model loads.
    input, output = check_text_file(input), Path(output)
    if precision not in PRECISIONS:
        raise ConfigError(f"precision {precision!r} (--precision): choose one of {', '.join(PRECISIONS)}")
    compute_dtype = dtype_name(dtype, "dtype (--dtype)")
    if chunk_size < 1 or batch_size < 1 or workers < 1:
        raise ConfigError("chunk_size, batch_size and workers must each be >= 1")
    check_engine(engine, workers)
    if seed is not None:
        check_seed(seed, "seed (--seed)")
    guard_output(output, [("input", input), ("model", model if isinstance(model, (str, os.PathLike)) else None)],
                 ENCODE, overwrite, file_format="npy" if output.suffix == ".npy" else None)
    from sentforge.loading import load
    from sentforge.support.seed import set_seed

    if seed is not None:
        set_seed(seed)
    rows = count_texts(input, iter_texts(input, field, column))
    spec = model if isinstance(model, str) else None
    encoder = load(model, device=device) if spec else model
    identity = ModelIdentity.of(encoder, spec)
    encode_options = {"batch_size": batch_size, "normalize": normalize, "max_seq_length": max_seq_length}
    if compute_dtype is not None:  # part of the job (a resumed run must use the same), absent when not given
        encode_options["dtype"] = compute_dtype
    job = _jsonable({"input_sha256": file_sha256(input), "rows": rows, "model": identity.to_dict(),
                     "chunk_size": chunk_size, "precision": precision, "field": field, "column": column,
                     **encode_options})
    options = {k: v for k, v in encode_options.items() if v is not None}
    encoder.encode(["a text"], **options)  # a bad option fails here, before any output exists
    shape, dtype = output_shape(rows, identity.dim, precision)
    output.parent.mkdir(parents=True, exist_ok=True)
    _encode_into(_writer(output), job, shape, dtype, input, chunk_size, field, column, rows, precision,
                 engine, spec, encoder, options, workers, overwrite, show_progress)
    logger.info("wrote %s: %d x %d %s", output, *shape, dtype.name)
    return output


def _encode_into(writer: Any, job: dict[str, Any], shape: tuple[int, int], dtype: np.dtype, input: Path,
                 chunk_size: int, field: str | None, column: str | None, rows: int, precision: str, engine: str,
                 spec: str | None, encoder: Any, options: dict[str, Any], workers: int, overwrite: bool,
                 show_progress: bool | None) -> None:
    from sentforge.scale.engines import ChunkSource, run_engine

    state = writer.start(job, shape, dtype, overwrite)
    if state["chunks_done"]:
        logger.info("%s: resuming after %d complete chunks (%d of %d rows)", writer.output, state["chunks_done"],
                    state["rows_done"], rows)
    source = ChunkSource(input, chunk_size, field, column, skip_chunks=state["chunks_done"])
    n_chunks = -(-rows // chunk_size)
    # Closed on any exit, so an interrupted run releases the engine's workers at once.
    with contextlib.closing(run_engine(engine, spec, encoder, source, options, workers=workers)) as results:
        for _, vectors in tqdm(results, desc="encode", unit="chunk", total=n_chunks, initial=state["chunks_done"],
                               disable=None if show_progress is None else not show_progress):
            writer.write(state, _convert(vectors, precision, state))
    writer.finish(state, overwrite)


def read_manifest(folder: str | Path) -> dict[str, Any]:
    folder = Path(folder)
    manifest = _read_state(folder / MANIFEST)
    if manifest is None or manifest.get("format") != "sentforge-shards":
        raise InputFileError(f"{folder}: not a shard directory written by `sentforge encode` (no valid {MANIFEST})")
    if not manifest.get("complete"):
        raise InputFileError(f"{folder}: the encode that writes it has not finished")
    return manifest


def iter_shards(folder: str | Path, verify: bool = True) -> Iterator[np.ndarray]:
    """The shards of a directory in order; with `verify`, a shard whose checksum differs is an error."""
    folder = Path(folder)
    for shard in read_manifest(folder)["shards"]:
        path = folder / shard["file"]
        if not path.exists():
            raise InputFileError(f"{path}: shard listed in {MANIFEST} is missing")
        if verify and file_sha256(path) != shard["sha256"]:
            raise InputFileError(f"{path}: checksum differs from {MANIFEST}; the shard is corrupt: encode again")
        array = np.load(path, allow_pickle=False)
        if len(array) != shard["rows"]:
            raise InputFileError(f"{path}: {len(array)} rows, {MANIFEST} says {shard['rows']}")
        yield array


def load_vectors(path: str | Path, verify: bool = True) -> np.ndarray:
    """All vectors of a .npy file (memory-mapped) or of a verified shard directory."""
    path = Path(path)
    if path.is_dir():
        shards = list(iter_shards(path, verify))
        columns = read_manifest(path)["columns"]
        return np.concatenate(shards) if shards else np.zeros((0, columns), dtype=np.float32)
    if not path.exists():
        raise InputFileError(f"vectors not found: {path}")
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as err:
        raise InputFileError(f"{path}: not a readable .npy array ({err})") from None
