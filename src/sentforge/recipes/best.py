"""Keeping the best encoder of a run by a dev metric: an evaluator wrapper for the Trainer."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sentforge.support.errors import ConfigError
from sentforge.support.io import save_json

logger = logging.getLogger(__name__)

BEST_DIR = "best"
BEST_FILE = "best.json"


class KeepBest:
    """Runs `evaluator` on the encoder being trained and saves it to `directory` whenever `metric`
    improves; `best.json` beside it records the step and the value, so a resumed run keeps comparing
    against the best so far."""

    def __init__(self, evaluator: Any, metric: str, directory: str | Path, step: Callable[[], int],
                 encoder: Callable[[], Any], mode: str = "max") -> None:
        if mode not in ("max", "min"):
            raise ConfigError(f"select mode must be 'max' or 'min', got {mode!r}")
        self.evaluator = getattr(evaluator, "evaluate", evaluator)
        self.metric, self.mode = metric, mode
        self.directory = Path(directory)
        self.step, self.encoder = step, encoder
        record = self.directory / BEST_FILE
        self.best: dict[str, Any] | None = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else None

    def __call__(self, _encoder: Any) -> dict[str, Any]:
        trained = self.encoder()
        metrics = dict(self.evaluator(trained))
        if self.metric not in metrics:
            raise ConfigError(f"select metric {self.metric!r} is not among the evaluation metrics {sorted(metrics)}")
        value = float(metrics[self.metric])
        if self.best is None or (value > self.best["value"] if self.mode == "max" else value < self.best["value"]):
            self.best = {"step": self.step(), "metric": self.metric, "value": value}
            trained.save(self.directory / BEST_DIR, overwrite=True)
            save_json(self.directory / BEST_FILE, self.best)
            logger.info("step %d: new best %s %.4f", self.best["step"], self.metric, value)
        return metrics

    def load(self, name: str) -> Any:
        """The best encoder saved so far (None when no evaluation ran)."""
        from sentforge.encoder import Encoder

        return None if self.best is None else Encoder.load(self.directory / BEST_DIR, name=name)
