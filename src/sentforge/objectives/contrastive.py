"""In-batch contrastive loss (InfoNCE / multiple-negatives ranking) with temperature, optional hard
negatives and an optional symmetric term; candidates are gathered across processes under DDP.

Configurations of it: unsupervised SimCSE (examples are single texts, encoded twice with different
dropout; Gao et al., 2021, temperature 0.05), supervised SimCSE / MNRL (anchor, positive, hard
negative triples), Sentence-T5's in-batch sampled softmax (Ni et al., 2022).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from sentforge.support.distributed import gather_with_grad, rank
from sentforge.support.errors import ConfigError

SIMILARITIES = ("cosine", "dot")


class ContrastiveLoss(nn.Module):
    """Cross-entropy over the similarities of each anchor to every candidate in the (global) batch.

    An example is a text (anchor = positive: the same text twice, SimCSE), or a tuple
    `(anchor, positive, *hard_negatives)`; all examples of a batch have the same arity. The candidates
    of every anchor are all positives and all hard negatives of all processes; the positive of anchor
    i is candidate `rank * b + i`. With `symmetric`, the loss also ranks the anchors for each
    positive, and the two directions are averaged.
    """

    def __init__(self, encoder: nn.Module, temperature: float = 0.05, similarity: str = "cosine",
                 symmetric: bool = False, gather_across_processes: bool = True) -> None:
        super().__init__()
        if not 0 < temperature < math.inf:
            raise ConfigError(f"temperature must be positive and finite, got {temperature}")
        if similarity not in SIMILARITIES:
            raise ConfigError(f"similarity must be one of {', '.join(SIMILARITIES)}, got {similarity!r}")
        self.encoder = encoder
        self.temperature = temperature
        self.similarity = similarity
        self.symmetric = symmetric
        self.gather_across_processes = gather_across_processes
        self.last_stats: dict[str, float] = {}

    @staticmethod
    def _columns(batch: Sequence[str | Sequence[str]]) -> list[list[str]]:
        rows = [(example, example) if isinstance(example, str) else tuple(example) for example in batch]
        arity = len(rows[0])
        if arity < 2 or any(len(row) != arity for row in rows):
            raise ConfigError("contrastive examples are texts or tuples (anchor, positive, *negatives) "
                              f"of one arity per batch; got arities {sorted({len(r) for r in rows})}")
        return [list(column) for column in zip(*rows)]

    def _score(self, queries: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        if self.similarity == "cosine":
            queries, candidates = F.normalize(queries, dim=-1), F.normalize(candidates, dim=-1)
        return queries @ candidates.T / self.temperature

    def _gather(self, tensor: torch.Tensor) -> torch.Tensor:
        return gather_with_grad(tensor) if self.gather_across_processes else tensor

    def scores(self, batch: Sequence[str | Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """(anchor-to-candidate logits (b, candidates), target indices (b,), positive-to-anchor logits or None)."""
        columns = self._columns(batch)
        size = len(columns[0])
        embeddings = self.encoder.embed([text for column in columns for text in column])
        anchors, positives, negatives = embeddings[:size], embeddings[size:2 * size], embeddings[2 * size:]
        all_positives = self._gather(positives)
        candidates = torch.cat([all_positives, self._gather(negatives)]) if len(negatives) else all_positives
        offset = rank() * size if all_positives.shape[0] > size else 0
        targets = torch.arange(size, device=anchors.device) + offset
        reverse = self._score(positives, self._gather(anchors)) if self.symmetric else None
        return self._score(anchors, candidates), targets, reverse

    def forward(self, batch: Sequence[str | Sequence[str]]) -> torch.Tensor:
        logits, targets, reverse = self.scores(batch)
        loss = F.cross_entropy(logits, targets)
        if reverse is not None:
            loss = (loss + F.cross_entropy(reverse, targets)) / 2
        with torch.no_grad():
            # A device tensor: the Trainer reads it with the loss, without a sync per step.
            self.last_stats = {"accuracy": (logits.argmax(dim=1) == targets).float().mean(),
                               "candidates": float(logits.shape[1])}
        return loss
