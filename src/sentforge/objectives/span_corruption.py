"""T5 span corruption (Raffel et al., 2020): drop random spans (15% of the tokens, mean span length
3), replace each by a sentinel `<extra_id_k>` in the encoder input, and train the decoder to output
`<extra_id_0> span_0 <extra_id_1> span_1 ... </s>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn
from transformers import T5ForConditionalGeneration

from sentforge.support.device import to_device
from sentforge.support.errors import ConfigError, ModelFormatError
from sentforge.modules.backbone import T5_FAMILY
from sentforge.modules.base import pad_ids
from sentforge.objectives.masking import IGNORE_INDEX, MaskedTokenObjective

SENTINEL = "<extra_id_{}>"


def _segment(total: int, parts: int, generator: torch.Generator | None) -> list[int]:
    """Split `total` items into `parts` random positive lengths."""
    cuts = (torch.randperm(total - 1, generator=generator)[:parts - 1] + 1).sort().values.tolist()
    bounds = [0, *cuts, total]
    return [b - a for a, b in zip(bounds, bounds[1:])]


def noise_spans(length: int, noise_density: float = 0.15, mean_span_length: float = 3.0,
                generator: torch.Generator | None = None) -> list[tuple[int, int]]:
    """(start, end) of the noise spans of a sequence of `length` tokens, as T5's `random_spans_noise_mask`:
    round(length * density) noise tokens in round(noise / mean_span_length) spans, alternating with
    non-noise spans and starting with one."""
    if length < 2:
        return []
    n_noise = min(max(int(round(length * noise_density)), 1), length - 1)
    n_spans = max(min(int(round(n_noise / mean_span_length)), n_noise, length - n_noise), 1)
    noise = _segment(n_noise, n_spans, generator)
    keep = _segment(length - n_noise, n_spans, generator)
    spans, position = [], 0
    for kept, dropped in zip(keep, noise):
        position += kept
        spans.append((position, position + dropped))
        position += dropped
    return spans


def corrupt_spans(ids: list[int], spans: list[tuple[int, int]], sentinel_ids: list[int],
                  eos_id: int) -> tuple[list[int], list[int]]:
    """(encoder input, decoder target) of one sequence (without its </s>)."""
    if len(spans) > len(sentinel_ids):
        raise ConfigError(f"{len(spans)} noise spans but only {len(sentinel_ids)} sentinel tokens")
    inputs, targets, position = [], [], 0
    for k, (start, end) in enumerate(spans):
        inputs += ids[position:start] + [sentinel_ids[k]]
        targets += [sentinel_ids[k]] + ids[start:end]
        position = end
    inputs += ids[position:] + [eos_id]
    targets += [eos_id]
    return inputs, targets


class SpanCorruption(MaskedTokenObjective):
    """Span-corruption pre-training of a T5 encoder-decoder whose encoder is the sentence encoder's.

    The encoder's backbone holds a T5 encoder stack (or a whole T5 model); `self.lm` is a
    `T5ForConditionalGeneration` that shares its embedding and encoder stack (and its decoder when the
    backbone has one), with a decoder from `decoder_from` or a new random one.
    `self.lm.save_pretrained(dir)` writes a standard T5 checkpoint. Defaults from T5: 15% noise,
    mean span length 3.
    """

    def __init__(self, encoder: nn.Module, noise_density: float = 0.15, mean_span_length: float = 3.0,
                 max_seq_length: int | None = None, decoder_from: str | Path | None = None) -> None:
        if not 0 < noise_density < 1 or mean_span_length < 1:
            raise ConfigError("span corruption needs 0 < noise_density < 1 and mean_span_length >= 1")
        backbone = encoder[0]
        base = getattr(backbone, "model", None)
        tokenizer = getattr(backbone, "tokenizer", None)
        if base is None or getattr(base.config, "model_type", None) not in T5_FAMILY:
            raise ConfigError("span corruption needs an encoder over a T5 backbone")
        sentinel_ids = tokenizer.convert_tokens_to_ids([SENTINEL.format(k) for k in range(100)])
        if tokenizer.unk_token_id in sentinel_ids or None in sentinel_ids:
            raise ModelFormatError("the tokenizer lacks the T5 sentinel tokens <extra_id_0..99>")
        if decoder_from is not None:
            lm = T5ForConditionalGeneration.from_pretrained(str(decoder_from))
        else:
            lm = T5ForConditionalGeneration(base.config)
        lm.shared = base.shared
        lm.encoder = base.encoder
        if hasattr(base, "decoder"):
            lm.decoder = base.decoder
        super().__init__(encoder, lm, max_seq_length)
        self.noise_density = noise_density
        self.mean_span_length = mean_span_length
        self.sentinel_ids = sentinel_ids
        self.eos_id = tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id

    def _corrupt(self, texts: Sequence[str], generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        ids, _ = self.encoder[0].token_ids(list(texts), self.max_seq_length)
        inputs, targets = [], []
        for seq in ids:
            seq = seq[:-1] if seq and seq[-1] == self.eos_id else seq
            spans = noise_spans(len(seq), self.noise_density, self.mean_span_length, generator)
            source, target = corrupt_spans(seq, spans, self.sentinel_ids, self.eos_id)
            inputs.append(source)
            targets.append(target)
        device = self.encoder.device
        features = pad_ids(inputs, self.pad_id)
        labels = pad_ids(targets, self.pad_id)
        label_ids = labels["input_ids"].masked_fill(labels["attention_mask"] == 0, IGNORE_INDEX)
        self._tokens = sum(map(len, inputs)) + sum(map(len, targets))  # counted on the host
        return {"input_ids": to_device(features["input_ids"], device),
                "attention_mask": to_device(features["attention_mask"], device), "labels": to_device(label_ids, device)}

    def _logits_and_labels(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.lm(**inputs, use_cache=False).logits
        chosen = inputs["labels"] != IGNORE_INDEX
        return logits[chosen], inputs["labels"][chosen]

    def forward(self, batch: Sequence[str]) -> torch.Tensor:
        inputs = self._corrupt(batch)
        loss = self.lm(**inputs, use_cache=False).loss
        self.last_stats = {"tokens": float(self._tokens)}
        return loss

    def evaluate(self, texts: Sequence[str], batch_size: int = 64, seed: int = 0) -> dict[str, float]:
        """Held-out span loss (mean cross-entropy per target token) and target-token accuracy under a
        fixed corruption (own generator), so that two models are compared on the same spans."""
        loss, accuracy, count = self._heldout_scores(texts, batch_size, torch.Generator().manual_seed(seed))
        return {"span_loss": loss, "span_accuracy": accuracy, "target_tokens": count}
