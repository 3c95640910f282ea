"""`CrossEncoder`: a transformer that reads two texts at once and gives one relevance score for the pair.

Saved in sentence-transformers' CrossEncoder layout: a Hugging Face sequence-classification directory (one
label) whose config.json names the activation that `predict` applies (`sentence_transformers.activation_fn`,
sigmoid), so `sentence_transformers.CrossEncoder(path).predict(pairs)` gives the same scores.

A new cross-encoder starts from any encoder sentforge loads (`from_encoder`): its transformer's weights, and a
new one-logit head (the classification head of the Hugging Face architecture, seeded).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from sentforge.support.errors import ConfigError, ModelFormatError

logger = logging.getLogger(__name__)

SIGMOID = "torch.nn.modules.activation.Sigmoid"
# A sentence-transformers CrossEncoder records its activation under this key of config.json.
ST_KEY = "sentence_transformers"
DEFAULT_MAX_LENGTH = 256
Pair = tuple[str, str]


class CrossEncoder(nn.Module):
    """A sequence-classification transformer with one logit; `predict` gives sigmoid(logit) per pair."""

    def __init__(self, model: Any, tokenizer: Any, max_length: int = DEFAULT_MAX_LENGTH, name: str = "") -> None:
        super().__init__()
        if getattr(model.config, "num_labels", 1) != 1:
            raise ModelFormatError(f"{name or 'cross-encoder'}: {model.config.num_labels} labels; sentforge's "
                                   "cross-encoders score a pair with one logit")
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.name = name

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    # -- building and loading -------------------------------------------------------------------------

    @classmethod
    def from_encoder(cls, spec: str | Path | Any, max_length: int = DEFAULT_MAX_LENGTH, seed: int = 0,
                     device: str | None = None) -> CrossEncoder:
        """A new cross-encoder from a sentence encoder (a spec `sentforge.load` reads, or an Encoder): its
        transformer's weights and tokenizer, and a seeded one-logit head."""
        from transformers import AutoModelForSequenceClassification

        from sentforge.loading import load
        from sentforge.modules.backbone import HFBackbone, _quiet_transformers
        from sentforge.support.seed import set_seed

        encoder = load(str(spec), device="cpu") if isinstance(spec, (str, Path)) else spec
        backbone = encoder[0] if hasattr(encoder, "__getitem__") else None
        if not isinstance(backbone, HFBackbone) or backbone.model.config.is_encoder_decoder:
            raise ConfigError(f"{spec}: a cross-encoder starts from a Hugging Face encoder (BERT-like); "
                              f"this model's first module is {type(backbone).__name__}")
        one_logit = {"num_labels": 1, "id2label": {0: "LABEL_0"}, "label2id": {"LABEL_0": 0}}
        config = backbone.model.config.__class__.from_dict({**backbone.model.config.to_dict(), **one_logit})
        set_seed(seed)
        with _quiet_transformers():
            model = AutoModelForSequenceClassification.from_config(config)
        base = getattr(model, model.base_model_prefix)
        missing, unexpected = base.load_state_dict(backbone.model.state_dict(), strict=False)
        # The sentence encoder's pooler is unused by the head; some classifiers (BERT) have one, others (MPNet) none.
        missing, unexpected = ([k for k in keys if not k.startswith("pooler.")] for keys in (missing, unexpected))
        if missing or unexpected:
            raise ModelFormatError(f"{spec}: its transformer's weights do not fit {type(model).__name__} "
                                   f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
        length = min(max_length, backbone.max_seq_length) if backbone.max_seq_length else max_length
        made = cls(model, backbone.tokenizer, length, name=str(getattr(encoder, "name", spec)))
        return made.to(device) if device else made

    @classmethod
    def load(cls, path: str | Path, device: str | None = None, max_length: int | None = None) -> CrossEncoder:
        """A cross-encoder directory (sentforge's or sentence-transformers' CrossEncoder layout)."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from sentforge.modules.backbone import check_checkpoint_dir, _quiet_transformers
        from sentforge.modules.base import read_json
        from sentforge.specs.encoders import is_pair_classifier

        path = Path(path)
        if not path.is_dir():
            raise ModelFormatError(f"{path}: no such cross-encoder directory")
        check_checkpoint_dir(path)
        config = read_json(path / "config.json")
        if modules_file_beside(path / "config.json") or not is_pair_classifier(config):
            raise ModelFormatError(f"{path}: not a cross-encoder (config.json's architectures are "
                                   f"{config.get('architectures')}; a cross-encoder is a ...ForSequenceClassification "
                                   "model); give a bi-encoder as --model and a cross-encoder as --reranker")
        activation = (config.get(ST_KEY) or {}).get("activation_fn", SIGMOID)
        if activation not in (SIGMOID, "torch.nn.Sigmoid"):
            raise ModelFormatError(f"{path}: activation {activation}; sentforge reads cross-encoders with a sigmoid")
        with _quiet_transformers():
            model = AutoModelForSequenceClassification.from_pretrained(str(path), use_safetensors=True)
            tokenizer = AutoTokenizer.from_pretrained(str(path))
        limit = getattr(tokenizer, "model_max_length", None) or DEFAULT_MAX_LENGTH
        made = cls(model.eval(), tokenizer, max_length or min(limit, config.get("max_position_embeddings", limit)),
                   name=str(path))
        return made.to(device) if device else made

    def save(self, path: str | Path) -> None:
        """Write the directory that `load` and `sentence_transformers.CrossEncoder(path)` read (safetensors)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        from sentforge.modules.backbone import _quiet_transformers

        setattr(self.model.config, ST_KEY, {"activation_fn": SIGMOID})
        with _quiet_transformers():
            self.model.save_pretrained(str(path), safe_serialization=True)
        self.tokenizer.model_max_length = self.max_length
        self.tokenizer.save_pretrained(str(path))

    # -- scoring ------------------------------------------------------------------------------------------

    def features(self, pairs: Sequence[Pair]) -> dict[str, torch.Tensor]:
        """The tokenised batch of `pairs` (both texts in one sequence, truncated longest first), on the device."""
        batch = self.tokenizer([a for a, _ in pairs], [b for _, b in pairs], padding=True, truncation=True,
                               max_length=self.max_length, return_tensors="pt")
        return {key: value.to(self.device) for key, value in batch.items()}

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        """One logit per pair."""
        return self.model(**features).logits.squeeze(-1)

    @torch.inference_mode()
    def predict(self, pairs: Sequence[Pair], batch_size: int = 32, show_progress_bar: bool | None = None,
                activation: bool = True) -> np.ndarray:
        """Each pair's score: sigmoid of its logit (the raw logit with `activation=False`). Pairs run sorted by
        length, so a batch pads few tokens, and come back in the order given."""
        from tqdm.auto import tqdm

        pairs = [_checked_pair(pair, i) for i, pair in enumerate(pairs)]
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        order = np.argsort([-(len(a) + len(b)) for a, b in pairs], kind="stable")
        was_training = self.training
        self.eval()
        scores = np.empty(len(pairs), dtype=np.float32)
        show = len(pairs) > 4 * batch_size if show_progress_bar is None else show_progress_bar
        try:
            for start in tqdm(range(0, len(pairs), batch_size), desc="pairs", disable=not show, unit="batch"):
                rows = order[start:start + batch_size]
                logits = self(self.features([pairs[i] for i in rows])).float()
                scores[rows] = (torch.sigmoid(logits) if activation else logits).cpu().numpy()
        finally:
            self.train(was_training)
        return scores

    def rank(self, query: str, texts: Sequence[str], top_k: int | None = None, batch_size: int = 32,
             return_texts: bool = False) -> list[dict[str, Any]]:
        """`texts` ranked by their score with `query`, best first: {"corpus_id", "score"[, "text"]} as
        sentence-transformers' `CrossEncoder.rank` gives them."""
        scores = self.predict([(query, text) for text in texts], batch_size=batch_size)
        order = np.argsort(-scores, kind="stable")[:top_k]
        return [{"corpus_id": int(i), "score": float(scores[i]), **({"text": texts[i]} if return_texts else {})}
                for i in order]


def _checked_pair(pair: Any, index: int) -> Pair:
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(t, str) for t in pair)):
        raise ConfigError(f"pair {index}: a cross-encoder scores (text, text) pairs, got {pair!r:.80}")
    return pair[0], pair[1]


def is_cross_encoder_dir(path: str | Path) -> bool:
    """Whether `path` is a cross-encoder directory (a ...ForSequenceClassification config.json)."""
    from sentforge.modules.base import read_json
    from sentforge.specs.encoders import is_pair_classifier

    config = Path(path) / "config.json"
    if modules_file_beside(config) or not config.is_file():
        return False
    try:
        return is_pair_classifier(read_json(config))
    except ModelFormatError:  # an unreadable config is the loader's error to report, not this check's
        return False


def modules_file_beside(config: Path) -> bool:
    """A sentence-transformers bi-encoder directory (modules.json) is never read as a cross-encoder."""
    return (config.parent / "modules.json").is_file()


def load_cross_encoder(path: str | Path, device: str | None = None, max_length: int | None = None) -> CrossEncoder:
    """`sentforge.load_cross_encoder`: a cross-encoder directory, for `predict(pairs)` and `rank(query, texts)`."""
    return CrossEncoder.load(path, device=device, max_length=max_length)
