"""`sentforge explain`: each word's influence on the similarity of two texts."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Optional

import typer

from sentforge.cli.app import DeviceOpt, OverwriteOpt, SeedOpt, app
from sentforge.support.errors import ConfigError

logger = logging.getLogger("sentforge.cli")

_METHODS = {"both": ("deletion", "gradients"), "deletion": ("deletion",), "gradients": ("gradients",)}


@app.command()
def explain(
    model: Annotated[str, typer.Argument(help="Model spec: directory, short name or hub id.")],
    text_a: Annotated[str, typer.Argument(help="The first text.")],
    text_b: Annotated[str, typer.Argument(help="The second text.")],
    top: Annotated[int, typer.Option(min=1, help="Words shown in the table, most influential first.")] = 10,
    html: Annotated[Optional[Path], typer.Option(help="Also write an HTML page with both texts coloured by "
                                                 "influence.")] = None,
    method: Annotated[str, typer.Option(help="deletion (leave one word out; any model), gradients (integrated "
                                        "gradients on the token embeddings; transformers only) or both.")] = "both",
    steps: Annotated[int, typer.Option(min=1, help="Integration steps of integrated gradients.")] = 50,
    baseline: Annotated[str, typer.Option(help="Integrated gradients' path: each (each text from padding, the "
                                          "other kept) or pair (both texts from padding at once).")] = "each",
    batch_size: Annotated[int, typer.Option(min=1)] = 32,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Why does MODEL find TEXT_A and TEXT_B similar? Each whole word's influence on their cosine similarity.

    Deletion: the similarity minus the similarity with that word removed (positive: the word makes the texts
    more alike). Gradients: its integrated-gradients attribution; over a text's words they add up to the
    similarity minus that with the text replaced by padding (--baseline each).
    """
    from sentforge.explanation import explain as explain_pair
    from sentforge.explanation import format_table

    if method not in _METHODS:
        raise ConfigError(f"--method {method!r}: choose deletion, gradients or both")
    if baseline not in ("each", "pair"):
        raise ConfigError(f"--baseline {baseline!r}: choose each or pair")
    result = explain_pair(model, text_a, text_b, methods=_METHODS[method], steps=steps, baseline=baseline,
                          batch_size=batch_size, device=device, seed=seed, html=html, overwrite=overwrite)
    typer.echo(format_table(result, top))
    if html is not None:
        logger.info("wrote %s", html)
