"""`sentforge.train`: run one recipe from Python and get the trained encoder back.

    import sentforge
    encoder = sentforge.train("tsdae", "bert-base-uncased", "domain.txt", "tsdae-model", steps=1000)
    encoder = sentforge.train("mnrl", "tsdae-model", [("a question", "its answer"), ...], "final",
                              evaluator=dev_task, eval_every=100, select="map")
    encoder = sentforge.train("mnrl", "tsdae-model", "qa.tsv", "final", columns={"question": "sentence1",
                                                                              "answer": "sentence2"})

Keyword settings are the method's own options (its dataclass in the registry, e.g. `noise_ratio`)
or TrainingConfig values (`batch_size`, `lr`, `schedule`, ...); unset ones take the paper's values.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sentforge.support.errors import ConfigError
from sentforge.support.output_guard import locked_output
from sentforge.recipes.data import PYTHON_ARGUMENTS, ArgumentNames, SentenceReading, data_paths, read_examples
from sentforge.recipes.options import checked
from sentforge.recipes.registry import DATA_OPTIONS, BuildContext, Recipe, get_recipe
from sentforge.recipes.run_dir import TRAIN, TRAINING_DIR, RunDirectory
from sentforge.recipes.summary import record_on_card, run_summary

logger = logging.getLogger(__name__)

# TrainingConfig fields a caller may set; the rest belong to the run directory or are derived.
TRAINING_SETTINGS = ("batch_size", "gradient_accumulation", "optimizer", "lr", "weight_decay", "optimizer_options",
                     "schedule", "warmup_steps", "warmup_ratio", "schedule_power", "schedule_end_factor",
                     "schedule_boundaries", "schedule_factors", "max_grad_norm", "mixed_precision",
                     "group_by_length", "log_every", "checkpoint_every", "keep_last", "time_limit",
                     "show_progress")


def train(method: str, model: str | os.PathLike | Any, data: Any, output: str | os.PathLike, **settings: Any) -> Any:
    """Train `model` with `method` on `data`, write the run directory `output`, return the trained
    encoder; the settings are those of `run_recipe`."""
    return run_recipe(method, model, data, output, **settings)[0]


@locked_output(TRAIN)
def run_recipe(method: str, model: str | os.PathLike | Any, data: Any, output: str | os.PathLike, *,
               steps: int | None = None, epochs: int | None = None, pooling: str | None = None,
               max_seq_length: int | None = None, reading: SentenceReading | None = None,
               columns: Mapping[str, str] | None = None, argument_names: ArgumentNames = PYTHON_ARGUMENTS,
               evaluator: Any = None, eval_every: int | None = None, select: str | None = None,
               select_mode: str = "max", dev: str | os.PathLike | None = None,
               callbacks: Sequence[Callable[[Any], None]] = (), snapshots: Sequence[int] = (),
               resume: bool = False, overwrite: bool = False, device: str | None = None, seed: int = 0,
               **settings: Any) -> tuple[Any, dict[str, Any]]:
    """Train `model` with `method` on `data` and write the run directory `output`; returns the trained
    encoder and the run summary (what `train.json` holds).

    model: a model spec (directory, short name, hub id) or an Encoder. data: a path, a list of Paths,
    or the examples in memory: tuples, a `datasets.Dataset`, dicts, InputExamples (see recipes/data.py).
    columns: the roles of the data's columns, {"column name": role} (roles: sentence1, sentence2, negative,
    score, label). argument_names: how errors name `data` and `columns` (the CLI gives its options).
    pooling: cls, mean, max or keep (default: the method's paper). evaluator / eval_every: run on the
    encoder every `eval_every` steps (a callable `encoder -> metrics` or an evaluation Task; without
    eval_every, before the first step and after the last); with `select` (a metric name, higher is better unless
    `select_mode="min"`) the best evaluated encoder is the one saved and returned. dev: a dev file (any file
    that `sentforge.evaluation.load_dataset` reads), read first: its task is the evaluator and its main
    metric `select`. `time_limit`
    (seconds) stops training cleanly; the encoder of the last step (or the best one) is saved.
    snapshots: steps at which the encoder is also saved, to `output/training/snapshots/step-N`.
    """
    from sentforge.support.loaded import is_instance
    from sentforge.support.seed import check_seed
    from sentforge.training.config import TrainingConfig

    # The settings are checked before the model stack is imported (a dev file is read as a task: it imports it).
    check_seed(seed, "seed (--seed)")
    if dev is not None:
        evaluator, select = _dev_evaluator(dev, output, evaluator, select)
    recipe = get_recipe(method)
    options, training = _split_settings(recipe, settings)
    if steps is not None and epochs is not None:
        raise ConfigError("give steps or epochs (--steps, --epochs), not both")
    if select is not None and evaluator is None:
        raise ConfigError("selecting the best encoder (select=) needs an evaluator")
    if eval_every is not None and evaluator is None:
        raise ConfigError("eval_every (--eval-every) needs an evaluator (--dev)")
    given = is_instance(model, "sentforge.encoder", "Encoder")
    spec = model.name if given else str(model)
    paths = data_paths(data)
    data_option = f"--{DATA_OPTIONS[recipe.data][0]}"
    run = RunDirectory(output, resume=resume, overwrite=overwrite, model=None if given else spec,
                       inputs=[(data_option, path) for path in paths])
    run.check()
    # The training settings are checked before any data is read or any model loads.
    TrainingConfig(output_dir=run.work, **({"steps": steps} if steps is not None else {"epochs": epochs or 1}),
                   **_with_defaults(recipe, dict(training), device))
    examples = read_examples(recipe.data, data, reading, columns, argument_names)
    from sentforge.encoder import Encoder
    from sentforge.loading import load
    from sentforge.recipes.best import KeepBest
    from sentforge.recipes.pooling import with_pooling
    from sentforge.support import distributed
    from sentforge.support.seed import set_seed
    from sentforge.training.trainer import Trainer

    set_seed(seed)  # before loading: parts the checkpoint lacks (e.g. a pooler layer) start from the seed
    encoder = model if given else load(spec, device=device)
    if not isinstance(encoder, Encoder):
        raise ConfigError(f"model {spec} (--model): {type(encoder).__name__} is not trainable; give a Hugging Face "
                          "or sentence-transformers model")
    run.prepare(device)  # after the inputs are read: nothing of theirs can be removed before

    chosen_pooling, pooling_before = pooling or recipe.pooling, None
    if chosen_pooling != "keep":
        encoder, pooling_before = with_pooling(encoder, chosen_pooling, recipe.name)
    if max_seq_length:
        encoder.max_seq_length = max_seq_length
    training = _with_defaults(recipe, training, device)
    budget = {"steps": steps, "epochs": None if steps else (epochs or 1)}
    plan = recipe.build(encoder, examples, options, BuildContext(spec, seed, {**training, **budget}))
    training.update(plan.training)
    # An evaluator without eval_every scores the start encoder and the trained one.
    scored_at_ends = evaluator is not None and not eval_every
    config = TrainingConfig(output_dir=run.work, seed=seed, device=device, resume=resume, overwrite=True,
                            eval_every=eval_every,
                            # Hugging Face backbones carry a pooler layer that no sentence objective uses.
                            find_unused_parameters=distributed.launched_distributed(), **budget,
                            **{"eval_at_start": scored_at_ends, "eval_at_end": scored_at_ends, **training})
    result_encoder = plan.result or (lambda: encoder)
    best = None if select is None else KeepBest(evaluator, select, run.work, step=lambda: trainer.state.step,
                                                encoder=result_encoder, mode=select_mode)
    trainer = Trainer(encoder, plan.objective, plan.examples, config, evaluator=best or evaluator,
                      callbacks=[*callbacks, *_snapshot_callbacks(snapshots, run.work, result_encoder)],
                      batch_sampler=plan.batch_sampler)
    logger.info("%s: %d training examples, %s", recipe.name, len(plan.examples),
                ", ".join(f"{k}={v}" for k, v in training.items() if k != "optimizer_options"))
    with run.training():
        result = trainer.train()

    trained = result_encoder()
    extra: dict[str, Any] = {"pooling": chosen_pooling, **plan.summary}
    if pooling_before is not None:
        extra["pooling_before"] = pooling_before  # the start model's: the pooling alone moves the scores
    if trainer.state.stop_reason:
        extra["stopped"] = trainer.state.stop_reason
    if result.evaluations:
        extra["evaluations"] = result.evaluations
    if best is not None and best.best is not None:
        trained = best.load(trained.name) if distributed.is_main_process() else trained
        extra["best"] = best.best
        if best.best["step"] == 0:
            logger.warning("the start encoder scored best on the dev set (%s %.4f): it is the one saved",
                           best.best["metric"], best.best["value"])
    summary = run_summary(recipe.name, spec, [str(p) for p in paths] or "in memory", len(plan.examples),
                          result.steps, result.losses[-1] if result.losses else None, config.to_json(),
                          dataclasses.asdict(options), **extra)
    trained.name = str(output)  # the trained model is the output's: its card is titled after it
    record_on_card(trained.card, summary)
    run.finish(trained.save, summary)
    return trained, summary


def _dev_evaluator(dev: str | os.PathLike, output: str | os.PathLike, evaluator: Any,
                   select: str | None) -> tuple[Any, str]:
    """The task of the dev file and the metric to select on (default: its main metric)."""
    from sentforge.evaluation import load_dataset
    from sentforge.support.output_guard import refuse_inputs_around

    if evaluator is not None:
        raise ConfigError("give dev (--dev) or evaluator, not both")
    refuse_inputs_around(Path(output), [("--dev", dev)])  # the other inputs are judged with the output below
    task = load_dataset(dev)
    return task, select or task.metadata.main_metric


def snapshot_dir(run_dir: str | os.PathLike, step: int) -> Path:
    """Where `snapshots=` saves the encoder of `step` in the run directory `run_dir`."""
    return Path(run_dir) / TRAINING_DIR / "snapshots" / f"step-{step:08d}"


def _snapshot_callbacks(steps: Sequence[int], work: Path, encoder: Callable[[], Any]) -> list[Callable[[Any], None]]:
    wanted = set(steps)
    if not wanted:
        return []

    def snapshot(state: Any) -> None:
        from sentforge.support import distributed

        if state.step in wanted and distributed.is_main_process():
            encoder().save(snapshot_dir(work.parent, state.step), overwrite=True)
    return [snapshot]


def _with_defaults(recipe: Recipe, training: dict[str, Any], device: str | None) -> dict[str, Any]:
    """The method paper's TrainingConfig values, overridden by the caller's."""
    defaults = recipe.training_defaults()
    if training.get("optimizer", defaults.get("optimizer")) not in ("adamw", "adam") or (
            device and not device.startswith(("cpu", "cuda"))):
        defaults.pop("optimizer_options", None)  # the fused kernel exists for Adam(W) on CPU and CUDA only
    return {**defaults, **training}


def _split_settings(recipe: Recipe, settings: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(the method's options dataclass, TrainingConfig values) from the keyword settings."""
    names = recipe.option_names()
    unknown = [key for key in settings if key not in names and key not in TRAINING_SETTINGS]
    if unknown:
        raise ConfigError(f"{recipe.name}: unknown setting(s) {', '.join(unknown)}; the method's options are "
                          f"{', '.join(names) or 'none'}, the training settings {', '.join(TRAINING_SETTINGS)}")
    options = checked(recipe.options(**{k: v for k, v in settings.items() if k in names}))
    training = {k: v for k, v in settings.items() if k in TRAINING_SETTINGS and v is not None}
    if training.get("max_grad_norm") == 0:
        training["max_grad_norm"] = None  # no clipping
    for key in ("schedule_boundaries", "schedule_factors"):
        if key in training:
            training[key] = tuple(training[key])
    return options, training

