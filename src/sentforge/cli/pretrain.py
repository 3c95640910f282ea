"""`sentforge pretrain mlm|t5`: a tokenizer and a BERT-like or T5-like model trained from scratch."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from sentforge.cli.app import DeviceOpt, OverwriteOpt, SeedOpt, app


class Objective(str, Enum):
    mlm = "mlm"
    t5 = "t5"


class Size(str, Enum):
    tiny = "tiny"
    small = "small"
    base = "base"


@app.command()
def pretrain(
    objective: Annotated[Objective, typer.Argument(help="mlm: BERT-like masked LM; t5: T5-like span corruption.")],
    corpus: Annotated[list[Path], typer.Option(help="Corpus: a folder of NLTK zips / .txt / .jsonl files, or one "
                                                     "such file. Repeat for several.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the model and the training state.")],
    config: Annotated[Size, typer.Option(help="Model size preset.")] = Size.small,
    steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")] = 1000,
    batch_size: Annotated[int, typer.Option(min=1, help="Sentences per step and process.")] = 64,
    lr: Annotated[Optional[float], typer.Option(help="Peak learning rate (default: 3e-4 mlm, 1e-3 t5).")] = None,
    optimizer: Annotated[str, typer.Option(help="adamw, adam, adafactor or rmsprop.")] = "adamw",
    schedule: Annotated[str, typer.Option(help="constant, linear, polynomial, t5-constant-then-linear.")] = "linear",
    warmup_ratio: Annotated[float, typer.Option(min=0.0, max=1.0)] = 0.05,
    max_seq_length: Annotated[int, typer.Option(min=8, help="Truncate sentences to this many tokens.")] = 128,
    vocab_size: Annotated[Optional[int], typer.Option(min=200, help="Tokenizer vocabulary (default: preset)")] = None,
    heldout: Annotated[int, typer.Option(min=1, help="Sentences held out for evaluation.")] = 1000,
    min_words: Annotated[int, typer.Option(min=1)] = 3,
    max_words: Annotated[int, typer.Option(min=1)] = 128,
    field: Annotated[Optional[str], typer.Option(help="JSONL field holding the text (default: text).")] = None,
    checkpoint_every: Annotated[int, typer.Option(min=1)] = 200,
    keep_last: Annotated[int, typer.Option(min=1)] = 2,
    eval_every: Annotated[Optional[int], typer.Option(min=1, help="Held-out evaluation interval (default: "
                                                                       "steps / 5).")] = None,
    log_every: Annotated[int, typer.Option(min=1)] = 10,
    resume: Annotated[bool, typer.Option(help="Continue the run in --output from its last checkpoint.")] = False,
    threads: Annotated[Optional[int], typer.Option(min=1, help="CPU threads for torch (default: torch's "
                                                                "choice; 1 is faster on a busy machine).")] = None,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Pre-train a model from scratch on a corpus and write a Hugging Face directory to --output."""
    from sentforge.recipes.pretrain import pretrain_corpus

    summary = pretrain_corpus(objective.value, corpus, output, min_words=min_words, max_words=max_words, field=field,
                              resume=resume, overwrite=overwrite, threads=threads, size=config.value, steps=steps,
                              batch_size=batch_size, lr=lr, optimizer=optimizer, schedule=schedule,
                              warmup_ratio=warmup_ratio, max_seq_length=max_seq_length, vocab_size=vocab_size,
                              heldout=heldout, seed=seed, checkpoint_every=checkpoint_every, keep_last=keep_last,
                              eval_every=eval_every, log_every=log_every, device=device)
    if summary:
        typer.echo(f"wrote {output}: {summary['steps']} steps, held-out {summary['heldout']}")
