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

Speed. sentence-transformers' DenoisingAutoEncoderLoss pads both batches to their longest sentence
and computes everything, the vocabulary projection included, at every padded position. Here, for
the BERT, RoBERTa and T5 families, a batch is packed padding-free: the sentences of the
batch are laid end to end as one sequence, with block-diagonal attention masks (each token attends
only within its own sentence, and in the decoder's cross-attention only to its own sentence's
vector) and positions that restart at every sentence, which computes the same function as the
padded batch with no work spent on padding. The noisy and original sentences are tokenised in one
call and their token embeddings looked up at once, and the backward of that lookup builds the tied
matrix's whole gradient (see _TiedGradient) instead of autograd filling, copying and adding
vocabulary-sized gradients per use. Other families run the padded batch.

Packing is a CPU optimisation. On an accelerator the block-diagonal masks of one long packed
sequence select the slow general ("math") attention kernel, while the padded batch runs the fused
kernels: the decoder's self-attention is plainly causal (no mask at all) and its cross-attention
has one key per sentence. So by default a batch runs packed on the CPU and padded elsewhere;
`TSDAE.packs(device)` is the one place that decides. Both compute the same loss and gradients.
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
from sentforge.device import to_device, to_device_all
from sentforge.distributed import rank
from sentforge.errors import ConfigError
from sentforge.modules.backbone import T5_FAMILY, _quiet_transformers
from sentforge.modules.base import Features
from sentforge.objectives.host_counter import HostCounter

logger = logging.getLogger(__name__)

IGNORE_INDEX = -100
# Families whose absolute positions start at 0 ...
_POSITIONS_FROM_ZERO = {"bert"}
# ... or right after the padding index.
_POSITIONS_AFTER_PADDING = {"roberta", "xlm-roberta", "camembert"}


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


def position_start(config) -> int | None:
    """First absolute position id of a sentence in this family; None where packing is not supported.
    T5 has only relative positions (0: nothing to pass)."""
    if getattr(config, "_attn_implementation", None) not in ("sdpa", "eager"):
        return None  # packing passes explicit attention masks, which these two take
    if config.model_type in T5_FAMILY:
        return 0
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return None
    if config.model_type in _POSITIONS_FROM_ZERO:
        return 0
    if config.model_type in _POSITIONS_AFTER_PADDING:
        return config.pad_token_id + 1
    return None


def _attention_mask(allowed: torch.Tensor, config, dtype: torch.dtype) -> torch.Tensor:
    """A (1, 1, queries, keys) mask in the form the attention implementation takes: boolean for
    SDPA, additive in `dtype` for eager attention (what transformers' own mask builders produce)."""
    allowed = allowed[None, None]
    if config._attn_implementation == "eager":
        blocked = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
        return blocked.masked_fill(~allowed, torch.finfo(dtype).min)
    return allowed


