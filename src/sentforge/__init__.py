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
    "CrossEncoder": "sentforge.cross_encoder",
    "Encoder": "sentforge.encoder",
    "MetaEncoder": "sentforge.meta.meta_encoder",
    "SentenceClassifier": "sentforge.classification.classifier",
    "SentenceEncoder": "sentforge.encoder",
    "SentforgeError": "sentforge.support.errors",
    "Trainer": "sentforge.training.trainer",
    "TrainingConfig": "sentforge.training.trainer",
    "adapt": "sentforge.adaptation.run",
    "distil_static": "sentforge.scale.static_distil",
    "build_encoder": "sentforge.loading",
    "evaluate": "sentforge.evaluation",
    "evaluate_datasets": "sentforge.evaluation",
    "labels": "sentforge.learning_curve.run",
    "explain": "sentforge.explanation",
    "load": "sentforge.loading",
    "load_cross_encoder": "sentforge.cross_encoder",
    "model_info": "sentforge.loading",
    "train": "sentforge.recipes.api",
    "train_cross_encoder": "sentforge.recipes.cross_encoder",
}

# public modules, reached as attributes too (`sentforge.util.cos_sim`, as `sentence_transformers.util.cos_sim`)
_MODULES = ("util",)

__all__ = [*sorted(_EXPORTS), *_MODULES, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f"sentforge.{name}")
    if name not in _EXPORTS:
        raise AttributeError(f"module 'sentforge' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    """The public names and the module's own dunders, not this file's helpers (importlib, Any, ...)."""
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
