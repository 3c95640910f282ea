"""Run a selection of tasks on one model: one encoding pass, progress, a JSON report and a Markdown table.

The data directory is the root that holds `senteval/downstream`, `glue/glue_data`, `cqa-qatarliving`, …
(task files are relative to it); when it is not given, the environment variable SENTFORGE_DATA names it.
"""

from __future__ import annotations

import logging
import os
import platform
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from sentforge.support.errors import ConfigError, DataNotFoundError
from sentforge.evaluation.registry import resolve_tasks
from sentforge.evaluation.task import CachedEncoder, Task
from sentforge.support.io import atomic_file, save_json
from sentforge.interface.model_card import check_card_target, write_model_card
from sentforge.support.output_guard import guard_output, locked_output, output_lock, signed_json, signed_markdown
from sentforge.support.seed import set_seed

logger = logging.getLogger(__name__)

DATA_ENV = "SENTFORGE_DATA"


EVAL = "eval"  # the command family named in the lock
RERANK_TOP = 10  # the first stage's candidates a cross-encoder re-ranks by default


def resolve_data_dir(data_dir: str | os.PathLike | None) -> Path:
    """The data root: `data_dir`, else $SENTFORGE_DATA; it must be an existing directory."""
    if data_dir is None:
        if not os.environ.get(DATA_ENV):
            raise ConfigError(f"no data directory: pass data_dir= (--data-dir DIR) or set {DATA_ENV} to the "
                              "folder that holds senteval/, glue/, cqa-qatarliving/, …")
        data_dir = os.environ[DATA_ENV]
    path = Path(data_dir).expanduser()
    if not path.is_dir():
        raise ConfigError(f"data directory {path} does not exist or is not a directory")
    return path


TABLE_OPTION = "the Markdown table beside --output:"  # how errors name the table a report is written with


def markdown_path(output: str | os.PathLike) -> Path:
    return Path(output).with_suffix(".md")


