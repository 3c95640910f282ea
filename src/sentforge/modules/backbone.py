"""Hugging Face backbones: any encoder (BERT, MiniLM, MPNet, RoBERTa, T5 encoder) and the T5
encoder-decoder whose sentence vector is the first decoder output (Sentence-T5's ST5-EncDec)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import torch
import transformers
from safetensors import SafetensorError, safe_open
from tokenizers import Tokenizer
from transformers import AutoConfig, AutoModel, AutoTokenizer, PretrainedConfig, PreTrainedModel

from sentforge.support.errors import ConfigError, ModelFormatError
from sentforge.modules.base import WEIGHTS_FILE, Features, InputModule, pad_ids, read_json, write_json

logger = logging.getLogger(__name__)

ST_CONFIG_FILE = "sentence_bert_config.json"
T5_FAMILY = {"t5", "mt5", "umt5", "longt5"}
ROBERTA_FAMILY = {"roberta", "xlm-roberta", "camembert"}
WEIGHT_FILES = (WEIGHTS_FILE, "model.safetensors.index.json")
PICKLE_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "spiece.model", "sentencepiece.bpe.model", "vocab.json",
                   "tokenizer.model")
# Beyond this the tokenizer's model_max_length is a "no limit" sentinel, not a real limit.
_UNBOUNDED = 1_000_000
_T5_DEFAULT_MAX_LENGTH = 512


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence transformers' own load report and progress bars; sentforge logs the parts that matter."""
    previous = transformers.logging.get_verbosity()
    bars = transformers.logging.is_progress_bar_enabled()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    try:
        yield
    finally:
        transformers.logging.set_verbosity(previous)
        if bars:
            transformers.logging.enable_progress_bar()


def _refuse_missing(name: str, info: dict[str, Any]) -> None:
    """A checkpoint that lacks weights would load with random layers: refuse it.
    BERT checkpoints converted from sentence-transformers often drop the unused pooler layer."""
    missing = sorted(k for k in info.get("missing_keys", ()) if not k.startswith("pooler."))
    mismatched = [str(item[0]) for item in info.get("mismatched_keys", ())]
    for problem, keys in (("lacks", missing), ("has mis-shaped", mismatched)):
        if keys:
            raise ModelFormatError(f"{name}: {WEIGHTS_FILE} {problem} {len(keys)} tensors of the architecture "
                                   f"({', '.join(keys[:4])}{' ...' if len(keys) > 4 else ''}); refusing to "
                                   "initialise them randomly")


def check_checkpoint_dir(path: Path) -> None:
    """A local Hugging Face checkpoint has a readable config, safetensors weights and tokenizer files."""
    config = read_json(path / "config.json")
    if not isinstance(config.get("model_type"), str):
        raise ModelFormatError(f"{path / 'config.json'}: no model_type")
    weights = [path / name for name in WEIGHT_FILES if (path / name).is_file()]
    if not weights:
        pickled = [name for name in PICKLE_FILES if (path / name).exists()]
        if pickled:
            raise ModelFormatError(f"{path} holds only {pickled[0]}, a pickle, which sentforge never loads "
                                   "(it can run code); convert it to model.safetensors")
        raise ModelFormatError(f"{path}: no weights file ({' or '.join(WEIGHT_FILES)})")
    if weights[0].name == WEIGHTS_FILE:
        try:
            with safe_open(str(weights[0]), "pt") as handle:
                handle.keys()
        except (SafetensorError, OSError) as err:
            raise ModelFormatError(f"{weights[0]}: not a readable safetensors file ({err})") from None
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise ModelFormatError(f"{path}: no tokenizer ({', '.join(TOKENIZER_FILES)}); without one every word "
                               "would become the unknown token")


def load_config(name_or_path: str | Path) -> PretrainedConfig:
    path = Path(name_or_path)
    if path.is_dir():
        check_checkpoint_dir(path)
    try:
        return AutoConfig.from_pretrained(str(name_or_path))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ModelFormatError(f"{path / 'config.json'}: not a usable model config "
                               f"({str(err).splitlines()[0]})") from None


def position_limit(config: PretrainedConfig) -> int | None:
    """How many token positions the model's position table holds (None: relative positions, no limit)."""
    positions = getattr(config, "max_position_embeddings", None)
    if not positions or positions >= _UNBOUNDED:
        return None
    return positions - 2 if getattr(config, "model_type", None) in ROBERTA_FAMILY else positions


