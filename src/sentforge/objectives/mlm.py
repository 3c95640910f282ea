"""Masked language modelling (Devlin et al., 2019): pre-training from scratch, and the MLM
domain-adaptation baseline of the TSDAE paper (Wang et al., 2021).

15% of the non-special tokens are chosen; of those 80% become [MASK], 10% a random token and 10%
stay as they are; the loss is the cross-entropy of the original token at the chosen positions.

On the CPU, for the BERT and RoBERTa families, the batch runs packed: its real tokens end to end, each
sentence attending only to itself (objectives/packed_attention.py), so no matrix product works on padding;
the padded batch elsewhere. Both compute the same loss and gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoModelForMaskedLM

from sentforge.modules.backbone import T5_FAMILY
from sentforge.objectives.masking import IGNORE_INDEX, MaskedTokenObjective
from sentforge.objectives.packed_attention import packed_token_states
from sentforge.objectives.tsdae_packed import position_start
from sentforge.support.device import to_device
from sentforge.support.errors import ConfigError, ModelFormatError


def mask_tokens(input_ids: torch.Tensor, special: torch.Tensor, mask_token_id: int, vocab_size: int,
                mlm_probability: float = 0.15, mask_ratio: float = 0.8, random_ratio: float = 0.1,
                generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(corrupted input ids, labels with IGNORE_INDEX except at the chosen positions).

    `special` is True where a token may not be chosen (padding, [CLS], [SEP], ...).
    """
    device = input_ids.device
    chance = torch.full(input_ids.shape, mlm_probability, device=device).masked_fill(special, 0.0)
    chosen = torch.bernoulli(chance, generator=generator).bool()
    labels = input_ids.masked_fill(~chosen, IGNORE_INDEX)
    draw = torch.rand(input_ids.shape, generator=generator, device=device)
    to_mask = chosen & (draw < mask_ratio)
    to_random = chosen & (draw >= mask_ratio) & (draw < mask_ratio + random_ratio)
    random_ids = torch.randint(vocab_size, input_ids.shape, generator=generator, device=device)
    corrupted = input_ids.masked_fill(to_mask, mask_token_id)
    corrupted = torch.where(to_random, random_ids, corrupted)
    return corrupted, labels