@locked_output(EVAL)
def evaluate(model: Any, tasks: str | Sequence[str | Task] = "sts", data_dir: str | os.PathLike | None = None,
             batch_size: int = 64, seed: int = 1111, strict: bool = False,
             output: str | os.PathLike | None = None, overwrite: bool = False, device: str | None = None,
             show_progress: bool | None = None, reranker: str | os.PathLike | Any = None,
             rerank_top: int = RERANK_TOP, rerank_weight: float = 1.0) -> dict[str, Any]:
    """Evaluate `model` (a spec that `sentforge.load` resolves: a model or MetaEncoder directory, a short name
    such as `all-MiniLM-L6-v2`, `bm25`, ...; or an object with `encode`) on `tasks` (families and task
    names, comma-separated or a list; a list may also hold `Task` instances, such as `load_dataset(path)`
    returns for a user's own data, which need no data directory).

    A task whose files are missing is skipped with a warning, or raises DataNotFoundError when
    `strict`; a task that does not apply to the model (e.g. classification on BM25) is skipped. Every
    text of the selected tasks is encoded once, before any task runs. With `output`, writes the
    results as JSON and a Markdown table beside it (same name, `.md`). Seed 1111 is SentEval's default.

    reranker: a cross-encoder (a directory, or a loaded CrossEncoder) that re-ranks the model's top
    `rerank_top` candidates of every ranking task and scores the labelled pairs itself (evaluation/reranker.py);
    the tasks that need vectors (STS, transfer, ...) are then skipped. The report gives its pairs per second.
    rerank_weight: the cross-encoder score's weight in [0, 1] against the model's cosine (1: the cross-encoder's
    score alone), as an adapt pipeline was chosen with (OUTPUT/reranker/pipeline.json).
    """
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    if not isinstance(rerank_top, int) or rerank_top < 1:
        raise ConfigError(f"rerank_top (--rerank-top) must be a positive integer, got {rerank_top!r}")
    instances = [] if isinstance(tasks, str) else [t for t in tasks if isinstance(t, Task)]
    names = tasks if isinstance(tasks, str) else [t for t in tasks if not isinstance(t, Task)]
    selected = resolve_tasks(names) if names or not instances else []
    root = resolve_data_dir(data_dir) if selected else None
    if output is not None:
        if Path(output).suffix != ".json":
            raise ConfigError(f"--output {output}: results are written as JSON (plus a Markdown table beside it); "
                              "give a path ending in .json")
        # Before any text is encoded: the report can be written, and replaces no input nor foreign file.
        inputs = [("--model", model if isinstance(model, (str, os.PathLike)) else None), ("--data-dir", root),
                  ("--reranker", reranker if isinstance(reranker, (str, os.PathLike)) else None)]
        guard_output(output, inputs, EVAL, overwrite, file_format="json")
        guard_output(markdown_path(output), inputs, EVAL, overwrite, option=TABLE_OPTION, file_format="markdown")
    set_seed(seed)
    started = time.perf_counter()
    available, skipped = _tasks_with_data([cls(root, seed=seed) for cls in selected] + instances, strict)
    model_name = str(model) if isinstance(model, (str, os.PathLike)) else getattr(model, "name", type(model).__name__)
    if isinstance(model, (str, os.PathLike)):
        from sentforge.loading import load

        model = load(model_name, device=device, allow_lexical=True)
    reranking = _reranking(model, reranker, rerank_top, batch_size, device, rerank_weight)
    runnable = []
    for task in available:
        if task.supports(reranking or model):
            runnable.append(task)
        else:
            skipped[task.name] = f"does not apply to {model_name}"
            logger.info("skipping task %s: it does not apply to %s", task.name, model_name)
    if not runnable:
        raise DataNotFoundError(f"none of the selected tasks can run on {model_name} with data directory {root}: "
                                + "; ".join(f"{name}: {why}" for name, why in skipped.items()))

    scorer, encode_seconds, n_texts = model, 0.0, 0
    if hasattr(model, "encode"):
        scorer = CachedEncoder(model, batch_size=batch_size, show_progress=show_progress)
        texts = [text for task in runnable for text in task.texts()]
        tick = time.perf_counter()
        logger.info("encoding %d distinct texts of %d tasks", len(set(texts)), len(runnable))
        scorer.warm(texts)
        encode_seconds = time.perf_counter() - tick

    if reranking is not None:
        reranking.first_stage = scorer
        scorer = reranking
    results: dict[str, dict[str, Any]] = {}
    for task in tqdm(runnable, desc="tasks", unit="task", disable=None if show_progress is None else not show_progress):
        tick = time.perf_counter()
        metrics = task.evaluate(scorer)
        seconds = time.perf_counter() - tick
        if task.metadata.main_metric not in metrics:
            raise ConfigError(f"task {task.name} returned no {task.metadata.main_metric!r} (its main metric)")
        results[task.name] = {"family": task.metadata.family, "main_metric": task.metadata.main_metric,
                              "main_score": metrics[task.metadata.main_metric], "metrics": metrics,
                              "seconds": round(seconds, 3)}
        if task.metadata.extra.get("variant_of"):
            results[task.name]["variant_of"] = task.metadata.extra["variant_of"]
        logger.info("%s: %s = %.2f (%.1f s)", task.name, task.metadata.main_metric,
                    metrics[task.metadata.main_metric], seconds)
    if isinstance(scorer, CachedEncoder):
        n_texts = len(scorer)
    if reranking is not None and isinstance(reranking.first_stage, CachedEncoder):
        n_texts = len(reranking.first_stage)

    report = {
        "model": str(model_name),
        "tasks": results,
        "families": family_averages(results),
        "skipped": skipped,
        "config": {"data_dir": None if root is None else str(root), "batch_size": batch_size, "seed": seed,
                   "strict": strict, "selection": tasks if isinstance(tasks, str)
                   else ",".join(t.name if isinstance(t, Task) else t for t in tasks)},
        "timing": {"encode_seconds": round(encode_seconds, 3), "distinct_texts_encoded": n_texts,
                   "total_seconds": round(time.perf_counter() - started, 3), **_rerank_timing(reranking)},
        **({"reranker": {"model": reranking.cross_encoder.name, "top_k": rerank_top, "weight": rerank_weight}}
           if reranking else {}),
        "environment": {"sentforge": _version(), "python": platform.python_version(),
                        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")},
    }
    if output is not None:
        save_json(output, signed_json(report, EVAL))
        with atomic_file(markdown_path(output), "w") as handle:
            handle.write(signed_markdown(markdown_report(report), EVAL))
        logger.debug("wrote %s and %s", output, markdown_path(output))  # `sentforge eval` prints it once
    return report


def _reranking(model: Any, reranker: Any, top_k: int, batch_size: int, device: str | None,
               weight: float = 1.0) -> Any:
    """The re-ranking scorer around `model` (its first stage becomes the cached encoder), or None."""
    if reranker is None:
        return None
    from sentforge.cross_encoder import CrossEncoder, is_cross_encoder_dir, load_cross_encoder
    from sentforge.evaluation.reranker import Reranked

    if isinstance(model, CrossEncoder):
        raise ConfigError("--model: a cross-encoder scores pairs, it does not encode; give a bi-encoder as --model "
                          "and the cross-encoder as --reranker")
    if not isinstance(reranker, CrossEncoder):
        if not is_cross_encoder_dir(reranker):
            raise ConfigError(f"--reranker {reranker}: not a cross-encoder directory (a bi-encoder? give it as "
                              "--model; train a cross-encoder with sentforge train cross-encoder)")
        reranker = load_cross_encoder(reranker, device=device)
    return Reranked(model, reranker, top_k, batch_size, weight)


def _rerank_timing(reranking: Any) -> dict[str, Any]:
    if reranking is None:
        return {}
    return {"reranked_pairs": reranking.pairs_scored, "rerank_seconds": round(reranking.rerank_seconds, 3),
            "rerank_pairs_per_second": reranking.pairs_per_second}


def evaluate_datasets(model: str | os.PathLike, output: str | os.PathLike, tasks: str | None = None,
                      datasets: Sequence[str] = (), dev: str | os.PathLike | None = None,
                      data_dir: str | os.PathLike | None = None, batch_size: int = 64, strict: bool = False,
                      device: str | None = None, overwrite: bool = False, seed: int = 1111,
                      add_to_card: bool = False, reranker: str | os.PathLike | None = None,
                      rerank_top: int = RERANK_TOP, rerank_weight: float = 1.0) -> dict[str, Any]:
    """`sentforge eval`: evaluate `model` on `tasks` and on the user's own `datasets`, write the report to
    `output` (JSON, a Markdown table beside it) and return it, as `evaluate` does.

    tasks: comma-separated task families and/or task names (default: sts, or none when `datasets` are
    given). datasets: files or BEIR folders, each `PATH` or `KIND:PATH` (see `load_dataset`). dev: a
    labelled-pairs file whose best accuracy and F1 thresholds the labelled-pairs datasets use.
    add_to_card: also add the results to the model card of the model directory `model` (checked first).
    reranker / rerank_top / rerank_weight: a cross-encoder directory re-ranking the model's top candidates (see
    `evaluate`).
    The output is locked and checked against every input before any dataset is read.
    """
    from sentforge.evaluation.own import load_own_datasets, parse_dataset_spec

    if add_to_card:
        check_card_target(model)
    inputs = [("--model", model), ("--dev", dev), ("--data-dir", data_dir), ("--reranker", reranker),
              *(("--dataset", parse_dataset_spec(spec)[1]) for spec in datasets)]
    with output_lock(output, EVAL):
        guard_output(output, inputs, EVAL, overwrite, file_format="json")  # before any dataset is read
        guard_output(markdown_path(output), inputs, EVAL, overwrite, option=TABLE_OPTION, file_format="markdown")
        own = load_own_datasets(list(datasets), dev=dev, seed=seed)
        names = [t.strip() for t in (tasks if tasks is not None else "" if own else "sts").split(",") if t.strip()]
        report = evaluate(model, [*names, *own], data_dir=data_dir, batch_size=batch_size, seed=seed,
                          strict=strict, output=output, overwrite=overwrite, device=device, reranker=reranker,
                          rerank_top=rerank_top, rerank_weight=rerank_weight)
    if add_to_card:
        add_results_to_card(model, report)
    return report


def add_results_to_card(model_dir: str | os.PathLike, report: dict[str, Any]) -> None:
    """Add the results of an `evaluate` report to the card of a saved model directory."""
    from sentforge.encoder import Encoder

    model_dir = check_card_target(model_dir)
    encoder = Encoder.load(model_dir)
    encoder.card.add_evaluation(report)
    write_model_card(model_dir, encoder)


def _tasks_with_data(tasks: list[Task], strict: bool) -> tuple[list[Task], dict[str, str]]:
    """The tasks whose files are all present; the others are skipped with a warning, or fail when `strict`."""
    available, skipped = [], {}
    for task in tasks:
        missing = task.missing_files()
        if not missing:
            available.append(task)
            continue
        shown = ", ".join(str(path) for path in missing[:3])
        if len(missing) > 3:
            shown += f" and {len(missing) - 3} more"
        if strict:
            raise DataNotFoundError(f"task {task.name}: missing {shown} (--strict)")
        skipped[task.name] = f"missing {len(missing)} file(s): {shown}"
        logger.warning("skipping task %s: missing %s (pass --strict to make this an error)", task.name, shown)
    return available, skipped


def family_averages(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Mean main score of the tasks of each family that ran (with their count, since skips change it).
    A variant of another task that also ran (STS12-raw of STS12) is left out: no data set counts twice."""
    by_family: dict[str, list[float]] = {}
    for entry in results.values():
        if entry.get("variant_of") in results:
            continue
        by_family.setdefault(entry["family"], []).append(float(entry["main_score"]))
    return {family: {"mean_main_score": float(np.mean(scores)), "n_tasks": len(scores)}
            for family, scores in by_family.items()}


def _format(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.4f}"


def markdown_report(report: dict[str, Any]) -> str:
    """A summary table (main metric per task, family means, timings) and one table of every metric per task."""
    lines = [f"# Evaluation of {report['model']}", "",
             "| task | family | main metric | score | seconds |", "|---|---|---|---:|---:|"]
    for name, entry in report["tasks"].items():
        lines.append(f"| {name} | {entry['family']} | {entry['main_metric']} | {_format(entry['main_score'])} "
                     f"| {entry['seconds']:.1f} |")
    lines += ["", "| family | mean of main scores (a -raw variant counts only without its original) | tasks |",
              "|---|---:|---:|"]
    lines += [f"| {family} | {_format(entry['mean_main_score'])} | {entry['n_tasks']} |"
              for family, entry in report["families"].items()]
    timing = report["timing"]
    lines += ["", (f"Encoding: {timing['distinct_texts_encoded']} distinct texts in {timing['encode_seconds']:.1f} s; "
                   f"total {timing['total_seconds']:.1f} s (batch size {report['config']['batch_size']}, "
                   f"seed {report['config']['seed']}).")]
    keys = [f"{m}_{a}" for m in ("spearman", "pearson") for a in ("mean", "wmean", "all")]
    sts = {name: entry["metrics"] for name, entry in report["tasks"].items()
           if entry["family"] == "sts" and all(k in entry["metrics"] for k in keys)}
    if sts:
        lines += ["", ("STS aggregates over subsets (SentEval mean and weighted mean; \"all\": one correlation "
                       "over the concatenated subsets):"), "",
                  "| task | " + " | ".join(k.replace("_", " ").capitalize() for k in keys) + " |",
                  "|---|" + "---:|" * len(keys)]
        lines += [f"| {name} | " + " | ".join(_format(metrics[k]) for k in keys) + " |"
                  for name, metrics in sts.items()]
    if report["skipped"]:
        lines += ["", "Skipped:", *(f"- {name}: {why}" for name, why in report["skipped"].items())]
    lines += ["", "## All metrics"]
    for name, entry in report["tasks"].items():
        metrics = entry["metrics"]
        lines += ["", f"### {name}", "", "| metric | value |", "|---|---:|"]
        lines += [f"| {key} | {_format(value)} |" for key, value in metrics.items()
                  if isinstance(value, (int, float, np.floating, np.integer))]
    return "\n".join(lines) + "\n"


def _version() -> str:
    from sentforge import __version__

    return __version__
