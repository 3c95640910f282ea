"""`sentforge predict`: classes of a file's texts by a classifier directory (written by `sentforge train setfit`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentforge.cli.app import DeviceOpt, OverwriteOpt, SeedOpt, app


@app.command()
def predict(
    model: Annotated[str, typer.Argument(help="Classifier directory: an encoder with its classification head.")],
    input: Annotated[Path, typer.Argument(help="Texts: .txt (one per line), .jsonl (--field), .csv/.tsv "
                                               "(--column).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Predictions JSON: per text its class and the "
                                         "probability of each class.")],
    field: Annotated[str | None, typer.Option(help="JSONL field of the text (default: text).")] = None,
    column: Annotated[str | None, typer.Option(help="CSV/TSV column of the text (default: text).")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Encoding batch size.")] = 64,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Predict the class of every text of INPUT with a trained classifier."""
    from sentforge.classification.predict import predict_file
    from sentforge.support.seed import set_seed

    set_seed(seed)
    report = predict_file(model, input, output, field=field, column=column, batch_size=batch_size,
                          overwrite=overwrite, device=device)
    typer.echo(f"wrote {output}: {len(report['predictions'])} texts, {len(report['classes'])} classes")
