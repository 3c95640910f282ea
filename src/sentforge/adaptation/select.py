"""Choosing the model: the best dev score, never below the start model's, and writing it to OUTPUT/model
with a model card that records the choice."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sentforge.io import atomic_dir
from sentforge.model_card import display_name

MODEL_DIR = "model"


def select(results: dict[str, dict[str, Any]], start: list[str]) -> str:
    """The candidate with the highest dev score. A start model wins ties, and another candidate is chosen
    only when it beats the best start model: adapt never returns a model that scores below the start."""
    done = {name: r for name, r in results.items() if r.get("status") == "done"}
    best_start = max(start, key=lambda name: done[name]["dev"])
    chosen = best_start
    for name, result in done.items():  # in run order: an earlier candidate wins a tie between two others
        if result["dev"] > done[chosen]["dev"]:
            chosen = name
    return chosen


def load_candidate(result: dict[str, Any], device: str | None = None) -> Any:
    from sentforge.loading import load
    from sentforge.meta import MetaEncoder

    if result["kind"] == "meta":
        return MetaEncoder.load(result["model_path"], device=device)
    return load(result["model_path"], device=device)


def write_selected(output: Path, name: str, result: dict[str, Any], start_result: dict[str, Any], metric: str,
                   dev_name: str, test_name: str | None, candidates: int) -> Path:
    """Save the chosen model as OUTPUT/model; an encoder's card records the selection and the scores
    (a meta-embedding directory has no card: report.md says what it is)."""
    target = output / MODEL_DIR
    if result["kind"] == "meta":
        with atomic_dir(target, overwrite=True) as tmp:
            shutil.copytree(result["model_path"], tmp, dirs_exist_ok=True)
        return target
    encoder = load_candidate(result)
    card = encoder.card
    card.base_model = card.base_model or display_name(str(start_result["model"]))
    card.description = (f"Selected by `sentforge adapt` among {candidates} candidates by {metric} on the dev set "
                        f"{dev_name}: {name} (dev {metric} {result['dev']:.2f}; the start model "
                        f"{start_result['dev']:.2f}).")
    card.add_dataset(dev_name, role="adapt selection (dev)")
    tasks = {dev_name: {"main_metric": metric, "main_score": result["dev"], "family": "own"}}
    if test_name is not None and result.get("test") is not None:
        card.add_dataset(test_name, role="adapt test (reported, not used for selection)")
        tasks[test_name] = {"main_metric": metric_name(result, metric), "main_score": result["test"], "family": "own"}
    card.add_evaluation({"tasks": tasks})
    encoder.save(target, overwrite=True)
    return target


def metric_name(result: dict[str, Any], default: str) -> str:
    return result.get("test_metric", default)
