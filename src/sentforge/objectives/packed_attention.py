"""Attention of packed batches for the BERT and RoBERTa families: each sentence attends only to itself,
at the cost of its own length, and TSDAE's decoder cross-attention is computed as what it is.

A packed batch (TSDAE's, objectives/tsdae_packed.py, and MLM's on the CPU) lays the sentences end to end, so
that the matrix products of every layer (and TSDAE's vocabulary projection) see no padding. Attention over
that one long sequence under a block-diagonal mask would cost the square of the whole batch's length (a
batch of eight long texts is one sequence of about 1,000 tokens): here it runs sentence by sentence instead.
Queries, keys and values are scattered into a right-padded (sentences, heads, longest, head size) batch,
attend there (causally in the decoder, where the causal mask alone keeps real positions from the right
padding; under a key-padding mask in the encoder) and are gathered back, which is the padded batch's
attention.

The decoder's cross-attention has one key per sentence, the sentence vector, so its softmax weights
are all 1 (attention dropout makes each 0 or 1 / (1 - p), per token and head): its output is the
output projection of the value of the sentence vector, head by head, and its query and key
projections, whose gradients are exactly zero, need not run. Per sentence and head the projected
value is computed once and each token takes its heads' weighted sum; the query and key weights get no
gradient (the optimiser leaves them as a zero gradient would with no weight decay, the TSDAE recipe's).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from types import MethodType

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from sentforge.support.device import to_device

IMPLEMENTATION = "sentforge_sentence_spans"


class SentenceSpans:
    """Where each token of a packed sequence sits in the right-padded batch of its sentences."""

    def __init__(self, lengths: Sequence[int], device: torch.device) -> None:
        lengths = np.asarray(lengths, dtype=np.int64)
        self.count, self.width = len(lengths), max(1, int(lengths.max()))
        sentence = np.repeat(np.arange(self.count), lengths)
        position = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        # Flat row of each token in (sentences * width), and the key-padding mask of the padded batch.
        self.rows = to_device(torch.from_numpy(sentence * self.width + position), device)
        keys = np.arange(self.width)[None, :] < lengths[:, None]
        self.key_mask = to_device(torch.from_numpy(keys[:, None, None, :]), device)

    def scatter(self, packed: torch.Tensor) -> torch.Tensor:
        """(1, heads, tokens, size) -> (sentences, heads, width, size), zeros at the padding."""
        return self.padded(packed[0].transpose(0, 1)).transpose(1, 2)

    def gather(self, padded: torch.Tensor) -> torch.Tensor:
        """(sentences, heads, width, size) -> (1, tokens, heads, size), the layout attention returns."""
        return self.rows_of(padded.transpose(1, 2))[None]

    def padded(self, rows: torch.Tensor) -> torch.Tensor:
        """(tokens, ...) -> (sentences, width, ...), zeros at the padding."""
        padded = rows.new_zeros((self.count * self.width, *rows.shape[1:])).index_copy(0, self.rows, rows)
        return padded.view(self.count, self.width, *rows.shape[1:])

    @property
    def attention_mask(self) -> torch.Tensor:
        """(sentences, width): 1 at the real tokens."""
        return self.key_mask[:, 0, 0].long()

    def rows_of(self, padded: torch.Tensor) -> torch.Tensor:
        """(sentences, width, ...) -> (tokens, ...): the real positions."""
        return padded.reshape(self.count * self.width, *padded.shape[2:]).index_select(0, self.rows)

    def per_token(self, per_sentence: torch.Tensor) -> torch.Tensor:
        """(sentences, ...) -> (tokens, ...): each token's row of its sentence."""
        return per_sentence.index_select(0, torch.div(self.rows, self.width, rounding_mode="floor"))


