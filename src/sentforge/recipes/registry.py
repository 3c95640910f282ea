"""The registry of training recipes: it collects the recipes that recipes/methods.py, pause.py,
distillation.py and setfit.py declare (their `RECIPES` tuples), and `register` adds a user's own; everything else (the
Python API, the CLI, benchmark drivers) reads it. What a recipe is: recipes/recipe.py.
"""

from __future__ import annotations

from sentforge.support.errors import ConfigError
from sentforge.recipes import distillation, methods, pause, setfit
# The recipe vocabulary is part of this module's public names.
from sentforge.recipes.recipe import DATA_KINDS, DATA_OPTIONS, BuildContext, Plan, Recipe  # noqa: F401

RECIPES: dict[str, Recipe] = {}


def register(recipe: Recipe) -> Recipe:
    if recipe.name in RECIPES:
        raise ConfigError(f"a recipe named {recipe.name!r} is already registered")
    RECIPES[recipe.name] = recipe
    return recipe


def get_recipe(name: str) -> Recipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise ConfigError(f"unknown training method {name!r}; choose one of {', '.join(RECIPES)}") from None


def recipes() -> list[Recipe]:
    return list(RECIPES.values())


for _recipe in (*distillation.RECIPES, *methods.RECIPES, *pause.RECIPES, *setfit.RECIPES):
    register(_recipe)
