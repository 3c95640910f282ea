"""The run summary every recipe writes (`train.json`): one dict, built here."""

from __future__ import annotations

from typing import Any


def run_summary(method: str, model: str, data: Any, examples: int, steps: int, final_loss: float | None,
                training: dict[str, Any], method_options: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """method, start model, data (file names, or "in memory") and size, hyper-parameters, steps, final loss;
    `extra` holds what a method adds (its pooling, classes, stages, the best checkpoint, ...)."""
    return {"method": method, "model": model, "data": data, "examples": examples, "steps": steps,
            "final_loss": final_loss, "training": training, "method_options": method_options, **extra}
