"""Replacing an encoder's pooling: the pooling a method trains with is part of its recipe."""

from __future__ import annotations

import logging

from sentforge.support.errors import ConfigError

logger = logging.getLogger(__name__)


def with_pooling(encoder, mode: str, method: str):
    """The encoder with its pooling module replaced by `mode` pooling, `method`'s (modules after pooling kept), and
    the start model's pooling when it differs (None when unchanged): the summary and the command's last line say
    so, as a change of pooling alone moves the scores of the trained model."""
    from sentforge.modules import Pooling

    index = next((i for i, module in enumerate(encoder) if isinstance(module, Pooling)), None)
    if index is None:
        raise ConfigError(f"--pooling {mode}: the model has no pooling module to replace")
    modules = list(encoder)
    if modules[index].modes == (mode,):
        return encoder, None
    before = ",".join(encoder[index].modes)
    modules[index] = Pooling(modules[index].dim, mode)
    logger.info("pooling: %s -> %s, %s's pooling (--pooling keep keeps the start model's)", before, mode, method)
    return encoder.with_modules(modules), before