def _default_max_length(config: PretrainedConfig, tokenizer: Any) -> int:
    limits = [n for n in (getattr(tokenizer, "model_max_length", None),
                          getattr(config, "max_position_embeddings", None)) if n and n < _UNBOUNDED]
    if getattr(config, "model_type", None) in ROBERTA_FAMILY and limits:
        limits = [min(limits) - 2]  # RoBERTa reserves two positions for the padding offset.
    return min(limits) if limits else _T5_DEFAULT_MAX_LENGTH


class HFBackbone(InputModule):
    """Shared tokenisation and save format of the Hugging Face backbones."""

    saves_at_root: ClassVar[bool] = True
    config_file: ClassVar[str] = ST_CONFIG_FILE

    def __init__(self, model: PreTrainedModel, tokenizer: Any, max_seq_length: int | None = None,
                 do_lower_case: bool = False) -> None:
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.do_lower_case = do_lower_case
        self.max_seq_length = max_seq_length or _default_max_length(model.config, tokenizer)
        if not getattr(tokenizer, "is_fast", False):
            raise ModelFormatError("sentforge needs a fast (Rust) tokenizer: save the model with a tokenizer.json")
        # A private copy of the Rust tokenizer: padding and truncation are set per call here,
        # never through the shared tokenizer object.
        self._backend = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
        self._backend.no_padding()
        self._truncation: int | None = None
        if tokenizer.pad_token_id is None:
            raise ModelFormatError("the tokenizer defines no padding token")

    @property
    def max_seq_length(self) -> int:
        return self._max_seq_length

    @max_seq_length.setter
    def max_seq_length(self, value: int) -> None:
        self._max_seq_length = self._check_length(value)

    def _check_length(self, value: int) -> int:
        limit = position_limit(self.model.config)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"max_seq_length must be a positive integer, got {value!r}")
        if limit is not None and value > limit:
            raise ConfigError(f"max_seq_length {value} is beyond the model's position table "
                              f"({limit} positions); use at most {limit}")
        return value

    @property
    def hidden_size(self) -> int:
        config = self.model.config
        return int(getattr(config, "hidden_size", None) or config.d_model)

    @property
    def output_dim(self) -> int:
        return self.hidden_size

    def config(self) -> dict[str, Any]:
        return {"max_seq_length": self.max_seq_length, "do_lower_case": self.do_lower_case}

    def prepare(self, text: str) -> str:
        """The text as the tokenizer reads it: sentence-transformers' normalisation (strip, then optional
        lower-casing)."""
        return text.strip().lower() if self.do_lower_case else text.strip()

    def token_ids(self, texts: list[str], max_length: int | None = None) -> tuple[list[list[int]], int]:
        limit = self._check_length(max_length) if max_length else self.max_seq_length
        if self._truncation != limit:
            self._backend.enable_truncation(limit)
            self._truncation = limit
        encodings = self._backend.encode_batch([self.prepare(t) for t in texts])
        return [e.ids for e in encodings], sum(1 for e in encodings if e.overflowing)

    def pad(self, ids: list[list[int]]) -> Features:
        return pad_ids(ids, self.tokenizer.pad_token_id)

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        with _quiet_transformers():  # no progress bar of transformers' own per saved file
            self.model.save_pretrained(path, safe_serialization=True)
            self.tokenizer.save_pretrained(path)
        write_json(path / self.config_file, self.config())

    @staticmethod
    def _load_parts(path: str | Path, model_class: Any, **model_kwargs: Any) -> tuple[PreTrainedModel, Any]:
        with _quiet_transformers():
            try:
                tokenizer = AutoTokenizer.from_pretrained(str(path))
            except Exception as err:  # tokenizers and transformers raise many types for a broken file
                first_line = str(err).splitlines()[0] if str(err) else ""
                raise ModelFormatError(f"{path}: the tokenizer files cannot be read "
                                       f"({type(err).__name__}: {first_line})") from None
            try:
                model, info = model_class.from_pretrained(str(path), output_loading_info=True, use_safetensors=True,
                                                          **model_kwargs)
            except (OSError, ValueError, RuntimeError, SafetensorError) as err:
                raise ModelFormatError(f"{path}: the weights cannot be loaded ({str(err).splitlines()[0]})") from None
        _refuse_missing(str(path), info)
        return model, tokenizer

    @classmethod
    def load(cls, path: Path) -> HFBackbone:
        options = read_json(path / ST_CONFIG_FILE) if (path / ST_CONFIG_FILE).exists() else {}
        length = options.get("max_seq_length")
        if length is not None and (not isinstance(length, int) or isinstance(length, bool) or length < 1):
            raise ModelFormatError(f"{path / ST_CONFIG_FILE}: max_seq_length must be a positive integer, "
                                   f"got {length!r}")
        try:
            return cls.from_pretrained(path, max_seq_length=length,
                                       do_lower_case=bool(options.get("do_lower_case", False)))
        except ConfigError as err:
            raise ModelFormatError(f"{path / ST_CONFIG_FILE}: {err}") from None

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, max_seq_length: int | None = None,
                        do_lower_case: bool = False, **model_kwargs: Any) -> HFBackbone:
        raise NotImplementedError


