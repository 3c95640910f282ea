"""Packed TSDAE batches: the CPU path of objectives/tsdae.py.

sentence-transformers' DenoisingAutoEncoderLoss pads both batches to their longest sentence and computes
everything, the vocabulary projection included, at every padded position. Here, for the BERT, RoBERTa and T5
families, a batch is packed padding-free: the sentences of the batch are laid end to end as one sequence,
with positions that restart at every sentence, and each token attends only within its own sentence (and in
the decoder's cross-attention only to its own sentence's vector), which computes the same function as the
padded batch with no work spent on padding. BERT and RoBERTa attend sentence by sentence
(objectives/packed_attention.py); T5 under block-diagonal masks over the sequence. The noisy and original
sentences' token embeddings are looked up at once, and the backward of that lookup builds the tied matrix's
whole gradient (see TiedGradient) instead of autograd filling, copying and adding vocabulary-sized gradients
per use.

Packing is a CPU optimisation. On an accelerator the padded batch runs the fused attention kernels
on whole batches; `TSDAE.packs(device)` decides which path a batch takes. Both compute the same loss and
gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sentforge.objectives import packed_attention
from sentforge.support.device import to_device
from sentforge.modules.backbone import T5_FAMILY

# Families whose absolute positions start at 0 ...
_POSITIONS_FROM_ZERO = {"bert"}
# ... or right after the padding index.
_POSITIONS_AFTER_PADDING = {"roberta", "xlm-roberta", "camembert"}


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


class Packed:
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


class TiedGradient:
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


class TiedLinear(nn.Module):
    """The output projection (same weight and bias Parameters); during a packed pass it hands its
    weight gradient to the lookup (see TiedGradient)."""

    def __init__(self, linear: nn.Module) -> None:
        super().__init__()
        self.weight = linear.weight
        self.bias = linear.bias
        self.tied: TiedGradient | None = None

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        if self.tied is None:
            return F.linear(hidden, self.weight, self.bias)
        return _Projection.apply(hidden, self.weight, self.bias, self.tied)


def project(hidden: torch.Tensor, weight: nn.Parameter, bias: torch.Tensor | None,
            tied: TiedGradient) -> torch.Tensor:
    """The vocabulary projection, handing its weight gradient to the lookup of the same matrix."""
    return _Projection.apply(hidden, weight, bias, tied)


def packed_loss(encoder: nn.Module, decoder: Any, first_position: int, noisy_ids: Sequence[list[int]],
                target_ids: Sequence[list[int]]) -> torch.Tensor:
    """TSDAE's loss over one packed batch: `encoder` reads the noisy sentences, `decoder` (a TSDAE
    decoder) reconstructs the targets from their vectors; `first_position` is `position_start(config)`."""
    device = encoder.device
    model = encoder[0].model
    t5 = model.config.model_type in T5_FAMILY

    def positions(packed: Packed) -> dict[str, torch.Tensor]:
        if t5:
            return {}  # relative positions: within a sentence they are what they are unpacked
        return {"position_ids": (packed.position + first_position)[None]}

    shifted = [decoder.shift(seq) for seq in target_ids]
    source = Packed(noisy_ids, device)
    target = Packed([inputs for inputs, _ in shifted], device)
    labels = to_device(torch.from_numpy(np.concatenate([labels for _, labels in shifted]).astype(np.int64)), device)

    encoder_lookup = model.get_input_embeddings()
    decoder_weight = decoder.projection_weight
    padding_idx = decoder.body.get_input_embeddings().padding_idx
    tied = TiedGradient()
    if encoder_lookup.weight is decoder_weight:
        # Tied: one lookup for both, whose backward also builds the projection's weight gradient.
        embeds = _Lookup.apply(torch.cat([source.ids, target.ids]), decoder_weight, padding_idx, tied)
        source_embeds, target_embeds = embeds[:len(source.ids)], embeds[len(source.ids):]
    else:
        source_embeds = encoder_lookup(source.ids)
        target_embeds = _Lookup.apply(target.ids, decoder_weight, padding_idx, tied)
    source_embeds, target_embeds = source_embeds[None], target_embeds[None]

    body = decoder.body
    if not t5 and packed_attention.supports(body):
        # Attention per sentence and one-key cross-attention (objectives/packed_attention.py).
        source_spans, target_spans = (packed_attention.SentenceSpans(packed.lengths, device)
                                      for packed in (source, target))
        with packed_attention.sentence_attention(model, body), packed_attention.one_key_cross_attention(body):
            tokens = model(inputs_embeds=source_embeds, sentence_spans=source_spans,
                           **positions(source)).last_hidden_state[0]
            vectors = _sentence_vectors(encoder, source, tokens)
            hidden = decoder.hidden_states(vectors, inputs_embeds=target_embeds, sentence_spans=target_spans,
                                           **positions(target))[0]
        return F.cross_entropy(decoder.logits(hidden, tied).float(), labels)

    source_mask = source.self_attention_mask(model.config, False, source_embeds.dtype)
    tokens = model(inputs_embeds=source_embeds, attention_mask=source_mask,
                   **positions(source)).last_hidden_state[0]
    vectors = _sentence_vectors(encoder, source, tokens)
    hidden = decoder.hidden_states(
        vectors, inputs_embeds=target_embeds,
        attention_mask=target.self_attention_mask(body.config, True, target_embeds.dtype),
        encoder_attention_mask=target.cross_attention_mask(body.config, target_embeds.dtype),
        **positions(target))[0]
    return F.cross_entropy(decoder.logits(hidden, tied).float(), labels)


def _sentence_vectors(encoder: nn.Module, source: Packed, tokens: torch.Tensor) -> torch.Tensor:
    """(1, sentences, hidden): the encoder's modules after the backbone over its packed token outputs."""
    padded, mask = source.padded(tokens)
    features = {"token_embeddings": padded, "attention_mask": mask}
    for module in list(encoder)[1:]:
        features = module(features)
    return features["sentence_embedding"][None]
