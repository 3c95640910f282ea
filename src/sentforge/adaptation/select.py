"""Choosing the model and writing it to OUTPUT/model with a model card that records the choice.

Two rules. "significant" (the default): a candidate replaces the start model only when the lower bound
of the 95 % interval of its dev gain is above 0; among those, the simplest whose gain is within one
standard error of the best gain wins (a start model, then a single trained encoder, then a
meta-embedding; fewer training steps before more). "best": the highest dev score, never below the
start model's (a start model wins ties).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sentforge.errors import ConfigError
from sentforge.io import atomic_dir
from sentforge.model_card import display_name

MODEL_DIR = "model"
RULES = ("significant", "best")
# Simpler models first: an unchanged start model, one encoder, then a combination of several.
COMPLEXITY = {"start": 0, "train": 1, "distil": 1, "meta": 2}


def check_rule(rule: str) -> str:
    if rule not in RULES:
        raise ConfigError(f"--select: unknown rule {rule!r}; choose from {', '.join(RULES)}")
    return rule


def best_start(results: dict[str, dict[str, Any]], starts: list[str]) -> str:
    """The start model with the highest dev score (the first on a tie)."""
    return max(starts, key=lambda name: results[name]["dev"])


def select(results: dict[str, dict[str, Any]], start: list[str], rule: str = "best",
           gains: dict[str, dict[str, Any]] | None = None) -> tuple[str, str]:
    """(the chosen candidate, the sentence that says why)."""
    done = {name: r for name, r in results.items() if r.get("status") == "done"}
    base = best_start(done, start)
    if rule == "best":
        chosen = base
        for name, result in done.items():  # in run order: an earlier candidate wins a tie between two others
            if result["dev"] > done[chosen]["dev"]:
                chosen = name
        return chosen, ("the highest dev score" if chosen != base else
                        "no candidate scored above the start model on dev")
    clear = [name for name in done if name != base and gains[name]["low"] > 0]
    if not clear:
        return base, (f"no candidate's {_percent(gains)} interval of its dev gain over {base} lies above 0: "
                      "the start model is kept")
    best = max(clear, key=lambda name: gains[name]["difference"])
    floor = gains[best]["difference"] - gains[best]["standard_error"]
    close = [name for name in clear if gains[name]["difference"] >= floor]
    order = list(done)
    chosen = min(close, key=lambda name: (COMPLEXITY[done[name]["kind"]], chain_steps(done[name]), order.index(name)))
    why = (f"{len(clear)} candidate(s) gain significantly over {base} (the lower bound of the {_percent(gains)} "
           f"interval above 0); the best gain is {best}'s ({gains[best]['difference']:+.2f} ± "
           f"{gains[best]['standard_error']:.2f} standard error)")
    if chosen != best:
        why += f"; {chosen} is the simplest candidate within one standard error of it"
    return chosen, why


def chain_steps(result: dict[str, Any]) -> int:
    """Training steps behind a candidate, those of the candidate it started from included."""
    return result.get("chain_steps", result.get("steps", 0))


def _percent(gains: dict[str, dict[str, Any]]) -> str:
    confidence = next(iter(gains.values()))["confidence"] if gains else 0.95
    return f"{100 * confidence:g} %"


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
