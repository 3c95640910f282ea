"""A static model from a sentence encoder (`sentforge distil --static`, `sentforge.distil_static`).

Every token of the encoder's vocabulary goes through the encoder, then PCA and Zipf weighting: model2vec's
`distill_from_model` (the optional extra `sentforge[static]`). Optionally the token vectors are then fitted
to the encoder's own vectors of the user's texts (`static_fit.py`). The result is saved as
sentence-transformers' StaticEmbedding (tokenizer.json, `embedding.weight`) with a Normalize module, the
layout that `SentenceTransformer(path)` and `sentforge.load` read alike. With a time limit the call fits
into a budget: the fit stops at the deadline, and is skipped when the distillation used it up.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sentforge.encoder import Encoder
from sentforge.modules import Normalize, Pooling, Transformer
from sentforge.modules.token_vectors import TokenVectors
from sentforge.scale.static_fit import FitResult, fit_token_vectors
from sentforge.support.errors import ConfigError
from sentforge.support.output_guard import guard_output, locked_output

logger = logging.getLogger(__name__)

DISTIL = "distil"  # the command family named in the output marker and the lock
# The encoder's pooling -> model2vec's pooling of each token's outputs.
_POOLING = {("mean",): "mean", ("cls",): "first"}
# The share of the time left after the distillation that the teacher may spend encoding the fit texts.
_TEACHER_SHARE = 0.5
# Texts the teacher encodes between two looks at the clock.
_TEACHER_CHUNK = 1024


@dataclass(frozen=True)
class StaticDistillation:
    """A saved static model: where, the encoder, the texts it was fitted on (0: not fitted), the fit (None:
    not fitted) and the seconds the call took."""

    path: Path
    encoder: Encoder
    fitted_texts: int
    fit: FitResult | None
    seconds: float


def _model2vec_pooling(encoder: Encoder) -> str:
    modules = list(encoder)
    after = modules[2:]
    if (len(modules) < 2 or type(modules[0]) is not Transformer or not isinstance(modules[1], Pooling)
            or modules[1].modes not in _POOLING or not all(isinstance(m, Normalize) for m in after)):
        names = " -> ".join(type(m).__name__ for m in modules)
        raise ConfigError(f"a static model is distilled from a Transformer with mean or CLS pooling (and "
                          f"optionally Normalize); {encoder.name!r} is {names}")
    return _POOLING[modules[1].modes]


def _distil_token_vectors(encoder: Encoder, pca_dims: int, device: str | None) -> TokenVectors:
    try:
        from model2vec.distill import distill_from_model
    except ImportError:
        raise ConfigError("a static model needs model2vec: pip install 'sentforge[static]'") from None
    backbone = encoder[0]
    dims = min(pca_dims, backbone.output_dim)
    static = distill_from_model(backbone.model, backbone.tokenizer, pca_dims=dims, device=device or "cpu",
                                quantize_to="float32", pooling=_model2vec_pooling(encoder))
    backbone.model.to(encoder.device)  # model2vec moves the model to its device
    return TokenVectors(static.tokenizer, static.embedding)


def _teacher_vectors(encoder: Encoder, texts: list[str], deadline: float | None, batch_size: int):
    """The teacher's unit vectors of `texts`, in chunks until the deadline: those of the texts encoded."""
    import numpy as np

    chunks = []
    for start in range(0, len(texts), _TEACHER_CHUNK):
        if deadline is not None and time.monotonic() >= deadline:
            logger.info("teacher encoding stopped at its time share after %d of %d texts", start, len(texts))
            break
        chunks.append(encoder.encode(texts[start:start + _TEACHER_CHUNK], batch_size=batch_size, normalize=True,
                                     show_progress=False))
    return np.concatenate(chunks) if chunks else np.empty((0, encoder.dim), dtype=np.float32)


def _start_vectors(start: Encoder | str | os.PathLike) -> TokenVectors:
    if isinstance(start, (str, os.PathLike)):
        from sentforge.loading import load

        start = load(start)
    if not isinstance(start, Encoder) or not isinstance(start[0], TokenVectors):
        raise ConfigError(f"the start of the fit must be a static model (a StaticEmbedding of token vectors); "
                          f"{getattr(start, 'name', start)!r} is not")
    return start[0]


