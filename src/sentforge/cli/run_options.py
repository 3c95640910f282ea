"""The options of the commands that run the budgeted, resumable harness (`adapt`, `labels`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

# No typer bound: the one rule and its message are check_budget_minutes's, for 0 and below alike.
BudgetMinutesOpt = Annotated[float, typer.Option(help="Wall-clock budget of the whole run (> 0).")]


def dev_option(purpose: str) -> Any:
    """--dev, the evaluation data that `purpose` (e.g. "chooses the model")."""
    return Annotated[Path, typer.Option(help=f"Dev set that {purpose}: scored pairs, labelled pairs, re-ranking "
                                             ".jsonl or a BEIR folder (see sentforge eval --dataset).")]


def output_option(contents: str) -> Any:
    """--output/-o, the directory that receives `contents`."""
    return Annotated[Path, typer.Option("--output", "-o", help=f"Directory for {contents}.")]
