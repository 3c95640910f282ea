"""Declaring a recipe's own options: a dataclass field with the paper's default and a help line.

    @dataclass
    class TSDAEOptions:
        noise_ratio: float = option(0.6, "share of words hit", min=0.0, max=1.0)

The help line and bounds become the method's command-line options (cli/train.py); `flag` names a
boolean's two forms ("--tied/--untied"); `parse` turns the option's text into a value of a type the
command line cannot take directly (e.g. a dict).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import field, fields
from typing import Any

from sentforge.support.errors import ConfigError


def option(default: Any, help: str, *, min: float | None = None, max: float | None = None,
           flag: str | None = None, parse: Callable[[str], Any] | None = None) -> Any:
    return field(default=default, metadata={"help": help, "min": min, "max": max, "flag": flag, "parse": parse})


def checked(options: Any) -> Any:
    """`options` after checking every bounded field (the Python API's counterpart of typer's min/max)."""
    for spec in fields(options):
        value = getattr(options, spec.name)
        low, high = spec.metadata.get("min"), spec.metadata.get("max")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        if not math.isfinite(value):
            raise ConfigError(f"{spec.name} (--{spec.name.replace('_', '-')}): {value} is not a finite number")
        if (low is not None and value < low) or (high is not None and value > high):
            raise ConfigError(f"{spec.name} (--{spec.name.replace('_', '-')}): {value} is outside "
                              f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]")
    return options


def parse_numbers(text: str | None, kind: type, option_name: str) -> tuple:
    """Comma-separated numbers of a command-line option ("500,1000") as a tuple."""
    if not text:
        return ()
    try:
        return tuple(kind(part) for part in text.split(","))
    except ValueError:
        raise ConfigError(f"{option_name}: expected comma-separated numbers, got {text!r}") from None
