"""Training recipes: each method declared once (registry.py), run by one function (api.py) into one
kind of run directory (run_dir.py). The CLI, `sentforge.train` and benchmark drivers all use them."""

from sentforge.recipes.registry import RECIPES, BuildContext, Plan, Recipe, get_recipe, recipes, register

__all__ = ["RECIPES", "BuildContext", "Plan", "Recipe", "get_recipe", "recipes", "register"]
