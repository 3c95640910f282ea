"""The `sentforge train` command line of a recipe run, built here for every report that gives one."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from typing import Any


def train_command(recipe: str, model: str | os.PathLike, data: str | os.PathLike, output: str | os.PathLike,
                  options: Iterable[tuple[str, Any] | str] = ()) -> str:
    """`sentforge train RECIPE --model MODEL --<the recipe's data option> DATA --output OUTPUT`, then `options`
    in order: a (setting, value) pair as `--setting value`, a setting alone as the flag `--setting` (setting
    names as in Python: underscores become dashes)."""
    from sentforge.recipes.registry import DATA_OPTIONS, get_recipe

    parts = ["sentforge", "train", recipe, "--model", str(model), f"--{DATA_OPTIONS[get_recipe(recipe).data][0]}",
             str(data), "--output", str(output)]
    for option in options:
        if isinstance(option, str):
            parts.append(_option(option))
        else:
            name, value = option
            parts += [_option(name), str(value)]
    return shlex.join(parts)


def _option(setting: str) -> str:
    return f"--{setting.replace('_', '-')}"
