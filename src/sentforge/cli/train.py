"""`sentforge train METHOD`: one command per recipe of the registry (sentforge.recipes).

Each command has the options every method shares (below), the data option of its data kind (--corpus,
or --pairs for PAUSE) and the method's own options, read from its options dataclass. `train st5`
(cli/st5.py) has a command of its own.
--output receives the trained encoder (a sentence-transformers directory), `train.json` and
`training/` (metrics.jsonl, checkpoints); the encoder of one run is a valid --model for the next:

    sentforge train tsdae --model PRETRAINED --corpus domain.txt --output tsdae        # from a checkpoint
    sentforge train mnrl --model tsdae --corpus labelled_pairs.tsv --output final      # unsupervised -> supervised
    sentforge train pause --model MODEL --pairs nli.jsonl --label-fraction 0.1 --output pause
    sentforge train mnrl --model MODEL --corpus qa.tsv --columns question=sentence1,answer=sentence2 --output qa
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path
from typing import Annotated, Any

import typer

from sentforge.cli.app import DeviceOpt, ModelOpt, OverwriteOpt, SeedOpt, app
from sentforge.recipes.registry import DATA_OPTIONS, Recipe, recipes

train_app = typer.Typer(no_args_is_help=True, help="Adapt or train an encoder: one sub-command per method.")
app.add_typer(train_app, name="train")


def _common(
    model: ModelOpt,
    data: list[Path],  # named and described per data kind: registry.DATA_OPTIONS
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the trained encoder and training/.")],
    steps: Annotated[int | None, typer.Option(min=1, help="Optimizer steps (default: one epoch).")] = None,
    epochs: Annotated[int | None, typer.Option(min=1, help="Epochs instead of steps.")] = None,
    batch_size: Annotated[int | None, typer.Option(min=1, help="Examples per step (default: the method's "
                                                               "paper).")] = None,
    lr: Annotated[float | None, typer.Option(help="Learning rate (default: the method's paper).")] = None,
    optimizer: Annotated[str | None, typer.Option(help="adamw, adam, adafactor or rmsprop.")] = None,
    schedule: Annotated[str | None, typer.Option(help="constant, linear, polynomial, piecewise, "
                                                       "t5-constant-then-linear.")] = None,
    warmup_ratio: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    weight_decay: Annotated[float | None, typer.Option(min=0.0)] = None,
    lr_boundaries: Annotated[str | None, typer.Option(help="Piecewise schedule: steps where the rate "
                                                            "changes, e.g. 500,1000.")] = None,
    lr_factors: Annotated[str | None, typer.Option(help="Piecewise schedule: rate multipliers, one more "
                                                         "than boundaries.")] = None,
    max_grad_norm: Annotated[float, typer.Option(min=0.0, help="Gradient clipping (0: none).")] = 1.0,
    pooling: Annotated[str | None, typer.Option(help="cls, mean or max, or keep (the model's own). Default: "
                                                      "the method's paper.")] = None,
    max_seq_length: Annotated[int | None, typer.Option(min=2, help="Truncate texts to this many tokens.")] = None,
    checkpoint_every: Annotated[int | None, typer.Option(min=1, help="Checkpoint every N steps.")] = None,
    keep_last: Annotated[int, typer.Option(min=1, help="Checkpoints to keep.")] = 2,
    log_every: Annotated[int, typer.Option(min=1)] = 10,
    dev: Annotated[Path | None, typer.Option(help="Dev set (any `sentforge eval --dataset` file): scored every "
                                                  "--eval-every steps (without it: before training and after), "
                                                  "the best-scoring encoder is the one saved.")] = None,
    eval_every: Annotated[int | None, typer.Option(min=1, help="Score on --dev every N steps and at the "
                                                                       "last step.")] = None,
    time_limit: Annotated[float | None, typer.Option(min=0.0, help="Stop cleanly after this many seconds; the "
                                                                   "last step's (or the best) encoder is "
                                                                   "saved.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the run in --output from its last checkpoint.")] = False,
    snapshot_steps: Annotated[str | None, typer.Option(help="Also save the encoder at these steps (comma-separated) "
                                                            "to training/snapshots/step-N.")] = None,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """The options every `train METHOD` command has."""


def _sentence_reading(
    field: Annotated[str | None, typer.Option(help="JSONL corpus field holding the text (default: text).")] = None,
    split: Annotated[bool, typer.Option(help="Split corpus paragraphs into sentences.")] = True,
    min_words: Annotated[int, typer.Option(min=1, help="Drop corpus sentences shorter than this.")] = 3,
    max_words: Annotated[int, typer.Option(min=1, help="Drop corpus sentences longer than this.")] = 128,
) -> None:
    """The options of methods that train on sentences."""


def _column_roles(
    columns: Annotated[str | None, typer.Option(help="The roles of the file's columns, COLUMN=ROLE,...; roles: "
                                                     "sentence1, sentence2, negative, score, label, text "
                                                     "(class-labelled texts). E.g. "
                                                     "anchor=sentence1,positive=sentence2.")] = None,
) -> None:
    """The option of methods that train on pair files."""


def _method_parameters(recipe: Recipe) -> list[inspect.Parameter]:
    """One typer option per field of the recipe's options dataclass (text for a field with a parser)."""
    hints = typing.get_type_hints(recipe.options)
    parameters = []
    for spec in dataclasses.fields(recipe.options):
        meta = spec.metadata
        names = [meta["flag"]] if meta.get("flag") else []
        option = typer.Option(*names, help=meta.get("help"), min=meta.get("min"), max=meta.get("max"))
        kind = str | None if meta.get("parse") else hints[spec.name]
        parameters.append(inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=spec.default,
                                            annotation=Annotated[kind, option]))
    return parameters


