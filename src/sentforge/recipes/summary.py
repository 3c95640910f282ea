"""The run summary every recipe writes (`train.json`): one dict, built here."""

from __future__ import annotations

from typing import Any


def run_summary(method: str, model: str, data: Any, examples: int, steps: int, final_loss: float | None,
                training: dict[str, Any], method_options: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """method, start model, data (file names, or "in memory") and size, hyper-parameters, steps, final loss;
    `extra` holds what a method adds (its pooling, classes, stages, the best checkpoint, ...)."""
    return {"method": method, "model": model, "data": data, "examples": examples, "steps": steps,
            "final_loss": final_loss, "training": training, "method_options": method_options, **extra}


# The training settings a model card states; paths and engine switches (output_dir, resume, ...) stay out.
CARD_SETTINGS = ("optimizer", "lr", "batch_size", "gradient_accumulation", "schedule", "warmup_ratio",
                 "weight_decay", "max_grad_norm", "seed")


def record_on_card(card: Any, summary: dict[str, Any]) -> None:
    """Fill a `ModelCardData` from a run summary: start model, method and hyper-parameters, data names and size."""
    card.base_model = str(summary["model"])
    training = summary.get("training", {})
    settings = {key: training[key] for key in CARD_SETTINGS if training.get(key) is not None}
    settings.update(summary.get("method_options", {}))
    settings["steps"] = summary["steps"]
    if summary.get("pooling"):
        settings["pooling"] = summary["pooling"]
    card.set_training(summary["method"], settings)
    sources = summary["data"]
    names = ([f"{kind}: {_names(paths)}" for kind, paths in sources.items()] if isinstance(sources, dict)
             else [_names(sources)])
    card.add_dataset(", ".join(names), size=summary["examples"], role="training")


def _names(paths: Any) -> str:
    """File names only: a card says what the data was, not where it lay on the training machine."""
    if isinstance(paths, str):
        return paths
    from pathlib import Path

    return ", ".join(Path(p).name for p in paths)
