"""The length of a recipe run that adapt and labels plan alike: a batch no larger than the training rows, and
whole passes over them."""

from __future__ import annotations


def fitted_batch(recipe: str, examples: int, batch_size: int | None = None) -> int:
    """The batch size (`batch_size`, else the recipe's) no larger than the `examples` training rows."""
    from sentforge.recipes import get_recipe

    return min(batch_size or get_recipe(recipe).training["batch_size"], examples)


def epoch_steps(examples: int, batch_size: int, epochs: int) -> int:
    """The steps of `epochs` passes over `examples` rows (at least one step a pass)."""
    return epochs * max(examples // batch_size, 1)