def _data_parameter(recipe: Recipe) -> inspect.Parameter:
    name, help_text = DATA_OPTIONS[recipe.data]
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                             annotation=Annotated[list[Path], typer.Option(help=help_text)])


def _run(recipe: Recipe, *, output: Path, lr_boundaries: str | None, lr_factors: str | None,
         dev: Path | None, eval_every: int | None, snapshot_steps: str | None = None, field: str | None = None,
         split: bool = True,
         min_words: int = 3, max_words: int = 128, columns: str | None = None, **settings: Any) -> None:
    from sentforge.support.errors import ConfigError
    from sentforge.recipes.api import run_recipe
    from sentforge.recipes.data import ArgumentNames, SentenceReading, parse_columns
    from sentforge.recipes.options import parse_numbers

    option = DATA_OPTIONS[recipe.data][0]
    data = settings.pop(option)
    if not data:
        raise ConfigError(f"--{option} is required")
    for spec in dataclasses.fields(recipe.options):
        if spec.metadata.get("parse"):
            settings[spec.name] = spec.metadata["parse"](settings[spec.name])
    if eval_every is not None and dev is None:
        raise ConfigError("--eval-every needs --dev: the dev set is scored every --eval-every steps")
    _, summary = run_recipe(
        recipe.name, settings.pop("model"), data, output, dev=dev, eval_every=eval_every,
        reading=SentenceReading(field, split, min_words, max_words),
        columns=None if columns is None else parse_columns(columns, "--columns"),
        argument_names=ArgumentNames(data=f"--{option}", columns="--columns"),
        schedule_boundaries=parse_numbers(lr_boundaries, int, "--lr-boundaries") or None,
        schedule_factors=parse_numbers(lr_factors, float, "--lr-factors") or None,
        snapshots=parse_numbers(snapshot_steps, int, "--snapshot-steps"), **settings)
    from sentforge.support import distributed  # imports torch: after the run, which checked its options first

    if distributed.is_main_process():
        echo_summary(output, summary)


def echo_summary(output: Path, summary: dict[str, Any]) -> None:
    """What was saved, then what ran: the encoder chosen on --dev when it is not the last step's; and a pooling
    that the method changed, which alone moves the trained model's scores."""
    ran = f"{summary['method']}, {summary['steps']} steps{last_loss(summary.get('final_loss'))}"
    best = summary.get("best")
    if best is None or best["step"] == summary["steps"]:
        typer.echo(f"wrote {output}: {ran}")
    else:
        score = f"{best['metric']} {best['value']:.4f}"
        saved = (f"the start encoder, unchanged (it scored best on --dev: {score})" if best["step"] == 0 else
                 f"the encoder of step {best['step']} (it scored best on --dev: {score})")
        typer.echo(f"wrote {output}: {saved}; ran {ran}")
    if summary.get("pooling_before"):
        typer.echo(f"pooling: {summary['pooling_before']} -> {summary['pooling']}, {summary['method']}'s pooling: the "
                   "switch alone changes every score of the model; --pooling keep trains with the start model's")


def last_loss(loss: float | None) -> str:
    """", last step's loss L": the loss of the last step alone (summaries' final_loss), where the log's losses
    are means over --log-every steps."""
    return "" if loss is None else f", last step's loss {loss:.4f} (the log's are means over --log-every steps)"


def register_command(recipe: Recipe) -> None:
    """Add `train NAME` for a recipe (done for every registered recipe when this module is imported)."""
    def command(**options: Any) -> None:
        _run(recipe, **options)

    parameters = [*inspect.signature(_common, eval_str=True).parameters.values()]
    parameters[1] = _data_parameter(recipe)
    extra = _sentence_reading if recipe.data == "sentences" else _column_roles
    parameters[3:3] = inspect.signature(extra, eval_str=True).parameters.values()
    keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in parameters]
    command.__signature__ = inspect.Signature([*keyword[:-3], *_method_parameters(recipe), *keyword[-3:]])
    command.__doc__ = f"{recipe.help} Data: {recipe.data}; pooling: {recipe.pooling} (paper)."
    train_app.command(recipe.name)(command)


for _recipe in recipes():
    register_command(_recipe)