class _Packed:
    """Token-id lists laid end to end: ids (n,), sentence index (n,) and position in the sentence (n,)."""

    def __init__(self, ids: Sequence[list[int]], device: torch.device) -> None:
        lengths = np.array([len(x) for x in ids])
        self.ids = to_device(torch.from_numpy(np.concatenate(ids).astype(np.int64)), device)
        sentence = np.repeat(np.arange(len(ids)), lengths)
        position = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        self.sentence = to_device(torch.from_numpy(sentence), device)
        self.position = to_device(torch.from_numpy(position), device)
        self.lengths = lengths

    def self_attention_mask(self, config, causal: bool, dtype: torch.dtype) -> torch.Tensor:
        """Each token attends only to the tokens of its own sentence (and only to earlier ones if causal)."""
        allowed = self.sentence[:, None] == self.sentence[None, :]
        if causal:
            allowed &= self.position[:, None] >= self.position[None, :]
        return _attention_mask(allowed, config, dtype)

    def cross_attention_mask(self, config, dtype: torch.dtype) -> torch.Tensor:
        """Each token attends only to its own sentence's vector."""
        vectors = torch.arange(len(self.lengths), device=self.sentence.device)
        return _attention_mask(self.sentence[:, None] == vectors[None, :], config, dtype)

    def padded(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(rows scattered into a right-padded (sentences, longest, ...) tensor, its attention mask)."""
        width = int(self.lengths.max())
        padded = rows.new_zeros((len(self.lengths), width, *rows.shape[1:]))
        padded = padded.index_put((self.sentence, self.position), rows)
        mask = torch.zeros((len(self.lengths), width), dtype=torch.long, device=rows.device)
        mask[self.sentence, self.position] = 1
        return padded, mask


class _TiedGradient:
    """One packed forward pass's hand-off between the vocabulary projection and the token lookup of
    the same (tied) matrix.

    The projection's backward leaves its (grad of logits, inputs) here; the lookup's backward --
    which autograd runs after it, because the looked-up embeddings feed the projection -- builds the
    matrix's whole gradient at once: one fresh matrix product with the lookup rows added in place.
    Autograd would otherwise fill a dense vocabulary-sized gradient per lookup (or copy the
    projection's gradient to add sparse rows to it) and add the pieces together.
    """

    def __init__(self) -> None:
        self.pending: list[tuple[torch.Tensor, torch.Tensor]] = []


class _Projection(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, bias, tied):
        ctx.save_for_backward(hidden, weight)
        ctx.tied, ctx.has_bias = tied, bias is not None
        return F.linear(hidden, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        hidden, weight = ctx.saved_tensors
        grad = grad.to(weight.dtype)
        ctx.tied.pending.append((grad, hidden))
        grad_hidden = (grad @ weight).to(hidden.dtype) if ctx.needs_input_grad[0] else None
        grad_bias = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_hidden, None, grad_bias, None


class _Lookup(torch.autograd.Function):
    @staticmethod
    def forward(ctx, ids, weight, padding_idx, tied):
        ctx.save_for_backward(ids)
        ctx.tied, ctx.padding_idx, ctx.weight_shape = tied, padding_idx, (weight.shape, weight.dtype)
        return F.embedding(ids, weight, padding_idx)

    @staticmethod
    def backward(ctx, grad_rows):
        (ids,) = ctx.saved_tensors
        shape, dtype = ctx.weight_shape
        grad_weight = None
        for grad, hidden in ctx.tied.pending:
            part = grad.t().mm(hidden.to(dtype))
            grad_weight = part if grad_weight is None else grad_weight.add_(part)
        ctx.tied.pending.clear()
        if grad_weight is None:
            grad_weight = torch.zeros(shape, dtype=dtype, device=grad_rows.device)
        if ctx.padding_idx is not None:
            grad_rows = grad_rows.masked_fill((ids == ctx.padding_idx)[:, None], 0)
        return None, grad_weight.index_add_(0, ids, grad_rows.to(dtype)), None, None


class _TiedLinear(nn.Module):
    """The output projection (same weight and bias Parameters); during a packed pass it hands its
    weight gradient to the lookup (see _TiedGradient)."""

    def __init__(self, linear: nn.Module) -> None:
        super().__init__()
        self.weight = linear.weight
        self.bias = linear.bias
        self.tied: _TiedGradient | None = None

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        if self.tied is None:
            return F.linear(hidden, self.weight, self.bias)
        return _Projection.apply(hidden, self.weight, self.bias, self.tied)


class _Decoder(nn.Module):
    """A decoder that cross-attends to one vector per sentence and scores the vocabulary."""

    body: nn.Module

    def __init__(self, pad_id: int) -> None:
        super().__init__()
        self.pad_id = pad_id

    def shift(self, ids: list[int]) -> tuple[list[int], list[int]]:
        """(decoder input, target) of one tokenised sentence."""
        raise NotImplementedError

    def logits(self, hidden: torch.Tensor, tied: _TiedGradient | None = None) -> torch.Tensor:
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
        self.projection = _TiedLinear(model.get_output_embeddings())
        model.set_output_embeddings(self.projection)

    def shift(self, ids: list[int]) -> tuple[list[int], list[int]]:
        # [CLS] w1 ... wn [SEP]: read [CLS] w1 ... wn, predict w1 ... wn [SEP].
        return ids[:-1], ids[1:]

    def logits(self, hidden: torch.Tensor, tied: _TiedGradient | None = None) -> torch.Tensor:
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

    def logits(self, hidden: torch.Tensor, tied: _TiedGradient | None = None) -> torch.Tensor:
        if tied is None:
            return F.linear(hidden * self.scale, self.body.embed_tokens.weight)
        return _Projection.apply(hidden * self.scale, self.body.embed_tokens.weight, None, tied)

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
        loss = (self._packed_loss if packed else self._padded_loss)(noisy_ids, target_ids)
        # Counted on the host from the token lists (the same count either way): no device sync.
        targets = sum(len(self.decoder.shift(ids)[1]) for ids in target_ids)
        self.last_stats = {"tokens": float(sum(map(len, noisy_ids)) + targets)}
        return loss

    def _pool(self, features: Features) -> torch.Tensor:
        """The encoder's modules after the backbone: token embeddings -> sentence vector."""
        for module in list(self.encoder)[1:]:
            features = module(features)
        return features["sentence_embedding"]

    @property
    def _t5(self) -> bool:
        return self.encoder[0].model.config.model_type in T5_FAMILY

    def _padded_loss(self, noisy_ids: list[list[int]], target_ids: list[list[int]]) -> torch.Tensor:
        backbone, device = self.encoder[0], self.encoder.device
        features = to_device_all(backbone.pad(noisy_ids), device)
        input_ids, labels, real = self.decoder.padded_batch(target_ids, device)
        # Sparse lookup gradients save the CPU a vocabulary-sized fill per lookup; on accelerators that
        # fill is cheap and the sparse bookkeeping is not.
        sparse = _sparse_lookups((backbone, self.decoder), self.decoder.projection_weight) \
            if device.type == "cpu" else contextlib.nullcontext()
        with sparse:
            vectors = self.encoder(features)["sentence_embedding"]
            # No self-attention mask: the causal mask alone keeps real positions from seeing the
            # right padding, and lets attention take its fused causal path.
            hidden = self.decoder.hidden_states(vectors[:, None, :], input_ids)
        hidden = hidden.reshape(-1, hidden.shape[-1]).index_select(0, real)
        return F.cross_entropy(self.decoder.logits(hidden).float(), labels)

    def _positions(self, packed: _Packed) -> dict[str, torch.Tensor]:
        if self._t5:
            return {}  # relative positions: within a sentence they are what they are unpacked
        return {"position_ids": (packed.position + self.position_start)[None]}

    def _packed_loss(self, noisy_ids: list[list[int]], target_ids: list[list[int]]) -> torch.Tensor:
        device = self.encoder.device
        model = self.encoder[0].model
        shifted = [self.decoder.shift(seq) for seq in target_ids]
        source = _Packed(noisy_ids, device)
        target = _Packed([inputs for inputs, _ in shifted], device)
        labels = to_device(torch.from_numpy(np.concatenate([labels for _, labels in shifted]).astype(np.int64)), device)

        encoder_lookup = model.get_input_embeddings()
        decoder_weight = self.decoder.projection_weight
        padding_idx = self.decoder.body.get_input_embeddings().padding_idx
        tied = _TiedGradient()
        if encoder_lookup.weight is decoder_weight:
            # Tied: one lookup for both, whose backward also builds the projection's weight gradient.
            embeds = _Lookup.apply(torch.cat([source.ids, target.ids]), decoder_weight, padding_idx, tied)
            source_embeds, target_embeds = embeds[:len(source.ids)], embeds[len(source.ids):]
        else:
            source_embeds = encoder_lookup(source.ids)
            target_embeds = _Lookup.apply(target.ids, decoder_weight, padding_idx, tied)
        source_embeds, target_embeds = source_embeds[None], target_embeds[None]

        source_mask = source.self_attention_mask(model.config, False, source_embeds.dtype)
        tokens = model(inputs_embeds=source_embeds, attention_mask=source_mask,
                       **self._positions(source)).last_hidden_state[0]
        padded, mask = source.padded(tokens)
        vectors = self._pool({"token_embeddings": padded, "attention_mask": mask})[None]
        body = self.decoder.body
        hidden = self.decoder.hidden_states(
            vectors, inputs_embeds=target_embeds,
            attention_mask=target.self_attention_mask(body.config, True, target_embeds.dtype),
            encoder_attention_mask=target.cross_attention_mask(body.config, target_embeds.dtype),
            **self._positions(target))[0]
        return F.cross_entropy(self.decoder.logits(hidden, tied).float(), labels)
