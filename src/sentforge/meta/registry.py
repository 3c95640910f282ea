"""The registry of meta-embedding methods: it collects the `MetaMethod` classes that the method modules
declare (autoencoder.py, average.py, concat.py, gcca.py, svd.py, upprojection.py, one class each), and
`register_method` adds a user's own; `MetaEncoder`, the ablation and the CLI look methods up here by name.
What a method is: meta/base.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError
from sentforge.meta.autoencoder import AutoEncoder
from sentforge.meta.average import Average
from sentforge.meta.base import MetaMethod
from sentforge.meta.concat import Concatenation
from sentforge.meta.gcca import GCCA
from sentforge.meta.svd import SVD
from sentforge.meta.upprojection import UpProjection

METHODS: dict[str, type[MetaMethod]] = {}


def register_method(cls: type[MetaMethod]) -> type[MetaMethod]:
    """Make a method class available by its `method_name`; returns the class, so it also works as a class
    decorator."""
    if cls.method_name in METHODS and METHODS[cls.method_name] is not cls:
        raise ConfigError(f"two meta-embedding methods are named {cls.method_name!r}")
    METHODS[cls.method_name] = cls
    return cls


def method_class(name: str) -> type[MetaMethod]:
    try:
        return METHODS[name]
    except KeyError:
        raise ConfigError(f"unknown meta-embedding method {name!r}; choose from {', '.join(METHODS)}") from None


def method_names() -> list[str]:
    return list(METHODS)


def method_from_saved(config: dict[str, Any], parameters: dict[str, np.ndarray]) -> MetaMethod:
    """A fitted method rebuilt from its saved `config()` and `parameters()`, by the config's method name."""
    return method_class(config.get("method", "")).from_saved(config, parameters)


for _method in (AutoEncoder, Average, Concatenation, GCCA, SVD, UpProjection):
    register_method(_method)
