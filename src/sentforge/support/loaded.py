"""Type checks that import nothing: a command checks its options before it imports the model stack."""

from __future__ import annotations

import sys
from typing import Any


def is_instance(value: Any, module: str, name: str) -> bool:
    """`isinstance(value, module.name)` without importing `module`: an instance of one of its classes exists only
    once the module is imported, so a module not yet imported answers False."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, getattr(loaded, name))
