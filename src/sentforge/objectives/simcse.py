"""Unsupervised SimCSE (Gao et al., 2021) and multiple-negatives ranking (MNRL; Henderson et al., 2017,
as in sentence-transformers): both are configurations of the in-batch contrastive loss.

SimCSE: each example is one sentence, encoded twice in the same forward pass so that dropout gives
two different views; the other sentences of the batch are the negatives; temperature 0.05.
MNRL: each example is (anchor, positive[, hard negative]); the other positives (and hard negatives)
of the batch are the negatives; cosine similarity scaled by 20, i.e. temperature 0.05.
"""

from __future__ import annotations

from torch import nn

from sentforge.objectives.contrastive import ContrastiveLoss

# Trainer settings of unsupervised SimCSE with BERT-base (Gao et al., 2021): batch 64, lr 3e-5.
SIMCSE_TRAINING_DEFAULTS = {"optimizer": "adamw", "lr": 3e-5, "batch_size": 64, "schedule": "linear"}
# sentence-transformers' usual MNRL recipe: batch 64, lr 2e-5, 10% warm-up.
MNRL_TRAINING_DEFAULTS = {"optimizer": "adamw", "lr": 2e-5, "batch_size": 64, "schedule": "linear",
                          "warmup_ratio": 0.1}


def simcse(encoder: nn.Module, temperature: float = 0.05) -> ContrastiveLoss:
    """Unsupervised SimCSE over batches of single sentences (the encoder must be in training mode with dropout)."""
    return ContrastiveLoss(encoder, temperature=temperature, similarity="cosine")


def mnrl(encoder: nn.Module, scale: float = 20.0) -> ContrastiveLoss:
    """MultipleNegativesRankingLoss over (anchor, positive[, negative]) tuples: cosine x scale."""
    return ContrastiveLoss(encoder, temperature=1.0 / scale, similarity="cosine")
