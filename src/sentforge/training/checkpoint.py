"""Training checkpoints that appear whole or not at all, with no pickle anywhere.

A checkpoint is a directory `step-00000100/` holding
  model.safetensors           the objective's state dict (encoder + the objective's own parts);
                              tied tensors are stored once and listed as aliases in state.json
  optimizer.safetensors       the optimizer's tensors, flattened as state/<param index>/<name>
  state.json                  optimizer param groups and non-tensor state, scheduler, grad scaler,
                              trainer state (step, data order, ...), python and numpy RNG states
  rng-rank<r>.safetensors     torch RNG states of process r (CPU, and CUDA where present)
  rng-rank<r>.json            python and numpy RNG states of process r
  manifest.json               every file above with its size and SHA-256, written last

It is written into `.step-00000100.tmp/` and renamed into place only once every file (manifest
last) is on disk, so a crash at any moment leaves either the complete checkpoint or none;
`latest_checkpoint` also checks each candidate against its manifest and skips one that fails.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from sentforge.support import distributed
from sentforge.support.errors import ModelFormatError

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MODEL_FILE = "model.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
STATE_FILE = "state.json"
MANIFEST_FILE = "manifest.json"
_NAME = re.compile(r"^step-(\d{8})$")


def checkpoint_name(step: int) -> str:
    return f"step-{step:08d}"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _write_json(path: Path, obj: Any) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(obj, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- state dicts <-> safetensors + JSON ---------------------------------------------------------


def _storage_key(tensor: torch.Tensor) -> tuple:
    return (tensor.device.type, tensor.untyped_storage().data_ptr(), tensor.storage_offset(),
            tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)


def split_shared(state: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Tensors to store (each memory once, contiguous, on CPU) and aliases {key: stored key}."""
    stored: dict[str, torch.Tensor] = {}
    aliases: dict[str, str] = {}
    first: dict[tuple, str] = {}
    for key, tensor in state.items():
        shared = first.get(_storage_key(tensor))
        if shared is not None:
            aliases[key] = shared
            continue
        first[_storage_key(tensor)] = key
        stored[key] = tensor.detach().to("cpu").contiguous()
    return stored, aliases


