"""`sentforge train st5`: Sentence-T5 (Ni et al., 2022) contrastive training in stages.

    sentforge train st5 --model T5_DIR --pooling encdec-first --projection-dim 256 \\
        --stage qa --qa-data ../shared/data/cqa-qatarliving --qa-data ../shared/data/wikiqa \\
        --qa-data ../shared/data/glue/qqp-partial \\
        --stage nli --nli-data ../shared/data/senteval/downstream/SNLI \\
        --nli-data ../shared/data/senteval/downstream/SICK/SICK_train.txt \\
        --stage-steps 2000,1000 --output st5

--output receives the final encoder, `stage-<i>-<kind>/` (the encoder after each stage) and
`training/` (metrics, checkpoints). The recipe is `sentforge.recipes.sentence_t5.train_sentence_t5`.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from sentforge.cli import train as train_cli
from sentforge.cli.app import DeviceOpt, ModelOpt, OverwriteOpt, SeedOpt
from sentforge.support.errors import ConfigError
from sentforge.recipes.options import parse_numbers


class StageKind(str, Enum):
    qa = "qa"
    nli = "nli"


def _budgets(text: str | None, option: str, count: int) -> list[int | None]:
    """One budget per stage from "N" (every stage) or "N1,N2,..." (one per stage)."""
    if not text:
        return [None] * count
    values = parse_numbers(text, int, option)
    if len(values) == 1:
        values = values * count
    if len(values) != count:
        raise ConfigError(f"{option}: {len(values)} values for {count} stages; give one per stage or one for all")
    if any(value < 1 for value in values):
        raise ConfigError(f"{option}: every value must be >= 1, got {text!r}")
    return list(values)


@train_cli.train_app.command("st5")
def st5(
    model: ModelOpt,
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the encoders and training/.")],
    stage: Annotated[list[StageKind] | None, typer.Option(
        help="Training stages in order; repeat (default: --stage qa --stage nli). qa: question-answer pairs "
              "from --qa-data; nli: (premise, entailment, contradiction) triples from --nli-data.")] = None,
    qa_data: Annotated[list[Path] | None, typer.Option(
        help="Stage qa data; repeat for several: a Qatar Living folder or SemEval Task 3 .xml (comments "
              "labelled Good), a WikiQA folder (train+dev answers labelled 1) or split folder, a QQP .tsv or "
              "folder (duplicates), or a pair table (sentence1, sentence2[, negative]).")] = None,
    nli_data: Annotated[list[Path] | None, typer.Option(
        help="Stage nli data; repeat for several: a SentEval SNLI folder (dev+test), SICK_*.txt, or an NLI "
              "pair table (sentence1, sentence2, label).")] = None,
    pooling: Annotated[str | None, typer.Option(
        help="enc-mean, enc-first or encdec-first (T5); mean or cls (BERT-like). Default: enc-mean / mean; "
              "a sentence-transformers model keeps its own.")] = None,
    projection_dim: Annotated[int | None, typer.Option(
        min=1, help="Size of the projection before L2 normalisation (default: the hidden size; a model "
                     "that has a projection keeps it).")] = None,
    stage_steps: Annotated[str | None, typer.Option(
        help="Optimizer steps per stage, e.g. 2000,1000 (one value: every stage). Default: one epoch.")] = None,
    stage_epochs: Annotated[str | None, typer.Option(help="Epochs per stage instead, e.g. 1,3.")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Examples per step and process (paper: 2048).")] = 64,
    temperature: Annotated[float, typer.Option(min=1e-4, help="Softmax temperature (paper: 0.01).")] = 0.01,
    symmetric: Annotated[bool, typer.Option(help="Also rank the queries for each positive (averaged).")] = False,
    optimizer: Annotated[str | None, typer.Option(help="adafactor or adamw (or adam, rmsprop). Default: "
                                                        "adafactor for T5, adamw for BERT-like.")] = None,
    lr: Annotated[float | None, typer.Option(help="Learning rate (default: 1e-3 adafactor/T5, 2e-5 "
                                                   "adamw/BERT-like).")] = None,
    weight_decay: Annotated[float | None, typer.Option(min=0.0, help="Default: 0 T5, 0.01 BERT-like.")] = None,
    max_grad_norm: Annotated[float, typer.Option(min=0.0, help="Gradient clipping (0: none).")] = 1.0,
    max_seq_length: Annotated[int | None, typer.Option(min=2, help="Truncate texts to this many tokens.")] = None,
    checkpoint_every: Annotated[int | None, typer.Option(min=1, help="Checkpoint every N steps.")] = None,
    keep_last: Annotated[int, typer.Option(min=1, help="Checkpoints to keep per stage.")] = 2,
    log_every: Annotated[int, typer.Option(min=1)] = 10,
    resume: Annotated[bool, typer.Option(help="Continue the run in --output: finished stages are reused, the "
                                               "unfinished one continues from its last checkpoint.")] = False,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Sentence-T5: projection + L2 norm, in-batch contrastive loss with hard negatives, QA then NLI stages."""
    from sentforge.recipes.sentence_t5 import SentenceT5Config, train_sentence_t5
    from sentforge.support import distributed

    kinds = [kind.value for kind in stage or [StageKind.qa, StageKind.nli]]
    if stage_steps and stage_epochs:
        raise ConfigError("give --stage-steps or --stage-epochs, not both")
    config = SentenceT5Config(batch_size=batch_size, temperature=temperature, symmetric=symmetric,
                              optimizer=optimizer, lr=lr, weight_decay=weight_decay,
                              max_grad_norm=max_grad_norm or None, seed=seed, device=device,
                              checkpoint_every=checkpoint_every, keep_last=keep_last, log_every=log_every)
    _, summary = train_sentence_t5(
        model, {"qa": qa_data or [], "nli": nli_data or []}, output, kinds, config,
        steps=_budgets(stage_steps, "--stage-steps", len(kinds)), epochs=_budgets(stage_epochs, "--stage-epochs",
                                                                                   len(kinds)),
        pooling=pooling, projection_dim=projection_dim, max_seq_length=max_seq_length, resume=resume,
        overwrite=overwrite)
    if distributed.is_main_process():
        last = summary["stages"][-1]
        typer.echo(f"wrote {output}: st5 {summary['pooling']}, "
                   + ", ".join(f"{s['stage']} {s['steps']} steps" for s in summary["stages"])
                   + train_cli.last_loss(last.get("final_loss")))
