"""The keyword options of `encode`, shared by every sentforge encoder and spelled either way:
sentforge's names or the sentence-transformers names (`show_progress_bar`, `normalize_embeddings`, ...),
so that code written for a `SentenceTransformer` runs unchanged on a sentforge encoder."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentforge.interface.dtypes import parse_dtype
from sentforge.support.errors import ConfigError, ModelFormatError
from sentforge.interface.quantization import check_precision, quantize_embeddings

if TYPE_CHECKING:  # torch is imported where vectors are made: the options can be read and checked without it
    import torch

# sentence-transformers spelling -> sentforge spelling.
ALIASES = {"show_progress_bar": "show_progress", "normalize_embeddings": "normalize"}


@dataclass(frozen=True)
class EncodeOptions:
    """What `encode` returns and how it gets there (defaults = a float32 numpy array, as sentence-transformers)."""

    batch_size: int = 32
    normalize: bool = False
    show_progress: bool | None = None
    max_seq_length: int | None = None
    device: str | torch.device | None = None
    prompt: str | None = None
    prompt_name: str | None = None
    truncate_dim: int | None = None
    precision: str = "float32"
    convert_to_numpy: bool = True
    convert_to_tensor: bool = False
    dtype: str | torch.dtype | None = None  # compute precision of the forward pass (sentforge.interface.dtypes)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", parse_dtype(self.dtype))
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ConfigError(f"batch_size must be an integer >= 1, got {self.batch_size!r}")
        if self.truncate_dim is not None and (not isinstance(self.truncate_dim, int) or self.truncate_dim < 1):
            raise ConfigError(f"truncate_dim must be an integer >= 1, got {self.truncate_dim!r}")
        check_precision(self.precision)


ACCEPTED = tuple(sorted([f.name for f in dataclasses.fields(EncodeOptions)] + list(ALIASES)))


_DEFAULTS = EncodeOptions()


def encode_options(given: Mapping[str, Any], **named: Any) -> EncodeOptions:
    """Options from keyword arguments in either spelling (`given`) and an encoder's own named parameters
    (`named`, which count only when they differ from the default); an unknown or doubly given one is a
    ConfigError."""
    values: dict[str, Any] = {k: v for k, v in named.items() if v != getattr(_DEFAULTS, k)}
    for key, value in given.items():
        name = ALIASES.get(key, key)
        if name not in ACCEPTED:
            raise ConfigError(f"encode() got an unknown keyword {key!r}; accepted: {', '.join(ACCEPTED)}")
        if name in values:
            raise ConfigError(f"encode() got {name!r} twice (once as {key!r}); give one spelling")
        values[name] = value
    return EncodeOptions(**values)


def resolve_prompt(options: EncodeOptions, prompts: Mapping[str, str], default_prompt_name: str | None) -> str | None:
    """The prompt to prepend: `prompt`, else `prompts[prompt_name]`, else the default prompt (if any)."""
    if options.prompt is not None:
        return options.prompt
    if options.prompt_name is not None:
        if options.prompt_name not in prompts:
            raise ConfigError(f"prompt_name {options.prompt_name!r} is not one of this model's prompts "
                              f"({', '.join(map(repr, prompts)) or 'none defined'})")
        return prompts[options.prompt_name]
    return prompts.get(default_prompt_name) if default_prompt_name is not None else None


def shape_vectors(vectors: torch.Tensor, options: EncodeOptions) -> torch.Tensor:
    """Per-batch steps in sentence-transformers' order: truncate (Matryoshka) then L2-normalise."""
    if options.truncate_dim is not None:
        vectors = vectors[:, : options.truncate_dim]
    if options.normalize:
        import torch

        vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
    return vectors


def check_finite(vectors: np.ndarray, texts: list[str], name: str) -> None:
    """Refuse NaN/inf vectors: they come from broken weights and would poison every score computed from them."""
    bad = ~np.isfinite(vectors).all(axis=1)
    if bad.any():
        first = int(np.argmax(bad))
        raise ModelFormatError(f"{name} produced non-finite (NaN or inf) vectors for {int(bad.sum())} of {len(texts)} "
                               f"texts (first: text {first}, {texts[first][:60]!r}); its weights are probably broken, "
                               "e.g. by a diverged training run")


def finish_array(vectors: np.ndarray, texts: list[str], options: EncodeOptions,
                 name: str) -> np.ndarray | torch.Tensor | list[torch.Tensor]:
    """All post-model steps for encoders that produce one float array (callables, meta-embeddings)."""
    import torch

    vectors = shape_vectors(torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32)), options).numpy()
    check_finite(vectors, texts, name)
    return finish(vectors, options)


def finish(vectors: np.ndarray, options: EncodeOptions) -> np.ndarray | torch.Tensor | list[torch.Tensor]:
    """Quantize and convert float32 vectors of shape (n, dim) as the options ask."""
    if options.precision != "float32" and len(vectors):
        vectors = quantize_embeddings(vectors, options.precision)
    if options.convert_to_numpy and not options.convert_to_tensor:
        return vectors
    import torch

    if options.convert_to_tensor:
        return torch.from_numpy(vectors)
    return list(torch.from_numpy(vectors))


def supported_keywords(encoder: Any, wanted: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of `wanted` keywords that `encoder.encode` accepts (all of them if it takes **kwargs),
    so that callers can pass options to any object with an `encode` method."""
    try:
        parameters = inspect.signature(encoder.encode).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(wanted)
    return {key: value for key, value in wanted.items() if key in parameters}
