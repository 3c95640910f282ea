"""`sentforge train cross-encoder`: a cross-encoder trained on labelled pairs (sentforge.train_cross_encoder).

    sentforge train cross-encoder --model all-MiniLM-L6-v2 --labelled pairs.jsonl --output ce
    sentforge eval --model all-MiniLM-L6-v2 --reranker ce --dataset dev.jsonl --output r.json
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from sentforge.cli.app import DeviceOpt, ModelOpt, OverwriteOpt, SeedOpt
from sentforge.cli.train import last_loss, train_app



@train_app.command("cross-encoder")
def cross_encoder(
    model: ModelOpt,
    labelled: Annotated[list[Path], typer.Option(help="Labelled pairs, repeat for several: .csv/.tsv/.jsonl with "
                                                      "sentence1, sentence2 and a 0/1 label (or a score in [0, 1]); "
                                                      "rows without a label are left out.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the cross-encoder and training/.")],
    epochs: Annotated[int, typer.Option(min=1, help="Epochs over the examples.")] = 4,
    steps: Annotated[Optional[int], typer.Option(min=1, help="Optimizer steps instead of epochs.")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Pairs per step.")] = 16,
    lr: Annotated[float, typer.Option(help="Learning rate.")] = 5e-5,
    warmup_ratio: Annotated[float, typer.Option(min=0.0, max=0.99)] = 0.1,
    max_length: Annotated[int, typer.Option(min=8, help="Tokens of both texts together.")] = 256,
    negatives: Annotated[int, typer.Option(min=0, help="In-pool negatives added per label-1 pair (a random "
                                                       "second text of another group).")] = 1,
    symmetric: Annotated[bool, typer.Option(help="Also train on each pair in the other order (duplicate "
                                                 "questions, paraphrases).")] = False,
    pos_weight: Annotated[float, typer.Option(help="Weight of the positive term of the loss.")] = 1.0,
    time_limit: Annotated[Optional[float], typer.Option(min=0.0, help="Stop cleanly after this many "
                                                                      "seconds.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the run in --output from its last checkpoint.")] = False,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """A cross-encoder (both texts read together, one score per pair) from an encoder's transformer, trained
    with binary cross-entropy on labelled pairs; saved in sentence-transformers' CrossEncoder layout."""
    from sentforge.recipes.cross_encoder import run_cross_encoder
    from sentforge.recipes.data import ArgumentNames

    _, summary = run_cross_encoder(model, labelled, output, steps=steps, time_limit=time_limit, resume=resume,
                                   overwrite=overwrite, device=device, seed=seed,
                                   argument_names=ArgumentNames(data="--labelled", columns="--columns"),
                                   epochs=epochs, batch_size=batch_size, lr=lr, warmup_ratio=warmup_ratio,
                                   max_length=max_length, negatives=negatives, symmetric=symmetric,
                                   pos_weight=pos_weight)
    typer.echo(f"wrote {output}: cross-encoder, {summary['steps']} steps on {summary['examples']} pairs"
               f"{last_loss(summary.get('final_loss'))}")