def _sentence_attention(module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                        attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
                        sentence_spans: SentenceSpans | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """An attention implementation for transformers: per sentence when a call passes `sentence_spans`,
    transformers' SDPA attention otherwise."""
    if sentence_spans is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    causal = bool(getattr(module, "is_causal", False))
    output = F.scaled_dot_product_attention(
        sentence_spans.scatter(query), sentence_spans.scatter(key), sentence_spans.scatter(value),
        attn_mask=None if causal else sentence_spans.key_mask, dropout_p=dropout, is_causal=causal, scale=scaling)
    return sentence_spans.gather(output), None


AttentionInterface.register(IMPLEMENTATION, _sentence_attention)


def packed_token_states(model: nn.Module, first_position: int, input_ids: torch.Tensor,
                        attention_mask: torch.Tensor) -> torch.Tensor:
    """The backbone's last hidden states at the real tokens of a padded batch (row-major order), computed
    packed: the real tokens end to end, positions restarting at each sentence (`first_position` is the
    family's first position id), attention per sentence."""
    real = attention_mask.bool()
    positions = (real.cumsum(1) - 1)[real] + first_position
    spans = SentenceSpans(real.sum(1).tolist(), input_ids.device)
    with sentence_attention(model):
        return model(input_ids=input_ids[real][None], position_ids=positions[None],
                     sentence_spans=spans).last_hidden_state[0]


def packed_sentence_embeddings(encoder: nn.Module, first_position: int, texts: Sequence[str]) -> torch.Tensor:
    """An encoder's sentence vectors (with gradients) of `texts`, its backbone run packed: the texts' tokens
    end to end, positions restarting at each text, attention per text; the modules after the backbone see
    the tokens in the padded layout they expect."""
    backbone, device = encoder[0], encoder.device
    ids, _ = backbone.token_ids(list(texts))
    lengths = [len(row) for row in ids]
    flat = to_device(torch.from_numpy(np.concatenate(ids).astype(np.int64)), device)
    positions = np.concatenate([np.arange(n) for n in lengths]) + first_position
    spans = SentenceSpans(lengths, device)
    with sentence_attention(backbone.model):
        tokens = backbone.model(input_ids=flat[None], position_ids=to_device(torch.from_numpy(positions), device)[None],
                                sentence_spans=spans).last_hidden_state[0]
    features = {"token_embeddings": spans.padded(tokens), "attention_mask": spans.attention_mask}
    for module in list(encoder)[1:]:
        features = module(features)
    return features["sentence_embedding"]


def supports(model: nn.Module) -> bool:
    """Whether the one-key cross-attention serves the decoder `model`: BERT-like layers, whose self-attention
    goes through transformers' attention interface and whose cross-attention blocks have the layout used here."""
    layers = [m for m in model.modules() if hasattr(m, "crossattention")]
    return bool(layers) and all(_one_key_parts(layer.crossattention) is not None for layer in layers)


def _one_key_parts(block: nn.Module) -> tuple[nn.Module, nn.Module] | None:
    attention, output = getattr(block, "self", None), getattr(block, "output", None)
    if not all(hasattr(attention, name) for name in ("value", "num_attention_heads", "attention_head_size", "dropout")):
        return None
    if not all(hasattr(output, name) for name in ("dense", "dropout", "LayerNorm")):
        return None
    return attention, output


def _one_key_forward(block: nn.Module, hidden_states: torch.Tensor, attention_mask=None,
                     encoder_hidden_states: torch.Tensor | None = None, encoder_attention_mask=None,
                     sentence_spans: SentenceSpans | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """A BERT-like cross-attention block over one key per sentence (see the module docstring), on a
    padded batch (sentences, width, hidden) with vectors (sentences, 1, hidden), or on a packed one
    (1, tokens, hidden) with vectors (1, sentences, hidden) and its `sentence_spans`."""
    attention, output = _one_key_parts(block)
    spans = sentence_spans
    vectors = encoder_hidden_states[0] if spans is not None else encoder_hidden_states[:, 0]
    heads, size = attention.num_attention_heads, attention.attention_head_size
    values = attention.value(vectors).view(len(vectors), heads, size)
    weight = output.dense.weight  # (hidden, heads * size): the output projection, head by head
    per_head = torch.einsum("shd,ohd->sho", values, weight.view(weight.shape[0], heads, size))
    p = attention.dropout.p if attention.training else 0.0
    if p > 0:
        # Each token's heads weighted by their dropped-out attention weight, in the padded layout (one
        # batched product, no per-token copy of the sentence's heads).
        width = spans.width if spans is not None else hidden_states.shape[1]
        kept = F.dropout(per_head.new_ones((len(vectors), width, heads)), p, training=True)
        projected = torch.bmm(kept, per_head)
        projected = spans.rows_of(projected)[None] if spans is not None else projected
    else:
        projected = per_head.sum(1)
        projected = spans.per_token(projected)[None] if spans is not None else projected[:, None, :]
    if output.dense.bias is not None:
        projected = projected + output.dense.bias
    return output.LayerNorm(output.dropout(projected) + hidden_states), None


@contextlib.contextmanager
def sentence_attention(*models: nn.Module) -> Iterator[None]:
    """While the block runs, these models attend per sentence where a call passes `sentence_spans`
    (and as transformers' SDPA attention where one does not)."""
    configs = {id(m.config): m.config for m in models}.values()
    before = [(config, config._attn_implementation) for config in configs]
    try:
        for config, _ in before:
            config._attn_implementation = IMPLEMENTATION
        yield
    finally:
        for config, implementation in before:
            config._attn_implementation = implementation


@contextlib.contextmanager
def one_key_cross_attention(decoder_body: nn.Module) -> Iterator[None]:
    """While the block runs, the decoder's cross-attention blocks run as one-key attention."""
    blocks = [m.crossattention for m in decoder_body.modules() if hasattr(m, "crossattention")]
    try:
        for block in blocks:
            block.forward = MethodType(_one_key_forward, block)
        yield
    finally:
        for block in blocks:
            del block.forward
