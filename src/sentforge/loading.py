"""The one model-spec resolver (`load`): a spec names a model directory, a MetaEncoder directory, a short name,
`glove:FILE`, `bm25` or a hub id; every command and `sentforge.evaluate` resolve models here. Specs of single
encoders, and building new encoders, are in specs/encoders.py."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sentforge.encoder import Encoder
# SHORT_NAMES and build_encoder are part of this module's public names.
from sentforge.specs.encoders import (  # noqa: F401
    ACCEPTED_SPECS,
    LEXICAL_SPEC,
    SHORT_NAMES,
    build_encoder,
    read_encoder_directory,
    resolve_spec,
)
from sentforge.support.errors import ConfigError, ModelFormatError

if TYPE_CHECKING:
    from sentforge.baselines.bm25 import BM25Scorer
    from sentforge.specs.external import CallableEncoder
    from sentforge.meta.meta_encoder import MetaEncoder

    Model = Encoder | CallableEncoder | MetaEncoder | BM25Scorer

logger = logging.getLogger(__name__)


def load(spec: str | Path, device: str | None = None, allow_lexical: bool = False,
         model_kwargs: dict[str, Any] | None = None) -> Model:
    """Resolve a model spec.

    Accepted: a directory saved by sentforge or sentence-transformers (modules.json); a MetaEncoder
    directory written by `MetaEncoder.save` / `sentforge meta fit` (meta_encoder.json); a plain Hugging
    Face model directory (mean pooling; T5 checkpoints use the encoder with mean pooling); `glove:FILE`
    for word vectors in GloVe text format; a short name (`all-MiniLM-L6-v2`, `glove-6B-50d`,
    `use-multilingual-v3`); or a hub id, downloaded when the hub is reachable. With `allow_lexical`
    (evaluation), also `bm25`: the lexical baseline, which scores texts but has no vectors.

    `model_kwargs` takes the sentence-transformers spelling of the weights' precision:
    `{"torch_dtype": torch.float16}` (or "float16", "bfloat16", "float32", "auto": the dtype the
    checkpoint's config.json names; `dtype` is accepted as the key too) casts the encoder's weights.
    """
    spec = str(spec)
    logger.info("loading model %s", spec)
    if spec.lower() == LEXICAL_SPEC and not Path(spec).expanduser().is_dir():
        if not allow_lexical:
            raise ConfigError(f"model {spec!r} is the lexical BM25 baseline: it scores texts in sentforge eval but "
                              f"has no vectors to encode or train. Accepted here: {ACCEPTED_SPECS}")
        from sentforge.baselines.bm25 import load_bm25

        return load_bm25()
    dtype = _weights_dtype(model_kwargs, spec)
    model = resolve_spec(spec, device, read_directory=_from_directory)
    if device is not None and isinstance(model, Encoder):
        model.to(device)
    if model_kwargs:
        if not isinstance(model, Encoder):
            raise ConfigError(f"model_kwargs apply to a single encoder; {spec!r} is a {type(model).__name__}")
        if dtype == "auto":
            dtype = _checkpoint_dtype(model)
        if dtype is not None:
            model.to(dtype)
    return model


def model_info(spec: str | Path, device: str | None = None) -> dict[str, Any]:
    """`sentforge info`: what the model that `spec` names is, as a dict: its `dimension`; for an Encoder
    its `max_seq_length`, `parameters` (their count) and `modules` (each module's class name and config),
    for another model (a MetaEncoder, a word-vector or external model) its `type` (class name)."""
    encoder = load(spec, device)
    if not isinstance(encoder, Encoder):
        return {"dimension": encoder.dim, "type": type(encoder).__name__}
    return {"dimension": encoder.dim, "max_seq_length": encoder.max_seq_length,
            "parameters": sum(p.numel() for p in encoder.parameters()),
            "modules": [(type(module).__name__, module.config()) for module in encoder]}


def _weights_dtype(model_kwargs: dict[str, Any] | None, spec: str):
    """The dtype that `model_kwargs` asks for ("auto", a torch dtype, or None); other keys are refused."""
    if not model_kwargs:
        return None
    from sentforge.interface.dtypes import parse_dtype

    unknown = sorted(set(model_kwargs) - {"torch_dtype", "dtype"})
    if unknown:
        raise ConfigError(f"model_kwargs {unknown} are not supported when loading {spec!r}; "
                          "accepted: torch_dtype (or dtype)")
    if len(model_kwargs) > 1:
        raise ConfigError("model_kwargs: give torch_dtype or dtype, not both")
    value = next(iter(model_kwargs.values()))
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    return parse_dtype(value, "model_kwargs torch_dtype")


def _checkpoint_dtype(encoder: Encoder):
    """The dtype the backbone checkpoint was saved in (config.json's torch_dtype / dtype); None if unknown."""
    from sentforge.interface.dtypes import parse_dtype

    config = getattr(getattr(encoder[0], "model", None), "config", None)
    name = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    try:
        return parse_dtype(name)
    except ConfigError:
        return None


def _from_directory(path: Path, spec: str, device: str | None) -> Encoder | MetaEncoder:
    from sentforge.meta.meta_encoder import CONFIG_FILE as META_CONFIG
    from sentforge.meta.meta_encoder import MetaEncoder

    if (path / META_CONFIG).is_file():
        return MetaEncoder.load(path, device=device)
    encoder = read_encoder_directory(path, spec)
    if encoder is None:
        raise ModelFormatError(f"{path} is neither a sentence-transformers directory (modules.json), a MetaEncoder "
                               f"directory ({META_CONFIG}) nor a Hugging Face model directory (config.json). "
                               f"Accepted: {ACCEPTED_SPECS}")
    return encoder
