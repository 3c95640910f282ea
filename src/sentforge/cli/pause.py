"""`sentforge train pause`: PAUSE (Cao et al., 2021) from partially labelled sentence pairs.

    sentforge train pause --model MODEL --pairs ../shared/data/senteval/downstream/SNLI \\
        --pairs ../shared/data/senteval/downstream/SICK/SICK_train.txt --label-fraction 0.1 --output pause
    sentforge train sts --model pause --corpus stsb_train.tsv --output pause-stsb   # the paper's STS-B step

A command of the `train` group (cli/train.py) with options of its own (--pairs, --label-fraction, ...).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Annotated

import typer

from sentforge.cli import train as train_cli
from sentforge.cli.app import DeviceOpt, ModelOpt, OverwriteOpt, SeedOpt
from sentforge.errors import ConfigError

logger = logging.getLogger("sentforge.cli")


def _priors(text: str | None, classes: list[str]) -> list[float] | None:
    if not text:
        return None
    pairs = [part.split("=", 1) for part in text.split(",")]
    if any(len(p) != 2 for p in pairs):
        raise ConfigError(f"--priors: expected class=prior,..., got {text!r}")
    try:
        given = {name.strip(): float(value) for name, value in pairs}
    except ValueError:
        raise ConfigError(f"--priors: priors must be numbers, got {text!r}") from None
    if set(given) != set(classes):
        raise ConfigError(f"--priors names {sorted(given)}; the labelled classes are {classes}")
    return [given[name] for name in classes]


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
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Train an encoder with PAUSE on partially labelled pairs (mean pooling, Adam, 10% warm-up)."""
    from sentforge.data.nli import label_fraction as keep_labels
    from sentforge.data.nli import read_nli_pairs
    from sentforge.data.samplers import ProportionalBatches
    from sentforge.encoder import Encoder
    from sentforge.io import check_output_dir, save_json
    from sentforge.loading import load
    from sentforge.objectives.pause import END_LR, PAUSE, TRAINING_DEFAULTS
    from sentforge.seed import set_seed
    from sentforge.training.trainer import Trainer, TrainingConfig

    if anneal_power <= 0:
        raise ConfigError(f"--anneal-power must be positive, got {anneal_power}")
    if lr <= 0:
        raise ConfigError(f"--lr must be positive, got {lr}")
    check_output_dir(output, overwrite)
    examples = [pair for path in pairs for pair in read_nli_pairs(path)]
    examples = keep_labels(examples, label_fraction, seed)
    classes = sorted({label for _, _, label in examples if label is not None})
    if not classes:
        raise ConfigError("no labelled pairs: PAUSE needs at least one labelled pair (raise --label-fraction)")
    labelled = sum(label is not None for _, _, label in examples)
    if supervised_only:
        examples = [pair for pair in examples if pair[2] is not None]
    logger.info("pause: %d pairs, %d labelled, classes %s", len(examples), labelled, ", ".join(classes))
    if overwrite and output.exists():  # only once the input has been read without error
        shutil.rmtree(output)
    set_seed(seed)

    encoder = load(model, device)
    if not isinstance(encoder, Encoder):
        raise ConfigError(f"--model {model}: {type(encoder).__name__} is not trainable")
    encoder = train_cli.with_pooling(encoder, "mean")  # the paper's pooling
    if max_seq_length:
        encoder.max_seq_length = max_seq_length
    batch_size = batch_size or TRAINING_DEFAULTS["batch_size"]
    batches = ProportionalBatches(examples, batch_size, seed)
    total_steps = steps or len(batches)
    objective = PAUSE(encoder, classes, total_steps=total_steps, priors=_priors(priors, classes),
                      anneal_power=anneal_power, use_pu=not supervised_only)
    # The rate decays to the paper's 5e-6 whatever the peak; one proportional batch per process.
    settings = {**TRAINING_DEFAULTS, "lr": lr, "schedule_end_factor": END_LR / lr, "batch_size": 1}
    config = TrainingConfig(output_dir=output / train_cli.TRAINING_DIR, steps=total_steps, seed=seed, device=device,
                            checkpoint_every=checkpoint_every, log_every=log_every, overwrite=True, **settings)
    result = Trainer(encoder, objective, batches, config).train()

    train_cli.save_into(encoder, output)
    save_json(output / train_cli.SUMMARY_FILE, {
        "method": "pause", "model": model, "pooling": "mean", "pairs": [str(p) for p in pairs],
        "examples": len(examples), "labelled": labelled, "classes": classes, "priors": objective.priors,
        "label_fraction": label_fraction, "supervised_only": supervised_only, "batch_size": batch_size,
        "anneal_power": anneal_power,
        "steps": result.steps, "final_loss": result.losses[-1] if result.losses else None,
        "training": config.to_json()})
    typer.echo(f"wrote {output}: pause, {result.steps} steps"
               + (f", final loss {result.losses[-1]:.4f}" if result.losses else ""))
