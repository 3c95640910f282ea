"""TSDAE: Transformer-based Sequential Denoising Auto-Encoder (Wang, Reimers & Gurevych, 2021).

The encoder reads a noisy sentence (by default 60% of its words deleted) and pools it into one
vector; a decoder of the same architecture reconstructs the original sentence token by token, and
its cross-attention sees nothing but that vector (keys and values of one position), so everything
it needs must be in the sentence embedding. Paper defaults: deletion noise with ratio 0.6, CLS
pooling (set on the encoder, see `sentforge train tsdae --pooling`), encoder and decoder weights
tied, output projection tied to the input embeddings, AdamW with lr 3e-5, batch size 8.

Decoders: BERT-like backbones (a `*ForCausalLM` of the family with `add_cross_attention` that is the
base model plus one LM head: BERT, RoBERTa, ...) and T5-like ones (a T5 decoder stack over the
encoder's embeddings).

Speed. For the BERT, RoBERTa and T5 families a batch runs packed padding-free on the CPU
(objectives/tsdae_packed.py) and padded elsewhere, where the fused attention kernels need the
padded form; `TSDAE.packs(device)` is the one place that decides. Both compute the same loss and
gradients.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoModelForCausalLM

from sentforge.data.noise import WordNoise
from sentforge.support.device import to_device, to_device_all
from sentforge.support.distributed import rank
from sentforge.support.errors import ConfigError
from sentforge.modules.backbone import T5_FAMILY, _quiet_transformers
from sentforge.objectives.host_counter import HostCounter
from sentforge.objectives.packed_attention import one_key_cross_attention, supports
from sentforge.objectives.tsdae_packed import TiedGradient, TiedLinear, packed_loss, position_start, project

logger = logging.getLogger(__name__)

IGNORE_INDEX = -100


def _share_or_copy(target: nn.Module, sources: dict[str, nn.Parameter], counterpart, tie: bool) -> int:
    """Give every parameter of `target` that has a counterpart in `sources` either the very same
    Parameter (tie) or a copy of its values. Returns how many parameters were matched."""
    matched = 0
    for name, param in list(target.named_parameters()):
        source = sources.get(counterpart(name) or "")
        if source is None:
            continue
        if source.shape != param.shape:
            raise ConfigError(f"TSDAE decoder parameter {name} has shape {tuple(param.shape)}, its encoder "
                              f"counterpart {tuple(source.shape)}: the decoder must have the encoder's architecture")
        module_name, _, attr = name.rpartition(".")
        if tie:
            setattr(target.get_submodule(module_name), attr, source)
        else:
            with torch.no_grad():
                param.copy_(source)
        matched += 1
    return matched


class _Decoder(nn.Module):
    """A decoder that cross-attends to one vector per sentence and scores the vocabulary."""

    body: nn.Module

    def __init__(self, pad_id: int) -> None:
        super().__init__()
        self.pad_id = pad_id

    def shift(self, ids: list[int]) -> tuple[list[int], list[int]]:
        """(decoder input, target) of one tokenised sentence."""
        raise NotImplementedError

    def logits(self, hidden: torch.Tensor, tied: TiedGradient | None = None) -> torch.Tensor:
        """Vocabulary scores; with `tied`, the projection hands its weight gradient to the lookup."""
        raise NotImplementedError

    @property
    def projection_weight(self) -> nn.Parameter:
        """The vocabulary projection, which is also the decoder's token-embedding matrix."""
        raise NotImplementedError

    def hidden_states(self, sentence_vectors: torch.Tensor, input_ids: torch.Tensor | None = None,
                      **inputs) -> torch.Tensor:
        return self.body(input_ids=input_ids, encoder_hidden_states=sentence_vectors, use_cache=False,
                         **inputs).last_hidden_state

    def padded_batch(self, ids: Sequence[list[int]],
                     device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Right-padded decoder inputs (sentences, width), the targets at the real positions, and
        those positions as flat indices into (sentences * width): all built on the host, so that
        picking the real positions on the device needs no host synchronisation."""
        pairs = [self.shift(seq) for seq in ids]
        width = max(1, max(len(inputs) for inputs, _ in pairs))
        inputs = np.full((len(pairs), width), self.pad_id, dtype=np.int64)
        labels = np.full((len(pairs), width), IGNORE_INDEX, dtype=np.int64)
        for row, (x, y) in enumerate(pairs):
            inputs[row, :len(x)] = x
            labels[row, :len(y)] = y
        real = np.flatnonzero(labels.reshape(-1) != IGNORE_INDEX)
        return (to_device(torch.from_numpy(inputs), device),
                to_device(torch.from_numpy(labels.reshape(-1)[real]), device),
                to_device(torch.from_numpy(real), device))


class BertLikeDecoder(_Decoder):
    """`*ForCausalLM` of the encoder's family with `is_decoder` and `add_cross_attention`; it keeps the
    checkpoint's LM head where the checkpoint has one (an MLM-pre-trained BERT does)."""

    def __init__(self, encoder_model: nn.Module, pad_id: int, tie: bool) -> None:
        super().__init__(pad_id)
        config = encoder_model.config.__class__.from_dict(encoder_model.config.to_dict())
        config.is_decoder, config.add_cross_attention, config.use_cache = True, True, False
        source = Path(str(getattr(encoder_model.config, "_name_or_path", "") or ""))
        try:
            with _quiet_transformers():
                if (source / "config.json").is_file():
                    model = AutoModelForCausalLM.from_pretrained(str(source), config=config)
                else:
                    model = AutoModelForCausalLM.from_config(config)
        except ValueError as err:
            raise ConfigError(f"TSDAE has no decoder for model type {config.model_type!r} "
                              f"(transformers has no causal-LM class with cross-attention for it): {err}") from None
        model.to(next(encoder_model.parameters()).device)
        self.body = getattr(model, model.base_model_prefix)
        heads = [module for name, module in model.named_children() if name != model.base_model_prefix]
        if len(heads) != 1:
            raise ConfigError(f"TSDAE cannot find the LM head of {type(model).__name__}")
        self.head = heads[0]
        if not _share_or_copy(self.body, dict(encoder_model.named_parameters()), lambda name: name, tie):
            raise ConfigError(f"no parameter of the {config.model_type} decoder matches the encoder's")
        # The vocabulary projection is the decoder's input embedding matrix (the encoder's when tied).
        model.get_output_embeddings().weight = self.body.get_input_embeddings().weight
        self.projection = TiedLinear(model.get_output_embeddings())
        model.set_output_embeddings(self.projection)

    def shift(self, ids: list[int]) -> tuple[list[int], list[int]]:
        # [CLS] w1 ... wn [SEP]: read [CLS] w1 ... wn, predict w1 ... wn [SEP].
        return ids[:-1], ids[1:]

    def logits(self, hidden: torch.Tensor, tied: TiedGradient | None = None) -> torch.Tensor:
        self.projection.tied = tied
        try:
            return self.head(hidden)
        finally:
            self.projection.tied = None

    @property
    def projection_weight(self) -> nn.Parameter:
        return self.body.get_input_embeddings().weight


def _t5_counterpart(name: str) -> str | None:
    """The encoder parameter that a T5 decoder-stack parameter mirrors (None: decoder-only)."""
    if name == "embed_tokens.weight":
        return "shared.weight"
    if ".layer.1." in name or "relative_attention_bias" in name:
        # Cross-attention has no counterpart; the decoder's relative position buckets are
        # one-directional, so its bias table means something else than the encoder's.
        return None
    return "encoder." + name.replace(".layer.2.", ".layer.1.")


class T5LikeDecoder(_Decoder):
    """A T5 decoder stack (self-attention, cross-attention, feed-forward) over the encoder's token
    embeddings; the vocabulary projection is the embedding matrix, with T5's d_model^-0.5 rescaling
    of tied projections."""

    def __init__(self, encoder_model: nn.Module, pad_id: int, tie: bool) -> None:
        super().__init__(pad_id)
        from transformers.models.t5.modeling_t5 import T5Stack

        config = encoder_model.config.__class__.from_dict(encoder_model.config.to_dict())
        config.is_decoder, config.use_cache, config.is_encoder_decoder = True, False, False
        config.num_layers = config.num_decoder_layers or config.num_layers
        self.body = T5Stack(config).to(next(encoder_model.parameters()).device)
        self.start_id = config.decoder_start_token_id if config.decoder_start_token_id is not None else pad_id
        self.scale = config.d_model ** -0.5
        _share_or_copy(self.body, dict(encoder_model.named_parameters()), _t5_counterpart, tie)

    def shift(self, ids: list[int]) -> tuple[list[int], list[int]]:
        # w1 ... wn </s>: read <start> w1 ... wn, predict w1 ... wn </s>.
        return [self.start_id, *ids[:-1]], ids

    def logits(self, hidden: torch.Tensor, tied: TiedGradient | None = None) -> torch.Tensor:
        if tied is None:
            return F.linear(hidden * self.scale, self.body.embed_tokens.weight)
        return project(hidden * self.scale, self.body.embed_tokens.weight, None, tied)

    @property
    def projection_weight(self) -> nn.Parameter:
        return self.body.embed_tokens.weight


@contextlib.contextmanager
def _sparse_lookups(modules: Sequence[nn.Module], weight: nn.Parameter) -> Iterator[None]:
    """Let the embedding lookups into `weight` return sparse gradients while the block runs.

    `weight` also receives the dense gradient of the vocabulary projection, so the sum that
    autograd accumulates stays dense (optimisers and clipping see an ordinary gradient), but each
    lookup adds only its rows instead of materialising a dense vocabulary-sized matrix.
    """
    lookups = [m for module in modules for m in module.modules()
               if isinstance(m, nn.Embedding) and m.weight is weight and not m.sparse]
    for lookup in lookups:
        lookup.sparse = True
    try:
        yield
    finally:
        for lookup in lookups:
            lookup.sparse = False


def _word_vocabulary(tokenizer) -> list[str]:
    """Whole alphabetic words of a tokenizer's vocabulary: what 'replace' and 'add' noise insert."""
    special = set(tokenizer.all_special_tokens)
    words = set()
    for token in tokenizer.get_vocab():
        word = token.lstrip("▁Ġ")
        if token not in special and not token.startswith("##") and len(word) > 1 and word.isalpha():
            words.add(word)
    return sorted(words)


class TSDAE(nn.Module):
    """The TSDAE objective over an `Encoder` whose first module is a Hugging Face backbone.

    A batch is a list of sentences; the objective applies the noise itself (fresh each time a
    sentence is drawn), from a random stream of its own that is part of its state, so a resumed
    run draws the same noise as an uninterrupted one.

    noise: a noise kind ("delete", "swap", "mask", "replace", "add") with `noise_ratio`, or any
    callable `(text, rng) -> text` such as a `WordNoise`.
    tie: share the encoder's weights with the decoder (paper default); False gives the decoder its
    own copy, initialised from the encoder.
    packed: run batches padding-free (True), padded (False), or decide by device (None, the
    default: packed on the CPU where the family supports it, padded on accelerators; see above).
    """

    def __init__(self, encoder: nn.Module, noise: str | WordNoise = "delete", noise_ratio: float = 0.6,
                 tie: bool = True, max_seq_length: int | None = None, seed: int = 0,
                 packed: bool | None = None) -> None:
        super().__init__()
        backbone = encoder[0]
        model, tokenizer = getattr(backbone, "model", None), getattr(backbone, "tokenizer", None)
        if model is None or tokenizer is None:
            raise ConfigError("TSDAE needs an encoder over a Hugging Face backbone (a Transformer module)")
        hidden = int(getattr(model.config, "hidden_size", None) or model.config.d_model)
        if encoder.full_dim != hidden:
            raise ConfigError(f"TSDAE decodes from the sentence vector, which must have the backbone's hidden size "
                              f"{hidden}; this encoder gives {encoder.full_dim} (one pooling mode, no projection)")
        self.encoder = encoder
        if model.config.model_type in T5_FAMILY:
            self.decoder: _Decoder = T5LikeDecoder(model, tokenizer.pad_token_id, tie)
        else:
            self.decoder = BertLikeDecoder(model, tokenizer.pad_token_id, tie)
        self.position_start = position_start(model.config)
        if packed and self.position_start is None:
            raise ConfigError(f"packed TSDAE batches are not supported for model type {model.config.model_type!r}")
        self.packed = packed
        self.noise = noise if callable(noise) else self._noise(noise, noise_ratio, tokenizer)
        self.tie = tie
        self.max_seq_length = max_seq_length
        self.seed = seed
        # How many batches have been noised: with the seed and the process rank it fixes the noise.
        self._noise_draws = HostCounter(self, "noise_draws")
        self.last_stats: dict[str, float] = {}

    @staticmethod
    def _noise(kind: str, ratio: float, tokenizer) -> WordNoise:
        mask_token = tokenizer.mask_token
        if mask_token is None and "<extra_id_0>" in tokenizer.get_vocab():
            mask_token = "<extra_id_0>"  # T5 tokenizers have sentinels instead of a mask token
        if kind == "mask" and mask_token is None:
            raise ConfigError("mask noise needs a tokenizer with a mask token")
        vocabulary = _word_vocabulary(tokenizer) if kind in ("replace", "add") else ()
        return WordNoise(kind, ratio, mask_token=mask_token or "", vocabulary=vocabulary)

    def packs(self, device: torch.device) -> bool:
        """Whether a batch on `device` runs packed (block-diagonal masks over one sequence) rather than
        padded: the setting given, else packed on the CPU only (see the module docstring)."""
        if self.packed is not None:
            return self.packed
        return self.position_start is not None and device.type == "cpu"

    def reset_noise(self, draws: int = 0) -> None:
        """Draw the noise as after `draws` batches (0: as at the start of training)."""
        self._noise_draws.set(draws)

    def _rng(self) -> np.random.Generator:
        return np.random.default_rng([self.seed, rank(), self._noise_draws.take()])

    def forward(self, batch: Sequence[str]) -> torch.Tensor:
        if not batch or not all(isinstance(text, str) for text in batch):
            raise ConfigError("TSDAE batches are lists of sentences")
        rng = self._rng()
        noisy = [self.noise(text, rng) for text in batch]
        ids, _ = self.encoder[0].token_ids(noisy + list(batch), self.max_seq_length)
        noisy_ids, target_ids = ids[:len(batch)], ids[len(batch):]
        packed = self.packs(self.encoder.device)
        if packed:
            loss = packed_loss(self.encoder, self.decoder, self.position_start, noisy_ids, target_ids)
        else:
            loss = self._padded_loss(noisy_ids, target_ids)
        # Counted on the host from the token lists (the same count either way): no device sync.
        targets = sum(len(self.decoder.shift(ids)[1]) for ids in target_ids)
        self.last_stats = {"tokens": float(sum(map(len, noisy_ids)) + targets)}
        return loss

    def _padded_loss(self, noisy_ids: list[list[int]], target_ids: list[list[int]]) -> torch.Tensor:
        backbone, device = self.encoder[0], self.encoder.device
        features = to_device_all(backbone.pad(noisy_ids), device)
        input_ids, labels, real = self.decoder.padded_batch(target_ids, device)
        # Sparse lookup gradients save the CPU a vocabulary-sized fill per lookup; on accelerators that
        # fill is cheap and the sparse bookkeeping is not.
        sparse = _sparse_lookups((backbone, self.decoder), self.decoder.projection_weight) \
            if device.type == "cpu" else contextlib.nullcontext()
        body = self.decoder.body
        one_key = one_key_cross_attention(body) if supports(body) else contextlib.nullcontext()
        with sparse, one_key:
            vectors = self.encoder(features)["sentence_embedding"]
            # No self-attention mask: the causal mask alone keeps real positions from seeing the
            # right padding, and lets attention take its fused causal path.
            hidden = self.decoder.hidden_states(vectors[:, None, :], input_ids)
        hidden = hidden.reshape(-1, hidden.shape[-1]).index_select(0, real)
        return F.cross_entropy(self.decoder.logits(hidden).float(), labels)

