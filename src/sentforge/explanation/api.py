"""`sentforge.explain`: why a model calls two texts similar, word by word."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sentforge.support.errors import ConfigError
from sentforge.explanation.result import Explanation, GradientSummary, TextExplanation, WordInfluence
from sentforge.explanation.words import TokenizedText, tokenize_words

logger = logging.getLogger(__name__)

METHODS = ("deletion", "gradients")


def _check_methods(methods: Sequence[str] | str) -> tuple[str, ...]:
    chosen = (methods,) if isinstance(methods, str) else tuple(methods)
    unknown = [m for m in chosen if m not in METHODS]
    if unknown or not chosen:
        raise ConfigError(f"methods: {', '.join(map(repr, unknown)) or 'none given'}; choose from {', '.join(METHODS)}")
    return tuple(m for m in METHODS if m in chosen)


def _check_text(name: str, text: Any) -> str:
    if not isinstance(text, str):
        raise ConfigError(f"{name} is {type(text).__name__}, expected str")
    if not text.strip():
        raise ConfigError(f"{name} is empty; give a text with at least one word")
    return text


def _text_explanation(text: TokenizedText, deletion: Sequence[float] | None,
                      gradients: Sequence[float] | None) -> TextExplanation:
    words = tuple(
        WordInfluence(word.text, word.start, word.end,
                      deletion=None if deletion is None else float(deletion[i]),
                      gradient=None if gradients is None else float(sum(gradients[p] for p in word.tokens)),
                      unknown=word.unknown)
        for i, word in enumerate(text.words))
    return TextExplanation(text.text, words, None if gradients is None else tuple(gradients), text.words_in_text)


def _warnings(a: TokenizedText, b: TokenizedText) -> tuple[str, ...]:
    """What the explanation cannot show: words past the model's max length, texts of unknown tokens only."""
    found = []
    for side, text in (("a", a), ("b", b)):
        if text.max_tokens is not None:
            found.append(f"text {side} is longer than the model's max length of {text.max_tokens} tokens: "
                         f"{len(text.words)} of its {text.words_in_text} words explained (the model never sees "
                         "the rest)")
    if a.words and b.words and all(w.unknown for w in (*a.words, *b.words)):
        found.append("every word of both texts maps only to the tokenizer's unknown token: the model sees two "
                     "identical texts, whatever they say, so their similarity says nothing about them")
    else:
        for side, text in (("a", a), ("b", b)):
            unknown = [w.text for w in text.words if w.unknown]
            if unknown and len(unknown) == len(text.words):
                found.append(f"every word of text {side} maps only to the tokenizer's unknown token")
    return tuple(found)


def explain(model: Any, text_a: str, text_b: str, *, methods: Sequence[str] | str = METHODS, steps: int = 50,
            baseline: str = "each", batch_size: int = 32, device: str | None = None, seed: int = 0,
            show_progress: bool | None = None, html: str | os.PathLike | None = None,
            overwrite: bool = False) -> Explanation:
    """Each whole word's influence on the cosine similarity of `text_a` and `text_b`.

    `model`: a model spec (directory, short name, ...) or a loaded model. `methods`:
    "deletion" (similarity minus the similarity with that one word removed; any model) and/or
    "gradients" (integrated gradients on the input token embeddings, with `steps` integration points, each
    text from an all-padding baseline with the other kept (`baseline="each"`) or both at once ("pair");
    transformer Encoders only: word-vector and ONNX models raise ConfigError). Words are whole words,
    however many word pieces the tokenizer splits them into. Texts are encoded as written (no prompt).
    A word the tokenizer maps only to its unknown token is marked (`WordInfluence.unknown`); a text cut at
    the model's max length, or two texts of unknown tokens only, give a line in `Explanation.warnings`
    (and a logged warning).
    With `html`, the explanation is also written to that file as a page with both texts coloured by
    influence (`save_html`); the file is locked and checked before any work, and an existing one is
    replaced only with `overwrite` when `explain` wrote it.
    """
    if html is None:
        return _explain(model, text_a, text_b, methods, steps, baseline, batch_size, device, seed, show_progress)
    from sentforge.explanation.render import EXPLAIN, save_html
    from sentforge.support.output_guard import guard_output, output_lock

    with output_lock(html, EXPLAIN, option="--html"):
        spec = model if isinstance(model, (str, os.PathLike)) else None
        guard_output(html, [("model", spec)], EXPLAIN, overwrite, option="--html", file_format="html")
        explanation = _explain(model, text_a, text_b, methods, steps, baseline, batch_size, device, seed,
                               show_progress)
        save_html(explanation, html, overwrite=overwrite)
    return explanation


def _explain(model: Any, text_a: str, text_b: str, methods: Sequence[str] | str, steps: int, baseline: str,
             batch_size: int, device: str | None, seed: int, show_progress: bool | None) -> Explanation:
    from sentforge.encoder import Encoder
    from sentforge.support.seed import set_seed

    chosen = _check_methods(methods)
    text_a, text_b = _check_text("text_a", text_a), _check_text("text_b", text_b)
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
        raise ConfigError(f"steps must be a positive integer, got {steps!r}")
    if baseline not in ("each", "pair"):
        raise ConfigError(f"baseline {baseline!r}: choose each or pair")
    set_seed(seed)
    if isinstance(model, (str, Path)):
        from sentforge.loading import load

        model = load(model, device)
    elif device is not None and isinstance(model, Encoder):
        from sentforge.support.device import parse_device

        model.to(parse_device(device))
    if "gradients" in chosen:
        from sentforge.explanation.gradients import gradient_backbone

        gradient_backbone(model)  # refuse before any work
    a, b = tokenize_words(model, text_a), tokenize_words(model, text_b)
    warnings = _warnings(a, b)
    for warning in warnings:
        logger.warning("%s", warning)
    name = getattr(model, "name", type(model).__name__)

    deletion = None
    if "deletion" in chosen:
        from sentforge.explanation.deletion import deletion_influence

        deletion = deletion_influence(model, a, b, batch_size=batch_size, show_progress=show_progress)
    grads = None
    if "gradients" in chosen:
        from sentforge.explanation.gradients import integrated_gradients

        grads = integrated_gradients(model, a, b, steps=steps, baseline=baseline)
        logger.info("integrated gradients: %d steps, completeness gap %s", steps,
                    ", ".join(f"{gap:.2g}" for gap in grads.completeness_gap))
    if deletion is not None:
        similarity = deletion.similarity
    else:
        from sentforge.explanation.deletion import cosine, encode_plain

        vectors = encode_plain(model, [a.text, b.text], batch_size)
        similarity = cosine(vectors[0], vectors[1])
    summary = None if grads is None else GradientSummary(grads.steps, grads.baseline, grads.similarity,
                                                         grads.baseline_similarity, grads.completeness_gap)
    return Explanation(
        model=name, similarity=similarity,
        a=_text_explanation(a, None if deletion is None else deletion.a, None if grads is None else grads.a),
        b=_text_explanation(b, None if deletion is None else deletion.b, None if grads is None else grads.b),
        methods=chosen, gradients=summary, warnings=warnings)
