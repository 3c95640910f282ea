"""Training objectives: one `nn.Module` per method, built as `Objective(encoder, **config)`, whose
`forward(batch) -> loss` takes a list of examples and returns a scalar tensor (see training/trainer.py)."""

from sentforge.objectives.contrastive import ContrastiveLoss
from sentforge.objectives.mlm import MaskedLanguageModeling
from sentforge.objectives.span_corruption import SpanCorruption

__all__ = ["ContrastiveLoss", "MaskedLanguageModeling", "SpanCorruption"]
