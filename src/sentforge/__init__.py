"""sentforge: learn, combine and evaluate sentence embeddings when labelled data is scarce."""

__version__ = "0.1.0"

from sentforge.encoder import Encoder, SentenceEncoder  # noqa: E402
from sentforge.errors import SentforgeError  # noqa: E402
from sentforge.evaluation import evaluate  # noqa: E402
from sentforge.external import CallableEncoder  # noqa: E402
from sentforge.loading import build_encoder, load  # noqa: E402
from sentforge.meta.meta_encoder import MetaEncoder  # noqa: E402
from sentforge.training.trainer import Trainer, TrainingConfig  # noqa: E402

__all__ = ["CallableEncoder", "Encoder", "MetaEncoder", "SentenceEncoder", "SentforgeError", "Trainer",
           "TrainingConfig", "__version__", "build_encoder", "evaluate", "load"]
