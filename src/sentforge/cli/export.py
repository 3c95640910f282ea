"""`sentforge export`: a model as an ONNX directory (fp32 or int8) that `sentforge.load` reads."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentforge.cli.app import OverwriteOpt, SeedOpt, app


@app.command()
def export(
    model: Annotated[str, typer.Argument(help="Model spec: directory or short name.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory to write.")],
    format: Annotated[str, typer.Option("--format", help="onnx (fp32) or int8 (dynamic quantization).")] = "int8",
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Export a model's Transformer backbone to ONNX Runtime, optionally quantized to int8."""
    from sentforge.scale.export import export_encoder

    export_encoder(model, output, format, overwrite=overwrite, seed=seed)
