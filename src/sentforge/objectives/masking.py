"""What the masked-token pre-training objectives (MLM, T5 span corruption) share: the label that marks a
position without a target, the encoder + language model they hold, and the held-out score of the
predicted tokens under a fixed corruption."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from sentforge.support.errors import ConfigError

IGNORE_INDEX = -100


class MaskedTokenObjective(nn.Module, ABC):
    """Base of objectives that corrupt texts and train `lm`, a Hugging Face language model holding the
    encoder's backbone, to predict original tokens. A subclass gives `_corrupt(texts, generator)`, the
    model inputs with `labels` (IGNORE_INDEX where there is nothing to predict), and
    `_logits_and_labels(inputs)`, the logits and labels at the target positions only."""

    def __init__(self, encoder: nn.Module, lm: nn.Module, max_seq_length: int | None) -> None:
        super().__init__()
        lm.tie_weights()  # its output embedding follows the backbone's input embedding put into it
        self.encoder = encoder
        self.lm = lm
        self.max_seq_length = max_seq_length
        self.last_stats: dict[str, float] = {}

    @abstractmethod
    def _corrupt(self, texts: Sequence[str], generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        """Model inputs of a corrupted batch, with `labels`."""

    @abstractmethod
    def _logits_and_labels(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits and labels at the target positions of `inputs`."""

    @torch.no_grad()
    def _heldout_scores(self, texts: Sequence[str], batch_size: int,
                        generator: torch.Generator) -> tuple[float, float, int]:
        """(mean cross-entropy, accuracy, number of targets) over `texts` in eval mode, corrupted with
        `generator` (not the training random state); the training mode is restored afterwards."""
        was_training = self.training
        self.eval()
        total_loss, correct, count = 0.0, 0, 0
        try:
            for start in range(0, len(texts), batch_size):
                inputs = self._corrupt(texts[start:start + batch_size], generator)
                logits, labels = self._logits_and_labels(inputs)
                total_loss += F.cross_entropy(logits.float(), labels, reduction="sum").item()
                correct += (logits.argmax(dim=-1) == labels).sum().item()
                count += len(labels)
        finally:
            self.train(was_training)
        if count == 0:
            raise ConfigError("no token was masked in the evaluation texts")
        return total_loss / count, correct / count, count