def _read_fit_texts(texts: Sequence[str] | str | os.PathLike, field: str | None) -> list[str]:
    if isinstance(texts, (str, os.PathLike)):
        from sentforge.data.texts import read_texts

        texts = read_texts(texts, field)
    distinct = list(dict.fromkeys(text for text in texts if text.strip()))
    if len(distinct) < 2:
        raise ConfigError(f"--texts: {len(distinct)} distinct non-blank texts; fitting needs at least 2")
    return distinct


@locked_output(DISTIL)
def distil_static(encoder: Encoder | str | os.PathLike, output: str | os.PathLike, *,
                  texts: Sequence[str] | str | os.PathLike | None = None, field: str | None = None,
                  start: Encoder | str | os.PathLike | None = None, pca_dims: int = 256, epochs: int = 10,
                  lr: float = 3e-3, time_limit: float | None = None, batch_size: int = 32,
                  device: str | None = None, overwrite: bool = False, seed: int = 0) -> StaticDistillation:
    """Distil a static model from `encoder` (an Encoder or a model spec) into the directory `output`.

    texts: the user's unlabelled texts (a list, or a .txt/.jsonl/.csv/.tsv file, `field` its JSONL field or
    column) to fit the static model to the encoder's vectors of them, for `epochs` epochs at Adam's `lr`;
    None: no fit (model2vec's distillation alone, `pca_dims` dimensions). A fitted model has the encoder's
    dimension. start: a static model (directory or Encoder: a distillation saved before, a model2vec or
    potion directory) to fit instead of distilling one; it needs `texts`. time_limit: seconds for the whole
    call, checked between steps (the distillation itself runs whole): the encoder encodes the texts for at
    most half the time left after the distillation, the fit stops at the limit. batch_size: the encoder's
    batch size on the texts. The output is checked before the model loads and written whole, under the rules
    of every writing command (`--overwrite` for its own output).
    """
    from sentforge.support.seed import set_seed

    started = time.monotonic()
    deadline = None if time_limit is None else started + time_limit
    if time_limit is not None and time_limit <= 0:
        raise ConfigError(f"time_limit must be positive, got {time_limit}")
    for name, value in (("pca_dims", pca_dims), ("epochs", epochs)):
        if value < 1:
            raise ConfigError(f"{name} must be at least 1, got {value}")
    if start is not None and texts is None:
        raise ConfigError("--from-static: a static model to fit needs the texts to fit it on (--texts)")
    source = str(encoder) if isinstance(encoder, (str, os.PathLike)) else None
    file = texts if isinstance(texts, (str, os.PathLike)) else None
    start_dir = start if isinstance(start, (str, os.PathLike)) else None
    output = guard_output(output, [("model", source), ("--texts", file), ("--from-static", start_dir)], DISTIL,
                          overwrite)
    fit_texts = None if texts is None else _read_fit_texts(texts, field)
    set_seed(seed)
    if source is not None:
        from sentforge.loading import load

        encoder = load(source, device=device)
    if start is None:
        _model2vec_pooling(encoder)  # refused before the distillation runs
    vectors = _distil_token_vectors(encoder, pca_dims, device) if start is None else _start_vectors(start)
    fit, fitted = None, 0
    if fit_texts is not None:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            logger.warning("the time limit was used up by the distillation: the static model is not fitted")
        else:
            share = None if deadline is None else now + _TEACHER_SHARE * (deadline - now)
            targets = _teacher_vectors(encoder, fit_texts, share, batch_size)
            fitted = len(targets)
            if fitted >= 2:
                fit = fit_token_vectors(vectors, fit_texts[:fitted], targets, epochs=epochs, lr=lr,
                                        deadline=deadline, seed=seed)
                vectors = fit.vectors
    origin = f"distilled from {encoder.name}" if start is None else f"of {getattr(start, 'name', start)}"
    fitted_to = f", fitted to the vectors of {encoder.name} on {fitted} texts" if fit else ""
    card = dataclasses.replace(encoder.card, description=f"Static token vectors {origin}{fitted_to}")
    static = Encoder([vectors, Normalize()], name=str(output), card=card)
    static.save(output, overwrite=overwrite, kind=DISTIL)
    return StaticDistillation(output, static, fitted if fit else 0, fit, time.monotonic() - started)
