"""The state of a training run: `TrainerState` (what callbacks see and checkpoints keep), `LoopState`
(what one call of `Trainer.train()` works with) and `TrainResult` (what it returns)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from sentforge.training.batch_order import BatchOrder
from sentforge.training.step_values import StepValues


@dataclass
class TrainerState:
    """What callbacks see and checkpoints keep."""

    step: int = 0
    total_steps: int = 0
    epoch: int = 0
    loss: float = math.nan  # the latest loss read (see training/trainer.py)
    lr: float = 0.0
    best_metric: float | None = None
    evals_without_improvement: int = 0
    should_stop: bool = False
    stop_reason: str | None = None


@dataclass
class TrainResult:
    steps: int
    losses: list[float]  # global loss of every step this call ran
    evaluations: list[dict[str, Any]]
    stopped_early: bool
    tokens_per_second: float | None


@dataclass
class LoopState:
    """Everything one call of `train()` works with, from setup to the end of the loop."""

    model: nn.Module  # the objective, wrapped for DDP on several processes
    device: torch.device
    autocast_dtype: torch.dtype | None
    rank: int
    world: int
    global_batch: int
    total_steps: int  # this call's (a resumed state keeps the total of the run it was saved in)
    order: BatchOrder
    optimizer: torch.optim.Optimizer
    scheduler: Any
    scaler: Any
    checkpoints: Path | None  # None: no checkpoints
    read_every_step: bool
    progress: Any = None
    values: StepValues = field(default_factory=StepValues)  # numbers of the steps not read yet
    losses: list[float] = field(default_factory=list)
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    window: dict[str, float] = field(default_factory=dict)  # sums since the last logged step
    window_steps: int = 0
    window_start: float = field(default_factory=time.perf_counter)
    tokens: float = 0.0
    token_seconds: float = 0.0
    segment_start: float = field(default_factory=time.perf_counter)  # since the last step that read its numbers
    read_this_step: bool = False
