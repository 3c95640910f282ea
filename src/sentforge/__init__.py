"""sentforge: learn, combine and evaluate sentence embeddings when labelled data is scarce.

The public names below are imported on first use, so that `import sentforge` (and the command
line's --help) does not pay for torch and transformers.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "CallableEncoder": "sentforge.specs.external",
    "Encoder": "sentforge.encoder",
    "MetaEncoder": "sentforge.meta.meta_encoder",
    "SentenceClassifier": "sentforge.classification.classifier",
    "SentenceEncoder": "sentforge.encoder",
    "SentforgeError": "sentforge.support.errors",
    "Trainer": "sentforge.training.trainer",
    "TrainingConfig": "sentforge.training.trainer",
    "adapt": "sentforge.adaptation.run",
    "build_encoder": "sentforge.loading",
    "evaluate": "sentforge.evaluation",
    "evaluate_datasets": "sentforge.evaluation",
    "labels": "sentforge.learning_curve.run",
    "explain": "sentforge.explanation",
    "load": "sentforge.loading",
    "model_info": "sentforge.loading",
    "train": "sentforge.recipes.api",
}

__all__ = [*sorted(_EXPORTS), "__version__"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'sentforge' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
