"""`sentforge distil --static`: a static model (one vector per token) distilled from a sentence encoder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from sentforge.cli.app import DEFAULT_MODEL, DeviceOpt, ModelOpt, OverwriteOpt, SeedOpt, app
from sentforge.support.errors import ConfigError


@app.command()
def distil(
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory to write.")],
    static: Annotated[bool, typer.Option("--static", help="Distil a static model (required: the one kind this "
                                         "command makes; `sentforge train distil` distils into a transformer).")
                      ] = False,
    model: ModelOpt = DEFAULT_MODEL,
    texts: Annotated[Optional[Path], typer.Option(
        help="Your unlabelled texts (.txt one per line, .jsonl, .csv, .tsv): fit the static model to the "
             "model's vectors of them (default: no fit).")] = None,
    field: Annotated[Optional[str], typer.Option(help="JSONL field or CSV/TSV column of the texts "
                                                      "(default: text).")] = None,
    from_static: Annotated[Optional[Path], typer.Option(
        help="Fit this static model (a directory: one saved before, a model2vec or potion model) to the model's "
             "vectors of --texts instead of distilling one.")] = None,
    pca_dims: Annotated[int, typer.Option(min=1, help="Dimensions of the distilled vectors (PCA); a fitted "
                                                      "model has the model's own dimension.")] = 256,
    epochs: Annotated[int, typer.Option(min=1, help="Epochs of the fit over --texts.")] = 10,
    lr: Annotated[float, typer.Option(min=0.0, help="Adam learning rate of the fit.")] = 3e-3,
    time_limit: Annotated[Optional[float], typer.Option(
        min=0.0, help="Seconds for the whole distillation; the fit stops at the limit.")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="The model's encoding batch size on --texts.")] = 32,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Distil a static model from a sentence encoder: every token through the encoder (model2vec), optionally
    fitted to the encoder's vectors of your texts; saved as a sentence-transformers StaticEmbedding."""
    from sentforge.scale.static_distil import distil_static

    if not static:
        raise ConfigError("--static: the one kind of distillation this command makes; "
                          "`sentforge train distil --teacher MODEL` distils into a transformer")
    result = distil_static(model, output, texts=texts, field=field, start=from_static, pca_dims=pca_dims,
                           epochs=epochs, lr=lr, time_limit=time_limit, batch_size=batch_size, device=device,
                           overwrite=overwrite, seed=seed)
    fitted = (f", fitted on {result.fitted_texts} texts (mean cosine to the model {result.fit.cosine_before:.3f} "
              f"-> {result.fit.cosine_after:.3f})" if result.fit else "")
    typer.echo(f"wrote {result.path}: {result.encoder.dim}-dimensional static model{fitted} "
               f"({result.seconds:.0f} s)")
