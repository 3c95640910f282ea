"""How to train: `TrainingConfig`, the settings the Trainer (training/trainer.py) runs with, checked
when built."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sentforge.support.errors import ConfigError

MIXED_PRECISION = ("auto", "no", "bf16", "fp16")
# What training/optim.py builds; named here so that a run's settings are checked before torch is imported.
OPTIMIZERS = ("adamw", "adam", "adafactor", "rmsprop")
SCHEDULES = ("constant", "linear", "polynomial", "t5-constant-then-linear", "piecewise")
# Learning rates above this only ever diverge with the optimizers sentforge offers.
MAX_LR = 1.0


@dataclass
class TrainingConfig:
    """How to train. Defaults are generic; each method's config sets the values of its paper."""

    output_dir: str | Path | None = None
    steps: int | None = None  # optimizer steps; or give `epochs`
    epochs: int | None = None
    batch_size: int = 32  # per process and per micro-batch
    gradient_accumulation: int = 1
    optimizer: str = "adamw"
    lr: float = 5e-5
    weight_decay: float = 0.01
    optimizer_options: dict[str, Any] = field(default_factory=dict)
    schedule: str = "linear"
    warmup_steps: int = 0
    warmup_ratio: float = 0.0
    schedule_power: float = 1.0
    schedule_end_factor: float = 0.0
    schedule_boundaries: tuple[int, ...] = ()
    schedule_factors: tuple[float, ...] = (1.0,)
    max_grad_norm: float | None = 1.0
    mixed_precision: str = "auto"  # auto: bf16 (or fp16) on CUDA, none on CPU
    device: str | None = None
    seed: int = 0
    group_by_length: bool = False
    log_every: int = 10
    eval_every: int | None = None
    eval_at_start: bool = False
    eval_at_end: bool = False  # also score the encoder after the last step (when eval_every did not just do it)
    checkpoint_every: int | None = None
    keep_last: int = 2
    resume: bool = False
    overwrite: bool = False
    early_stopping_patience: int | None = None  # off by default: the seeds train a fixed number of steps
    early_stopping_metric: str | None = None
    early_stopping_mode: str = "max"
    time_limit: float | None = None  # seconds of wall-clock time for this call of train()
    # DDP: encoders often carry parameters no objective uses (BERT's pooler); False is faster when
    # every parameter gets a gradient.
    find_unused_parameters: bool = True
    show_progress: bool | None = None

    def __post_init__(self) -> None:
        if (self.steps is None) == (self.epochs is None):
            raise ConfigError("give exactly one of steps and epochs")
        for name in ("steps", "epochs", "batch_size", "gradient_accumulation", "log_every", "eval_every",
                     "checkpoint_every", "keep_last", "early_stopping_patience"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} ({_flag(name)}) must be >= 1, got {value}")
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"unknown optimizer {self.optimizer!r} (--optimizer); choose one of "
                              f"{', '.join(OPTIMIZERS)}")
        if self.schedule not in SCHEDULES:
            raise ConfigError(f"unknown schedule {self.schedule!r} (--schedule); choose one of {', '.join(SCHEDULES)}")
        if self.mixed_precision not in MIXED_PRECISION:
            raise ConfigError(f"mixed_precision must be one of {', '.join(MIXED_PRECISION)}")
        if self.early_stopping_mode not in ("max", "min"):
            raise ConfigError("early_stopping_mode must be 'max' or 'min'")
        if self.time_limit is not None and not self.time_limit > 0:
            raise ConfigError(f"time_limit must be a positive number of seconds, got {self.time_limit}")
        if self.max_grad_norm is not None and not 0 < self.max_grad_norm < math.inf:
            raise ConfigError(f"max_grad_norm must be positive and finite or None, got {self.max_grad_norm}")
        self._check_numbers()
        if (self.checkpoint_every or self.resume) and self.output_dir is None:
            raise ConfigError("checkpoints and resume need an output_dir")
        self.schedule_boundaries = tuple(self.schedule_boundaries)
        self.schedule_factors = tuple(self.schedule_factors)

    def _check_numbers(self) -> None:
        """NaN compares False with everything: each range is written so that NaN falls outside it."""
        ranges = {"lr": (0.0, MAX_LR, False), "weight_decay": (0.0, 1.0, True), "warmup_ratio": (0.0, 1.0, True),
                  "schedule_power": (0.0, 100.0, False), "schedule_end_factor": (0.0, 1.0, True)}
        for name, (low, high, low_allowed) in ranges.items():
            value = getattr(self, name)
            if not ((low <= value if low_allowed else low < value) and value <= high):
                raise ConfigError(f"{name} ({_flag(name)}) must be in {'[' if low_allowed else '('}{low:g}, {high:g}], "
                                  f"got {value}")
        if self.warmup_steps < 0:
            raise ConfigError(f"warmup_steps must be >= 0, got {self.warmup_steps}")
        if not all(0.0 <= f < math.inf for f in self.schedule_factors):
            raise ConfigError(f"schedule_factors must be finite and >= 0, got {list(self.schedule_factors)}")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["output_dir"] = None if self.output_dir is None else str(self.output_dir)
        return data


def _flag(name: str) -> str:
    """The command-line option of a TrainingConfig field."""
    return "--" + name.replace("_", "-")
