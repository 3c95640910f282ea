"""Contrastive Tension (Carlsson et al., 2021): two independent copies of the encoder are trained so
that the dot product of their vectors is high for the same sentence and low for different ones.

Each batch of B sentences becomes B pairs (first copy's input, second copy's input): about one in
K + 1 pairs is positive (the same sentence twice) and the others negative (the sentence against
another of the batch), scored by binary cross-entropy on the dot product. The second copy -- the
encoder passed in -- is the one kept; the first starts as its deep copy. Paper settings: K = 7
negatives per positive, batch 16, RMSprop, learning rate 1e-5 lowered in steps to 2e-6.

Where the encoder cuts training batches by length (`Encoder.splits_by_length`: on the CPU) and its
backbone is of the BERT or RoBERTa family, each copy runs its batch packed instead: all texts end to end
in one call, each attending only to itself (objectives/packed_attention.py), no padding at all.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sentforge.modules.backbone import T5_FAMILY
from sentforge.objectives.host_counter import HostCounter
from sentforge.objectives.packed_attention import packed_sentence_embeddings
from sentforge.objectives.tsdae_packed import position_start
from sentforge.support.distributed import rank
from sentforge.support.errors import ConfigError


class ContrastiveTension(nn.Module):
    def __init__(self, encoder: nn.Module, negatives: int = 7, seed: int = 0) -> None:
        super().__init__()
        if negatives < 1:
            raise ConfigError(f"Contrastive Tension needs at least one negative per positive, got {negatives}")
        self.encoder = encoder  # the second model: trained and kept
        self.first = copy.deepcopy(encoder)
        self.negatives = negatives
        self.seed = seed
        self._pair_draws = HostCounter(self, "pair_draws")
        self.last_stats: dict[str, float] = {}

    def reset_pairs(self, draws: int = 0) -> None:
        """Draw the pairs as after `draws` batches (0: as at the start of training)."""
        self._pair_draws.set(draws)

    def pairs(self, batch: Sequence[str]) -> tuple[list[str], list[str], torch.Tensor]:
        """(first inputs, second inputs, labels): the first B // (K + 1) pairs (at least one) are
        positives, each other sentence meets a random other one of the batch."""
        rng = np.random.default_rng([self.seed, rank(), self._pair_draws.take()])
        size = len(batch)
        positives = max(1, size // (self.negatives + 1))
        partners = [i if i < positives else (i + int(rng.integers(1, size))) % size for i in range(size)]
        second = [batch[j] for j in partners]
        labels = torch.tensor([float(a == b) for a, b in zip(batch, second)])
        return list(batch), second, labels

    def forward(self, batch: Sequence[str]) -> torch.Tensor:
        if len(batch) < 2:
            raise ConfigError("Contrastive Tension needs batches of at least 2 sentences")
        first, second, labels = self.pairs(batch)
        scores = (self._embed(self.first, first) * self._embed(self.encoder, second)).sum(dim=-1)
        self.last_stats = {"positives": float(labels.sum())}  # on the host, before the copy
        labels = labels.to(scores.device, non_blocking=True)
        return F.binary_cross_entropy_with_logits(scores.float(), labels)

    @staticmethod
    def _embed(encoder: nn.Module, texts: list[str]) -> torch.Tensor:
        start = _packing_start(encoder)
        if start is None or not encoder.splits_by_length(encoder.device):
            return encoder.embed(texts)
        return packed_sentence_embeddings(encoder, start, texts)


def _packing_start(encoder: nn.Module) -> int | None:
    """The first position id of the encoder's backbone where it can run packed, else None."""
    model = getattr(encoder[0], "model", None)
    config = getattr(model, "config", None)
    if config is None or config.model_type in T5_FAMILY or not hasattr(encoder[0], "token_ids"):
        return None
    return position_start(config)
