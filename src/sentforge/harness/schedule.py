"""The length of a recipe run that adapt and labels plan alike: a batch no larger than the training rows, and
whole passes over them."""

from __future__ import annotations


def run_length(recipe: str, examples: int, epochs: int, batch_size: int | None = None,
               steps: int | None = None) -> dict[str, int]:
    """{"batch_size": `batch_size` (else the recipe's) no larger than the `examples` training rows, "steps":
    `steps`, else those of `epochs` passes over the rows (at least one step a pass)}."""
    from sentforge.recipes import get_recipe

    batch = min(batch_size or get_recipe(recipe).training["batch_size"], examples)
    return {"batch_size": batch, "steps": steps or epochs * max(examples // batch, 1)}
