"""The options of the commands that run the budgeted, resumable harness (`adapt`, `labels`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

BudgetMinutesOpt = Annotated[float, typer.Option(min=0.0, help="Wall-clock budget of the whole run.")]


def dev_option(purpose: str) -> Any:
    """--dev, the evaluation data that `purpose` (e.g. "chooses the model")."""
    return Annotated[Path, typer.Option(help=f"Dev set that {purpose}: scored pairs, labelled pairs, re-ranking "
                                             ".jsonl or a BEIR folder (see sentforge eval --dataset).")]


def output_option(contents: str) -> Any:
    """--output/-o, the directory that receives `contents`."""
    return Annotated[Path, typer.Option("--output", "-o", help=f"Directory for {contents}.")]