def _flatten_optimizer(state: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for index, values in state["state"].items():
        for name, value in values.items():
            if isinstance(value, torch.Tensor):
                tensors[f"state/{index}/{name}"] = value.detach().to("cpu").contiguous()
            else:
                scalars.setdefault(str(index), {})[name] = value
    return tensors, {"scalars": scalars, "param_groups": state["param_groups"]}


def _unflatten_optimizer(tensors: dict[str, torch.Tensor], meta: dict[str, Any],
                         template: list[dict[str, Any]]) -> dict[str, Any]:
    state: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        _, index, name = key.split("/", 2)
        state.setdefault(int(index), {})[name] = value
    for index, values in meta["scalars"].items():
        state.setdefault(int(index), {}).update(values)
    groups = []
    for saved, current in zip(meta["param_groups"], template):
        # JSON turns tuples (e.g. Adam's betas) into lists; give them back the optimizer's own types.
        groups.append({k: tuple(v) if isinstance(current.get(k), tuple) and isinstance(v, list) else v
                       for k, v in saved.items()})
    return {"state": state, "param_groups": groups}


def _scheduler_state(scheduler: Any) -> dict[str, Any] | None:
    if scheduler is None:
        return None
    # The schedule itself is rebuilt from the config; only its position is state.
    return {k: v for k, v in scheduler.state_dict().items() if k != "lr_lambdas"}


def _rng_state() -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    tensors = {"torch_cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        for index, state in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"torch_cuda_{index}"] = state
    version, mt_state, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return tensors, {"python": [version, list(mt_state), gauss],
                     "numpy": [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)]}


def _restore_rng(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    torch.set_rng_state(tensors["torch_cpu"])
    cuda = sorted(k for k in tensors if k.startswith("torch_cuda_"))
    if cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([tensors[k] for k in cuda])
    version, mt_state, gauss = meta["python"]
    random.setstate((version, tuple(mt_state), gauss))
    kind, keys, pos, has_gauss, cached = meta["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))


# --- writing --------------------------------------------------------------------------------------


def save_checkpoint(root: str | Path, step: int, module: nn.Module, optimizer: torch.optim.Optimizer | None = None,
                    scheduler: Any = None, trainer_state: dict[str, Any] | None = None,
                    scaler: Any = None, keep_last: int | None = None) -> Path:
    """Write checkpoint `step` under `root` atomically and keep only the newest `keep_last`.

    Every process calls this (each stores its own RNG state); the main process writes the rest.
    """
    root = Path(root)
    final = root / checkpoint_name(step)
    tmp = root / f".{checkpoint_name(step)}.tmp"
    main = distributed.is_main_process()
    if main:
        root.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)  # left over by a crash
        tmp.mkdir()
    distributed.barrier()
    rank = distributed.rank()
    rng_tensors, rng_meta = _rng_state()
    save_file(rng_tensors, str(tmp / f"rng-rank{rank}.safetensors"))
    _fsync_file(tmp / f"rng-rank{rank}.safetensors")
    _write_json(tmp / f"rng-rank{rank}.json", rng_meta)
    distributed.barrier()
    if main:
        model_tensors, aliases = split_shared(module.state_dict())
        save_file(model_tensors, str(tmp / MODEL_FILE))
        _fsync_file(tmp / MODEL_FILE)
        state: dict[str, Any] = {"format": FORMAT_VERSION, "step": step, "aliases": aliases,
                                 "world_size": distributed.world_size(), "trainer": trainer_state or {},
                                 "scheduler": _scheduler_state(scheduler),
                                 "scaler": scaler.state_dict() if scaler is not None else None}
        if optimizer is not None:
            optimizer_tensors, state["optimizer"] = _flatten_optimizer(optimizer.state_dict())
            save_file(optimizer_tensors, str(tmp / OPTIMIZER_FILE))
            _fsync_file(tmp / OPTIMIZER_FILE)
        _write_json(tmp / STATE_FILE, state)
        files = sorted(p.name for p in tmp.iterdir())
        _write_json(tmp / MANIFEST_FILE, {
            "format": FORMAT_VERSION, "step": step,
            "files": {name: {"bytes": (tmp / name).stat().st_size, "sha256": _sha256(tmp / name)} for name in files}})
        _fsync_dir(tmp)
        if final.exists():
            _discard(final)
        os.replace(tmp, final)
        _fsync_dir(root)
        if keep_last:
            for old in list_checkpoints(root)[:-keep_last]:
                _discard(old)
    distributed.barrier()
    return final


def _discard(path: Path) -> None:
    """Remove a checkpoint: first rename it away (atomic), so it never looks whole while half deleted."""
    trash = path.with_name(f".{path.name}.trash")
    shutil.rmtree(trash, ignore_errors=True)
    os.replace(path, trash)
    shutil.rmtree(trash, ignore_errors=True)


# --- finding and reading --------------------------------------------------------------------------


def list_checkpoints(root: str | Path) -> list[Path]:
    """Checkpoint directories under `root` by step, oldest first (names only; see `verify_checkpoint`)."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if p.is_dir() and (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found)]


def verify_checkpoint(path: str | Path, check_hashes: bool = True) -> None:
    """Raise ModelFormatError unless every file of the manifest is present, complete and unchanged."""
    path = Path(path)
    manifest_path = path / MANIFEST_FILE
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        files = manifest["files"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ModelFormatError(f"checkpoint {path}: no readable {MANIFEST_FILE} ({err})") from None
    for required in (MODEL_FILE, STATE_FILE):
        if required not in files:
            raise ModelFormatError(f"checkpoint {path}: {required} missing from the manifest")
    for name, meta in files.items():
        file = path / name
        if not file.is_file() or file.stat().st_size != meta["bytes"]:
            raise ModelFormatError(f"checkpoint {path}: {name} is missing or has the wrong size")
        if check_hashes and _sha256(file) != meta["sha256"]:
            raise ModelFormatError(f"checkpoint {path}: {name} does not match its SHA-256")


def latest_checkpoint(root: str | Path) -> Path | None:
    """The newest checkpoint under `root` that passes verification (a bad one is skipped with a warning)."""
    for path in reversed(list_checkpoints(root)):
        try:
            verify_checkpoint(path)
        except ModelFormatError as err:
            logger.warning("skipping %s", err)
            continue
        return path
    return None


def load_checkpoint(path: str | Path, module: nn.Module, optimizer: torch.optim.Optimizer | None = None,
                    scheduler: Any = None, scaler: Any = None, restore_rng: bool = True) -> dict[str, Any]:
    """Load a verified checkpoint into the given objects; returns the trainer state it stored."""
    path = Path(path)
    verify_checkpoint(path)
    state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    if state.get("format") != FORMAT_VERSION:
        raise ModelFormatError(f"checkpoint {path}: format {state.get('format')}, expected {FORMAT_VERSION}")
    tensors = load_file(str(path / MODEL_FILE))
    for key, target in state["aliases"].items():
        tensors[key] = tensors[target]
    module.load_state_dict(tensors, strict=True)
    if optimizer is not None:
        if "optimizer" not in state:
            raise ModelFormatError(f"checkpoint {path} holds no optimizer state")
        flat = load_file(str(path / OPTIMIZER_FILE))
        template = optimizer.state_dict()["param_groups"]
        optimizer.load_state_dict(_unflatten_optimizer(flat, state["optimizer"], template))
    if scheduler is not None and state.get("scheduler") is not None:
        scheduler.load_state_dict({**state["scheduler"], "lr_lambdas": [None] * len(scheduler.lr_lambdas)})
    if scaler is not None and state.get("scaler") is not None:
        scaler.load_state_dict(state["scaler"])
    if restore_rng:
        rank = distributed.rank()
        rng_file = path / f"rng-rank{rank}.safetensors"
        if not rng_file.exists():
            raise ModelFormatError(f"checkpoint {path} holds no RNG state for process {rank} "
                                   f"(it was written by {state.get('world_size')} processes)")
        _restore_rng(load_file(str(rng_file)),
                     json.loads((path / f"rng-rank{rank}.json").read_text(encoding="utf-8")))
    return state["trainer"]
