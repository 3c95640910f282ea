"""The rules that end a training run early, as callbacks on the `TrainerState`.

A rule is called after every optimizer step, before the Trainer's other callbacks, and stops the run
the way any callback does: `state.should_stop = True` with a `stop_reason`. The Trainer then takes one
path whatever stopped it (see training/trainer.py). The rules decide on the main process; the Trainer
makes every process follow that decision.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sentforge.support.errors import ConfigError
from sentforge.support import distributed

logger = logging.getLogger(__name__)

# The stop reasons the rules give (train.json "stopped"); a caller's own callbacks may give others.
TIME_LIMIT, EARLY_STOPPING = "time limit", "early stopping"


class TimeLimit:
    """Stops after the step that crosses `seconds` of wall-clock time since `start()`."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()

    def start(self) -> None:
        self.started = time.monotonic()

    def __call__(self, state: Any) -> None:
        if distributed.is_main_process() and time.monotonic() - self.started >= self.seconds \
                and state.step < state.total_steps:
            logger.info("time limit of %.0f s reached at step %d: stopping", self.seconds, state.step)
            state.should_stop, state.stop_reason = True, TIME_LIMIT


class EarlyStopping:
    """Stops at an evaluation after `patience` evaluations in a row that did not improve `metric` (its
    best value and the count are kept in the state, so they survive a resume)."""

    def __init__(self, patience: int, metric: str, mode: str) -> None:
        self.patience, self.metric, self.mode = patience, metric, mode
        self._exhausted = False

    def evaluated(self, state: Any, metrics: dict[str, Any]) -> None:
        """Take one evaluation's metrics into the state's best value and count."""
        if self.metric not in metrics:
            raise ConfigError(f"early stopping metric {self.metric!r} is not among the evaluation metrics "
                              f"{sorted(metrics)}")
        value = float(metrics[self.metric])
        best = state.best_metric
        if best is None or (value > best if self.mode == "max" else value < best):
            state.best_metric, state.evals_without_improvement = value, 0
        else:
            state.evals_without_improvement += 1
            self._exhausted = state.evals_without_improvement >= self.patience

    def __call__(self, state: Any) -> None:
        if self._exhausted:
            self._exhausted = False
            logger.info("early stopping at step %d: %s has not improved for %d evaluations",
                        state.step, self.metric, state.evals_without_improvement)
            state.should_stop, state.stop_reason = True, EARLY_STOPPING


def early_stopping_metric(metric: str | None, evaluator: Any) -> str:
    """The metric early stopping follows: the one named, else the evaluation task's main metric."""
    if metric:
        return metric
    metadata = getattr(evaluator, "metadata", None)
    if metadata is not None:
        return metadata.main_metric
    raise ConfigError("early stopping needs early_stopping_metric (the evaluator is not a Task)")
