"""`sentforge train pause`: PAUSE (Cao et al., 2021) from partially labelled sentence pairs.

    sentforge train pause --model MODEL --pairs ../shared/data/senteval/downstream/SNLI \\
        --pairs ../shared/data/senteval/downstream/SICK/SICK_train.txt --label-fraction 0.1 --output pause
    sentforge train sts --model pause --corpus stsb_train.tsv --output pause-stsb   # the paper's STS-B step

A command of the `train` group (cli/train.py) with options of its own (--pairs, --label-fraction, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentforge.cli import train as train_cli
from sentforge.cli.app import DeviceOpt, ModelOpt, OverwriteOpt, SeedOpt
from sentforge.errors import ConfigError


def _priors(text: str | None) -> dict[str, float] | None:
    if not text:
        return None
    pairs = [part.split("=", 1) for part in text.split(",")]
    if any(len(p) != 2 for p in pairs):
        raise ConfigError(f"--priors: expected class=prior,..., got {text!r}")
    try:
        return {name.strip(): float(value) for name, value in pairs}
    except ValueError:
        raise ConfigError(f"--priors: priors must be numbers, got {text!r}") from None


@train_cli.train_app.command("pause")
def pause(
    model: ModelOpt,
    pairs: Annotated[list[Path], typer.Option(help="Pair data, repeat for several: .csv/.tsv/.jsonl (sentence1, "
                                                    "sentence2, label or empty), a SentEval SNLI directory, "
                                                    "SICK_*.txt, GLUE RTE/QNLI .tsv, or a .txt positive-only "
                                                    "list (sentence1<TAB>sentence2).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the trained encoder and training/.")],
    label_fraction: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of each class's labels kept "
                                                                          "(seeded); the rest are unlabelled.")] = 1.0,
    steps: Annotated[int | None, typer.Option(min=1, help="Optimizer steps (default: one epoch).")] = None,
    batch_size: Annotated[int | None, typer.Option(min=1, help="Pairs per batch, drawn in proportion to the "
                                                               "classes and the unlabelled set (paper: 1024).")] = None,
    lr: Annotated[float, typer.Option(help="Peak learning rate (paper: 7.5e-5; decays to 5e-6).")] = 7.5e-5,
    priors: Annotated[str | None, typer.Option(help="Class priors, e.g. entailment=0.4,neutral=0.3,"
                                                        "contradiction=0.3 (default 1/K each).")] = None,
    supervised_only: Annotated[bool, typer.Option(help="Baseline: the same head trained with cross-entropy on "
                                                       "the labelled pairs alone (no PU term, unlabelled dropped).")
                               ] = False,
    anneal_power: Annotated[float, typer.Option(min=0.0, help="p of the PU weight (t/T)^p (paper: 3).")] = 3.0,
    max_seq_length: Annotated[int | None, typer.Option(min=2, help="Truncate texts to this many tokens.")] = None,
    log_every: Annotated[int, typer.Option(min=1)] = 10,
    checkpoint_every: Annotated[int | None, typer.Option(min=1, help="Checkpoint every N steps.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the run in --output from its last checkpoint.")] = False,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Train an encoder with PAUSE on partially labelled pairs (mean pooling, Adam, 10% warm-up)."""
    from sentforge.recipes.api import run_recipe
    from sentforge.training import distributed

    _, summary = run_recipe(
        "pause", model, pairs, output, steps=steps, max_seq_length=max_seq_length, resume=resume,
        overwrite=overwrite, device=device, seed=seed, batch_size=batch_size, lr=lr, log_every=log_every,
        checkpoint_every=checkpoint_every, label_fraction=label_fraction, priors=_priors(priors),
        supervised_only=supervised_only, anneal_power=anneal_power)
    if distributed.is_main_process():
        train_cli.echo_summary(output, summary)
