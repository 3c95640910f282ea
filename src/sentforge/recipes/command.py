"""The `sentforge train` command line of a recipe run, built here for every report that gives one (adapt,
labels): the line runs the recipe again with the settings the run used."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from typing import Any


def train_command(recipe: str, model: str | os.PathLike, data: str | os.PathLike, output: str | os.PathLike,
                  options: Iterable[tuple[str, Any]] = ()) -> str:
    """`options` in order: (name, value) pairs, the name in Python spelling (`batch_size` gives
    `--batch-size`); a flag's True gives `--name`, its False `--no-name`; None leaves the option out."""
    from sentforge.recipes.recipe import DATA_OPTIONS
    from sentforge.recipes.registry import get_recipe

    data_option = DATA_OPTIONS[get_recipe(recipe).data][0]
    parts = ["sentforge", "train", recipe, "--model", str(model), f"--{data_option}", str(data),
             "--output", str(output)]
    for name, value in options:
        option = name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(f"--{option}" if value else f"--no-{option}")
        elif value is not None:
            parts += [f"--{option}", str(value)]
    return shlex.join(parts)
