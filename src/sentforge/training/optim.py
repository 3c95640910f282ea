"""Optimisers and learning-rate schedules.

A schedule is a pure function of the optimizer step (`Schedule(step) -> lr multiplier`), wrapped
in a `LambdaLR`; its only state is the step count, so a resumed run rebuilds it from the config.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR

from sentforge.support.errors import ConfigError
from sentforge.training.config import OPTIMIZERS, SCHEDULES


def build_optimizer(params: Iterable[torch.nn.Parameter] | Iterable[dict], name: str = "adamw", lr: float = 5e-5,
                    weight_decay: float = 0.0, **options) -> Optimizer:
    """AdamW, Adam, Adafactor (transformers' implementation, with an explicit learning rate) or RMSprop.

    `options` go to the optimizer (e.g. betas, eps, momentum).
    """
    name = name.lower()
    if lr <= 0:
        raise ConfigError(f"learning rate must be positive, got {lr}")
    params = list(params)
    if name in ("adamw", "adam") and "fused" not in options and "foreach" not in options and _all_on_cuda(params):
        options = {**options, "fused": True}  # one kernel for the whole update: fewer launches per step
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, **options)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, **options)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, weight_decay=weight_decay, **options)
    if name == "adafactor":
        from transformers.optimization import Adafactor

        # A fixed learning rate that the schedule scales (Sentence-T5 trains Adafactor this way).
        options = {"scale_parameter": False, "relative_step": False, "warmup_init": False, **options}
        return Adafactor(params, lr=lr, weight_decay=weight_decay, **options)
    raise ConfigError(f"unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}")


def _all_on_cuda(params: list) -> bool:
    tensors = [t for p in params for t in (p["params"] if isinstance(p, dict) else [p])]
    return bool(tensors) and all(t.is_cuda for t in tensors)


def parameter_groups(module: torch.nn.Module, weight_decay: float) -> list[dict]:
    """Decay weights, not biases or normalisation parameters (as BERT's and most sentence-embedding
    recipes do); parameters that do not require gradients are left out."""
    decay, no_decay = [], []
    for name, param in module.named_parameters():
        if not param.requires_grad:
            continue
        lowered = name.lower()
        (no_decay if param.ndim < 2 or "norm" in lowered or lowered.endswith(".bias") else decay).append(param)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return [g for g in groups if g["params"]]


@dataclass(frozen=True)
class Schedule:
    """Learning-rate multiplier as a function of the optimizer step (0-based: step 0 is the first update).

    kinds:
      constant                 warm-up (if any), then 1.
      linear                   linear warm-up over `warmup_steps`, then linear decay to 0 at `total_steps`.
      polynomial               warm-up, then (1 - progress) ** `power` decay down to `end_factor`.
      t5-constant-then-linear  Sentence-T5 (Ni et al., 2022): constant for the first `constant_fraction`
                               (10%) of the steps, then linear decay to 0 at `total_steps`.
      piecewise                constant pieces: `factors[i]` from step `boundaries[i-1]` (CT, Carlsson
                               et al., 2021, lowers the rate in steps).
    """

    kind: str = "constant"
    total_steps: int = 1
    warmup_steps: int = 0
    power: float = 1.0
    end_factor: float = 0.0
    constant_fraction: float = 0.1
    boundaries: tuple[int, ...] = ()
    factors: tuple[float, ...] = (1.0,)

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            raise ConfigError(f"unknown schedule {self.kind!r}; choose one of {', '.join(SCHEDULES)}")
        if self.total_steps < 1:
            raise ConfigError(f"schedule total_steps must be >= 1, got {self.total_steps}")
        if self.warmup_steps < 0:
            raise ConfigError(f"warmup_steps must be >= 0, got {self.warmup_steps}")
        if self.kind == "piecewise":
            if len(self.factors) != len(self.boundaries) + 1:
                raise ConfigError(f"piecewise schedule: {len(self.boundaries)} boundaries need "
                                  f"{len(self.boundaries) + 1} factors, got {len(self.factors)}")
            if list(self.boundaries) != sorted(self.boundaries):
                raise ConfigError(f"piecewise schedule: boundaries must be increasing, got {self.boundaries}")
        if not 0.0 <= self.constant_fraction <= 1.0:
            raise ConfigError(f"constant_fraction must be in [0, 1], got {self.constant_fraction}")

    def __call__(self, step: int) -> float:
        if self.kind == "piecewise":
            piece = sum(1 for boundary in self.boundaries if step >= boundary)
            return float(self.factors[piece])
        if self.kind == "t5-constant-then-linear":
            flat = int(self.constant_fraction * self.total_steps)
            if step < flat:
                return 1.0
            return max(0.0, (self.total_steps - step) / max(1, self.total_steps - flat))
        if step < self.warmup_steps:
            return step / self.warmup_steps  # as transformers' schedules: the first update has lr 0
        if self.kind == "constant":
            return 1.0
        progress = min(1.0, (step - self.warmup_steps) / max(1, self.total_steps - self.warmup_steps))
        if self.kind == "linear":
            return 1.0 - progress
        return (1.0 - self.end_factor) * (1.0 - progress) ** self.power + self.end_factor


def build_scheduler(optimizer: Optimizer, schedule: Schedule) -> LambdaLR:
    return LambdaLR(optimizer, schedule)


def schedule_from_config(kind: str, total_steps: int, warmup_steps: int = 0, warmup_ratio: float = 0.0,
                         power: float = 1.0, end_factor: float = 0.0, boundaries: Sequence[int] = (),
                         factors: Sequence[float] = (1.0,)) -> Schedule:
    """A schedule whose warm-up is given in steps or as a fraction of the total steps."""
    warmup = warmup_steps or int(round(warmup_ratio * total_steps))
    return Schedule(kind=kind, total_steps=total_steps, warmup_steps=warmup, power=power, end_factor=end_factor,
                    boundaries=tuple(boundaries), factors=tuple(factors))
