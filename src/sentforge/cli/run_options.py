"""The options of the commands that run the budgeted, resumable harness (`adapt`, `labels`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

# No typer bound: the one rule and its message are check_budget_minutes's, for 0 and below alike.
BudgetMinutesOpt = Annotated[float, typer.Option(help="Wall-clock budget of the whole run (> 0).")]


def dev_option(purpose: str) -> Any:
    """--dev, the evaluation data that `purpose` (e.g. "chooses the model")."""
    return Annotated[Path, typer.Option(help=f"Dev set that {purpose}: scored pairs, labelled pairs, re-ranking "
                                             "or class-labelled .jsonl, or a BEIR folder (see sentforge eval "
                                             "--dataset).")]


def output_option(contents: str) -> Any:
    """--output/-o, the directory that receives `contents`."""
    return Annotated[Path, typer.Option("--output", "-o", help=f"Directory for {contents}.")]


# Where the runs train (docs/scale.md): one after another here, or side by side as Ray tasks on a cluster.
EngineOpt = Annotated[str, typer.Option(help="local (one run after another in this process) or ray (each run a "
                                             "task on a Ray cluster, as many at once as it holds).")]
AddressOpt = Annotated[Optional[str], typer.Option(help="The Ray cluster for --engine ray: the head's host:port, "
                                                        "or auto (default: RAY_ADDRESS, or a new local one).")]
CpusPerRunOpt = Annotated[int, typer.Option(min=1, help="CPUs of each run on --engine ray (its torch threads).")]
GpusPerRunOpt = Annotated[float, typer.Option(min=0.0, help="GPUs of each run on --engine ray (a fraction shares "
                                                            "one GPU).")]
