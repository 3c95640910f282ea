"""The module contract: a step of the encoder pipeline that reads and extends a features dict."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from sentforge.support.errors import ModelFormatError

WEIGHTS_FILE = "model.safetensors"
Features = dict[str, torch.Tensor]


def read_json(path: Path, expected: type = dict) -> Any:
    """The JSON value of a model file, which must be of type `expected` (an object unless told)."""
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except FileNotFoundError:
        raise ModelFormatError(f"missing file {path}") from None
    except IsADirectoryError:
        raise ModelFormatError(f"{path} is a directory, expected a JSON file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ModelFormatError(f"{path}: invalid JSON ({err})") from None
    if not isinstance(value, expected):
        raise ModelFormatError(f"{path}: expected a JSON {'object' if expected is dict else expected.__name__}, "
                               f"got {type(value).__name__}")
    return value


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(obj, handle, indent=2)
        handle.write("\n")


class Module(nn.Module):
    """A pipeline step. Subclasses set `type_name` (the `type` written to modules.json) and
    implement `config()`; parameters are saved as safetensors beside a JSON config."""

    type_name: ClassVar[str]
    config_file: ClassVar[str] = "config.json"
    # Only the input module of a sentence-transformers directory lives at its root.
    saves_at_root: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # `load(path)` takes a str or a Path in every module (sentence-transformers passes a str when it
        # loads a custom module), so each subclass's own `load` is wrapped to receive a Path.
        super().__init_subclass__(**kwargs)
        if "load" in cls.__dict__:
            cls.load = classmethod(_path_argument(cls.__dict__["load"].__func__))

    def config(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def output_dim(self) -> int | None:
        """Size of the sentence vector after this module, or None if the module does not change it."""
        return None

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        write_json(path / self.config_file, self.config())
        state = {k: v.detach().contiguous().cpu() for k, v in self.state_dict().items()}
        if state:
            save_file(state, str(path / WEIGHTS_FILE))

    @property
    def input_dim(self) -> int | None:
        """Size of the sentence vector this module reads, or None if it reads tokens or any size."""
        return None

    @classmethod
    def load(cls, path: Path) -> Module:
        config = read_json(path / cls.config_file)
        try:
            module = cls(**config)
        except TypeError as err:
            raise ModelFormatError(f"{path / cls.config_file}: {err}") from None
        if any(True for _ in module.state_dict()):
            load_weights(module, path / WEIGHTS_FILE)
        return module


def _path_argument(load: Callable[..., Module]) -> Callable[..., Module]:
    @functools.wraps(load)
    def load_from_path(cls: type[Module], path: str | Path, *args: Any, **kwargs: Any) -> Module:
        return load(cls, Path(path), *args, **kwargs)

    return load_from_path


Module.load = classmethod(_path_argument(Module.__dict__["load"].__func__))


def load_weights(module: nn.Module, weights: Path) -> None:
    """Load a safetensors file into `module`: every tensor present, with its shape, or an error naming the file."""
    if not weights.is_file():
        raise ModelFormatError(f"missing weights file {weights} (sentforge reads safetensors only)")
    try:
        module.load_state_dict(load_file(str(weights)))
    except SafetensorError as err:
        raise ModelFormatError(f"{weights}: not a readable safetensors file ({err})") from None
    except RuntimeError as err:  # missing, unexpected or mis-shaped tensors
        raise ModelFormatError(f"{weights}: does not fit the module ({str(err).splitlines()[0]} ...)") from None


class InputModule(Module):
    """The first step: turns texts into token ids and padded tensors. `single_threaded`: the pipeline it starts
    encodes on one torch thread (support/threads.py)."""

    max_seq_length: int | None
    single_threaded: ClassVar[bool] = False

    def token_ids(self, texts: list[str], max_length: int | None = None) -> tuple[list[list[int]], int]:
        """Token ids of each text (unpadded, truncated to the limit) and how many texts were truncated."""
        raise NotImplementedError

    def pad(self, ids: list[list[int]]) -> Features:
        """A padded batch (`input_ids`, `attention_mask`) from lists of token ids."""
        raise NotImplementedError

    def tokenize(self, texts: list[str], max_length: int | None = None) -> Features:
        return self.pad(self.token_ids(texts, max_length)[0])


def pad_ids(ids: list[list[int]], pad_id: int) -> Features:
    """Right-pad id lists into `input_ids` and `attention_mask` (at least one column)."""
    width = max(1, max((len(x) for x in ids), default=0))
    input_ids = np.full((len(ids), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, seq in enumerate(ids):
        input_ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return {"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(mask)}
