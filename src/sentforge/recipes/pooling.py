"""Replacing an encoder's pooling: the pooling a method trains with is part of its recipe."""

from __future__ import annotations

import logging

from sentforge.support.errors import ConfigError

logger = logging.getLogger(__name__)


def with_pooling(encoder, mode: str):
    """The encoder with its pooling module replaced by `mode` pooling (modules after pooling kept)."""
    from sentforge.modules import Pooling

    index = next((i for i, module in enumerate(encoder) if isinstance(module, Pooling)), None)
    if index is None:
        raise ConfigError(f"--pooling {mode}: the model has no pooling module to replace")
    modules = list(encoder)
    if modules[index].modes == (mode,):
        return encoder
    modules[index] = Pooling(modules[index].dim, mode)
    logger.info("pooling: %s -> %s", ",".join(encoder[index].modes), mode)
    return encoder.with_modules(modules)