class MaskedLanguageModeling(MaskedTokenObjective):
    """MLM over the encoder's Hugging Face backbone with a masked-LM head (`*ForMaskedLM`).

    The head is new (random) unless `head_from` names a `*ForMaskedLM` checkpoint whose head to
    reuse; either way the base model inside `self.lm` *is* the encoder's backbone model, so training
    the objective trains the encoder. `self.lm.save_pretrained(dir)` writes a standard checkpoint.
    Defaults: BERT's 15% masking with 80/10/10 replacement. packed: run batches packed (True), padded
    (False), or packed on the CPU where the family allows (None, the default; see the module docstring).
    """

    def __init__(self, encoder: nn.Module, mlm_probability: float = 0.15, mask_ratio: float = 0.8,
                 random_ratio: float = 0.1, max_seq_length: int | None = None,
                 head_from: str | Path | None = None, packed: bool | None = None) -> None:
        if not 0 < mlm_probability < 1 or mask_ratio < 0 or random_ratio < 0 or mask_ratio + random_ratio > 1:
            raise ConfigError("MLM needs 0 < mlm_probability < 1 and mask_ratio + random_ratio <= 1")
        backbone = encoder[0]
        base = getattr(backbone, "model", None)
        tokenizer = getattr(backbone, "tokenizer", None)
        if base is None or tokenizer is None:
            raise ConfigError("MLM needs an encoder over a Hugging Face backbone")
        if tokenizer.mask_token_id is None:
            raise ModelFormatError("MLM needs a tokenizer with a mask token")
        if head_from is not None:
            lm = AutoModelForMaskedLM.from_pretrained(str(head_from))
        else:
            lm = AutoModelForMaskedLM.from_config(base.config)
        setattr(lm, lm.base_model_prefix, base)
        super().__init__(encoder, lm, max_seq_length)
        self.mlm_probability = mlm_probability
        self.mask_ratio = mask_ratio
        self.random_ratio = random_ratio
        self.mask_token_id = tokenizer.mask_token_id
        self.vocab_size = lm.get_output_embeddings().weight.shape[0]
        self.special_ids = torch.tensor(sorted(set(tokenizer.all_special_ids)))
        # BERT's and RoBERTa's heads are one module over the hidden states: apply it only at the
        # masked positions (about 7x less work in the vocabulary projection).
        heads = [m for name, m in lm.named_children() if name != lm.base_model_prefix]
        self._head = heads[0] if len(heads) == 1 else None
        self._first_position = None if base.config.model_type in T5_FAMILY else position_start(base.config)
        if packed and (self._first_position is None or self._head is None):
            raise ConfigError(f"packed MLM batches are not supported for model type {base.config.model_type!r}")
        self.packed = packed

    def packs(self, device: torch.device) -> bool:
        """Whether a batch on `device` runs packed: the setting given, else on the CPU where supported."""
        if self.packed is not None:
            return self.packed
        return self._first_position is not None and self._head is not None and device.type == "cpu"

    def _corrupt(self, texts: Sequence[str], generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        # Masked on the host: the chosen positions are then known without waiting for the device.
        features = self.encoder.tokenize(list(texts), self.max_seq_length)
        input_ids = features["input_ids"]
        special = torch.isin(input_ids, self.special_ids)
        corrupted, labels = mask_tokens(input_ids, special, self.mask_token_id, self.vocab_size,
                                        self.mlm_probability, self.mask_ratio, self.random_ratio, generator)
        chosen = torch.nonzero(labels.reshape(-1) != IGNORE_INDEX).squeeze(1)
        # The chosen positions' rows among the real tokens (the packed batch's order).
        chosen_packed = (features["attention_mask"].reshape(-1).cumsum(0) - 1)[chosen]
        device = self.encoder.device
        return {"input_ids": to_device(corrupted, device),
                "attention_mask": to_device(features["attention_mask"], device),
                "labels": to_device(labels, device), "chosen": to_device(chosen, device),
                "chosen_labels": to_device(labels.reshape(-1)[chosen], device),
                "chosen_packed": to_device(chosen_packed, device),
                "tokens": features["attention_mask"].sum()}

    def _logits_and_labels(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        chosen, labels = inputs["chosen"], inputs["chosen_labels"]  # flat positions, row-major
        if self._head is None:
            logits = self.lm(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).logits
            return logits.reshape(-1, logits.shape[-1]).index_select(0, chosen), labels
        if self.packs(inputs["input_ids"].device):
            hidden = packed_token_states(self.encoder[0].model, self._first_position, inputs["input_ids"],
                                         inputs["attention_mask"])
            return self._head(hidden.index_select(0, inputs["chosen_packed"])), labels
        hidden = self.encoder[0]({"input_ids": inputs["input_ids"],
                                  "attention_mask": inputs["attention_mask"]})["token_embeddings"]
        return self._head(hidden.reshape(-1, hidden.shape[-1]).index_select(0, chosen)), labels

    def forward(self, batch: Sequence[str]) -> torch.Tensor:
        inputs = self._corrupt(batch)
        logits, labels = self._logits_and_labels(inputs)
        # A batch where no token was chosen (tiny texts) contributes a zero loss with a graph.
        loss = F.cross_entropy(logits.float(), labels) if len(labels) else logits.sum() * 0.0
        self.last_stats = {"tokens": float(inputs["tokens"])}  # counted on the host
        return loss

    def evaluate(self, texts: Sequence[str], batch_size: int = 64, seed: int = 0) -> dict[str, float]:
        """Held-out masked-token loss and accuracy with a fixed masking (own generator: the training
        random state is left alone), so that two models are compared on the same masked tokens."""
        generator = torch.Generator().manual_seed(seed)  # masks are drawn on the host
        loss, accuracy, count = self._heldout_scores(texts, batch_size, generator)
        return {"mlm_loss": loss, "mlm_accuracy": accuracy, "masked_tokens": count}