def model_inputs(features: Features) -> Features:
    """The token input of a Hugging Face model call: `inputs_embeds` (token embeddings given directly, e.g. for
    gradients with respect to them) when the features hold them, else `input_ids`."""
    if "inputs_embeds" in features:
        return {"inputs_embeds": features["inputs_embeds"]}
    return {"input_ids": features["input_ids"]}


def _encoder_class(config: PretrainedConfig) -> Any:
    """The encoder-only class for T5-family configs (their AutoModel needs decoder inputs)."""
    if config.model_type in T5_FAMILY:
        name = {"t5": "T5EncoderModel", "mt5": "MT5EncoderModel", "umt5": "UMT5EncoderModel",
                "longt5": "LongT5EncoderModel"}[config.model_type]
        return getattr(transformers, name)
    return AutoModel


class Transformer(HFBackbone):
    """Any Hugging Face encoder; for T5-family checkpoints only the encoder stack is loaded.

    Adds `token_embeddings` (the last hidden states) to the features.
    """

    type_name: ClassVar[str] = "sentence_transformers.models.Transformer"

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, max_seq_length: int | None = None,
                        do_lower_case: bool = False, **model_kwargs: Any) -> Transformer:
        config = load_config(name_or_path)
        model, tokenizer = cls._load_parts(name_or_path, _encoder_class(config), **model_kwargs)
        return cls(model, tokenizer, max_seq_length, do_lower_case)

    @property
    def is_t5(self) -> bool:
        return self.model.config.model_type in T5_FAMILY

    def forward(self, features: Features) -> Features:
        output = self.model(**model_inputs(features), attention_mask=features["attention_mask"])
        features["token_embeddings"] = output[0]
        return features


class T5EncoderDecoder(HFBackbone):
    """ST5-EncDec: the text goes into the encoder, the decoder sees only its start token, and the
    decoder's first output is the sentence representation (Ni et al., 2022, Sentence-T5, Fig. 2c).

    Sets `token_embeddings` to that single decoder output, with an all-ones one-position mask, so
    that any pooling afterwards (first or mean) returns it.
    """

    type_name: ClassVar[str] = "sentforge.modules.T5EncoderDecoder"

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, max_seq_length: int | None = None,
                        do_lower_case: bool = False, **model_kwargs: Any) -> T5EncoderDecoder:
        config = load_config(name_or_path)
        if config.model_type not in T5_FAMILY:
            raise ModelFormatError(f"{name_or_path}: the encoder-decoder backbone needs a T5-family checkpoint, "
                                   f"got model_type={config.model_type!r}")
        model, tokenizer = cls._load_parts(name_or_path, AutoModel, **model_kwargs)
        return cls(model, tokenizer, max_seq_length, do_lower_case)

    def forward(self, features: Features) -> Features:
        input_ids = features["input_ids"]
        start = self.model.config.decoder_start_token_id
        start = self.model.config.pad_token_id if start is None else start
        decoder_input_ids = torch.full((input_ids.shape[0], 1), start, dtype=torch.long, device=input_ids.device)
        output = self.model(**model_inputs(features), attention_mask=features["attention_mask"],
                            decoder_input_ids=decoder_input_ids, use_cache=False)
        features["token_embeddings"] = output.last_hidden_state
        features["attention_mask"] = torch.ones_like(decoder_input_ids)
        return features
