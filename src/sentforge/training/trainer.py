"""The training engine every sentforge method runs through.

    trainer = Trainer(encoder, objective, data, TrainingConfig(steps=1000, batch_size=64, output_dir="run"))
    result = trainer.train()

Contracts
- `objective` is an `nn.Module` built as `Objective(encoder, **config)` that owns the encoder (and any
  parts of its own: heads, decoders); `objective(batch) -> loss`, a scalar tensor. A batch is a list
  of examples taken from `data` (texts, tuples of texts, ...): the objective tokenizes and collates.
  It may set `objective.last_stats` (a dict of numbers) in `forward`; "tokens" is summed into the
  throughput figures and any other entry is averaged into the logs.
- `data` is a sequence of examples. The order is a seeded permutation per epoch; on N processes each
  takes its slice of the same global batch (see training/batch_order.py).
- `evaluator` is any callable `encoder -> dict of metrics`, or an evaluation `Task` (its `evaluate`),
  run every `eval_every` steps on the main process.
- `callbacks` are called after every optimizer step with the `TrainerState` (its `loss` is the latest
  one read: every step's on the CPU; on accelerators the numbers are read at logging, evaluation and
  checkpoint steps only, see training/step_values.py).
- On accelerators the loss and statistics stay on the device between those reads, so a non-finite
  loss is detected at the next read; the weights are then not saved (the last checkpoint stays whole).
  On the CPU it is detected before its step is applied.
- `batch_sampler` (optional) gives fixed batches of example indices instead of a random permutation
  (see training/batch_order.py: `BatchSampler`); the epoch order of those batches is still seeded.
- `time_limit` (seconds of this call) stops the loop cleanly after the step that crosses it; the
  weights are those of that step, and a checkpoint is written there when checkpoints are on.

The output directory holds `metrics.jsonl` (one JSON object per logged step / evaluation) and
`checkpoints/step-XXXXXXXX/` (see training/checkpoint.py); `resume=True` continues from the newest
complete checkpoint with identical results to an uninterrupted run (same seed, same device type).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from tqdm.auto import tqdm

from sentforge import distributed
from sentforge.device import parse_device
from sentforge.errors import ConfigError, OutputExistsError, TrainingDivergedError
from sentforge.io import atomic_file
from sentforge.seed import set_seed
from sentforge.training.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from sentforge.training.batch_order import BatchOrder, BatchSampler, DataState, process_slice
from sentforge.training.optim import build_optimizer, build_scheduler, parameter_groups, schedule_from_config
from sentforge.training.step_values import StepRecord, StepValues

logger = logging.getLogger(__name__)

METRICS_FILE = "metrics.jsonl"
CHECKPOINTS_DIR = "checkpoints"
MIXED_PRECISION = ("auto", "no", "bf16", "fp16")
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


def _finite_json(value: Any) -> Any:
    """`value` with non-finite floats as strings ("nan", "inf"): JSON has no NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _finite_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_json(item) for item in value]
    return value


@dataclass
class TrainerState:
    step: int = 0
    total_steps: int = 0
    epoch: int = 0
    loss: float = math.nan  # the latest loss read (see the module docstring)
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


class Trainer:
    def __init__(self, encoder: nn.Module, objective: nn.Module, data: Sequence[Any], config: TrainingConfig,
                 evaluator: Any = None, callbacks: Sequence[Callable[[TrainerState], None]] = (),
                 batch_sampler: BatchSampler | None = None) -> None:
        if not any(p is q for p in objective.parameters() for q in list(encoder.parameters())[:1]):
            raise ConfigError("the objective must own the encoder it trains (Objective(encoder, ...))")
        if config.early_stopping_patience and evaluator is None:
            raise ConfigError("early stopping needs an evaluator")
        self.encoder = encoder
        self.objective = objective
        self.data = data
        self.config = config
        self.evaluator = evaluator
        self.callbacks = list(callbacks)
        self.batch_sampler = batch_sampler
        self.state = TrainerState()
        self.output_dir = Path(config.output_dir) if config.output_dir is not None else None

    # -- setup -----------------------------------------------------------------------------------

    def _device(self) -> torch.device:
        return distributed.process_device(parse_device(self.config.device) if self.config.device else None)

    def _autocast_dtype(self, device: torch.device) -> torch.dtype | None:
        choice = self.config.mixed_precision
        if device.type != "cuda" or choice == "no":
            return None
        if choice == "auto":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.bfloat16 if choice == "bf16" else torch.float16

    @staticmethod
    def _reads_every_step(device: torch.device) -> bool:
        """Reading a number from an accelerator waits for its queue: there, read only when needed."""
        return device.type == "cpu"

    def _lengths(self) -> list[int] | None:
        if not self.config.group_by_length:
            return None
        lengths = []
        for i, example in enumerate(self.data):
            parts = [example] if isinstance(example, str) else example
            if not all(isinstance(p, str) for p in parts):
                raise ConfigError(f"group_by_length needs texts or tuples of texts; example {i} is {type(example)}")
            lengths.append(sum(len(p) for p in parts))
        return lengths

    def _check_output(self) -> None:
        if self.output_dir is None or not distributed.is_main_process():
            return
        owned = [self.output_dir / METRICS_FILE, self.output_dir / CHECKPOINTS_DIR]
        if self.config.resume or not any(p.exists() for p in owned):
            return
        if not self.config.overwrite:
            raise OutputExistsError(f"{self.output_dir} already holds a training run (metrics.jsonl / checkpoints); "
                                    "pass resume=True (--resume) to continue it or overwrite=True (--overwrite) "
                                    "to start again")
        (self.output_dir / METRICS_FILE).unlink(missing_ok=True)
        shutil.rmtree(self.output_dir / CHECKPOINTS_DIR, ignore_errors=True)

    def _truncate_metrics(self, step: int) -> None:
        """Drop log records after `step`: the resumed run writes them again."""
        path = self.output_dir / METRICS_FILE
        if not path.exists():
            return
        kept = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by the crash
                continue
            if record.get("step", 0) <= step:
                kept.append(line)
        with atomic_file(path, "w") as handle:
            handle.write("".join(f"{line}\n" for line in kept))

    def _log(self, record: dict[str, Any]) -> None:
        logger.debug("%s", record)
        if self.output_dir is None or not distributed.is_main_process():
            return
        with open(self.output_dir / METRICS_FILE, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(_finite_json(record), allow_nan=False) + "\n")

    # -- evaluation and early stopping -----------------------------------------------------------

    def _evaluate(self) -> dict[str, Any] | None:
        if self.evaluator is None:
            return None
        metrics: dict[str, Any] | None = None
        if distributed.is_main_process():
            was_training = self.objective.training
            self.objective.eval()
            try:
                run = getattr(self.evaluator, "evaluate", self.evaluator)
                with torch.no_grad():
                    metrics = dict(run(self.encoder))
            finally:
                self.objective.train(was_training)
            self._log({"step": self.state.step, "eval": metrics})
            logger.info("step %d: evaluation %s", self.state.step, metrics)
            self._update_early_stopping(metrics)
        self._agree_on_stop()
        return metrics

    def _agree_on_stop(self) -> None:
        """Every process follows the first one's decision to stop (else DDP would hang)."""
        stop = torch.tensor([1.0 if self.state.should_stop else 0.0])
        if distributed.is_distributed():
            torch.distributed.broadcast(stop, src=0)
        self.state.should_stop = bool(stop.item())

    def _check_time_limit(self, elapsed: float) -> None:
        if distributed.is_main_process() and elapsed >= self.config.time_limit \
                and self.state.step < self.state.total_steps:
            logger.info("time limit of %.0f s reached at step %d: stopping", self.config.time_limit, self.state.step)
            self.state.should_stop, self.state.stop_reason = True, "time limit"
        self._agree_on_stop()

    def _metric_name(self) -> str:
        if self.config.early_stopping_metric:
            return self.config.early_stopping_metric
        metadata = getattr(self.evaluator, "metadata", None)
        if metadata is not None:
            return metadata.main_metric
        raise ConfigError("early stopping needs early_stopping_metric (the evaluator is not a Task)")

    def _update_early_stopping(self, metrics: dict[str, Any]) -> None:
        if not self.config.early_stopping_patience:
            return
        name = self._metric_name()
        if name not in metrics:
            raise ConfigError(f"early stopping metric {name!r} is not among the evaluation metrics {sorted(metrics)}")
        value = float(metrics[name])
        best = self.state.best_metric
        better = best is None or (value > best if self.config.early_stopping_mode == "max" else value < best)
        if better:
            self.state.best_metric, self.state.evals_without_improvement = value, 0
        else:
            self.state.evals_without_improvement += 1
            if self.state.evals_without_improvement >= self.config.early_stopping_patience:
                logger.info("early stopping at step %d: %s has not improved for %d evaluations",
                            self.state.step, name, self.state.evals_without_improvement)
                self.state.should_stop, self.state.stop_reason = True, "early stopping"

    # -- the loop --------------------------------------------------------------------------------

    def train(self) -> TrainResult:
        cfg = self.config
        device = self._device()
        distributed.init_distributed(device)
        world, rank = distributed.world_size(), distributed.rank()
        self._check_output()
        distributed.barrier()
        set_seed(cfg.seed + rank)

        # One global batch per optimizer step: every process takes its slice and splits it into
        # `gradient_accumulation` micro-batches of `batch_size`.
        global_batch = cfg.batch_size * world * cfg.gradient_accumulation
        order = BatchOrder(len(self.data), global_batch, cfg.seed, self._lengths(), sampler=self.batch_sampler)
        total_steps = cfg.steps if cfg.steps is not None else cfg.epochs * order.batches_per_epoch
        self.state.total_steps = total_steps

        self.objective.to(device)
        optimizer = build_optimizer(parameter_groups(self.objective, cfg.weight_decay), cfg.optimizer, cfg.lr,
                                    cfg.weight_decay, **cfg.optimizer_options)
        scheduler = build_scheduler(optimizer, schedule_from_config(
            cfg.schedule, total_steps, cfg.warmup_steps, cfg.warmup_ratio, cfg.schedule_power, cfg.schedule_end_factor,
            cfg.schedule_boundaries, cfg.schedule_factors))
        autocast_dtype = self._autocast_dtype(device)
        scaler = torch.amp.GradScaler("cuda") if autocast_dtype == torch.float16 else None

        checkpoints = self.output_dir / CHECKPOINTS_DIR if self.output_dir is not None else None
        if self.output_dir is not None and distributed.is_main_process():
            self.output_dir.mkdir(parents=True, exist_ok=True)
        resumed = self._resume(checkpoints, optimizer, scheduler, scaler, order, global_batch) if cfg.resume else False

        model: nn.Module = self.objective
        if distributed.is_distributed():
            model = nn.parallel.DistributedDataParallel(
                self.objective, device_ids=[device.index] if device.type == "cuda" else None,
                find_unused_parameters=cfg.find_unused_parameters)

        evaluations: list[dict[str, Any]] = []
        if not resumed:
            self._log({"step": 0, "event": "start", "config": cfg.to_json(), "world_size": world,
                       "total_steps": total_steps, "examples": len(self.data)})
            if cfg.eval_at_start:
                metrics = self._evaluate()
                if metrics is not None:
                    evaluations.append({"step": 0, **metrics})

        started = time.monotonic()
        self._losses: list[float] = []
        self._window: dict[str, float] = {}
        self._window_steps, window_start = 0, time.perf_counter()
        self._tokens = [0.0, 0.0]  # tokens, seconds
        values = StepValues()
        read_every_step = self._reads_every_step(device)
        self.objective.train()
        progress = tqdm(total=total_steps, initial=self.state.step, desc="train", unit="step",
                        disable=(not distributed.is_main_process()) or (
                            None if cfg.show_progress is None else not cfg.show_progress), dynamic_ncols=True)
        segment_start = time.perf_counter()
        try:
            while self.state.step < total_steps and not self.state.should_stop:
                loss, stats = self._optimizer_step(model, order, optimizer, scheduler, scaler, autocast_dtype,
                                                   rank, world, device, check_now=read_every_step)
                self.state.step += 1
                self.state.epoch = order.state.epoch
                self.state.lr = scheduler.get_last_lr()[0]
                values.add(self.state.step, loss, stats)
                if cfg.time_limit is not None:
                    self._check_time_limit(time.monotonic() - started)
                progress.update(1)

                log_now = self.state.step % cfg.log_every == 0 or self.state.step == total_steps
                eval_now = bool(cfg.eval_every and self.state.step % cfg.eval_every == 0)
                save_now = checkpoints is not None and bool(cfg.checkpoint_every) and (
                    self.state.step % cfg.checkpoint_every == 0 or self.state.step == total_steps
                    or self.state.should_stop)
                read_now = read_every_step or log_now or eval_now or save_now or self.state.should_stop
                if read_now:
                    self._absorb(values.read(), time.perf_counter() - segment_start, progress)
                if log_now:
                    span = time.perf_counter() - window_start
                    window, window_steps = self._window, self._window_steps
                    record = {"step": self.state.step, "epoch": order.state.epoch, "lr": self.state.lr,
                              "steps_per_s": window_steps / span if span > 0 else None,
                              "examples_per_s": window_steps * global_batch / span if span > 0 else None}
                    for key, value in window.items():
                        record[key] = value if key == "tokens" else value / window_steps
                    if "tokens" in window and span > 0:
                        record["tokens_per_s"] = window["tokens"] / span
                    self._log(record)
                    if progress.disable and distributed.is_main_process():
                        # No progress bar (not a terminal, e.g. piped to a file): the log carries the progress.
                        logger.info("%s", _progress_line(record, total_steps))
                    self._window, self._window_steps, window_start = {}, 0, time.perf_counter()
                if eval_now:
                    metrics = self._evaluate()
                    if metrics is not None:
                        evaluations.append({"step": self.state.step, **metrics})
                if save_now:
                    self._save(checkpoints, optimizer, scheduler, scaler, order, global_batch)
                stopping = self.state.should_stop
                for callback in self.callbacks:
                    callback(self.state)
                if self.state.should_stop and not stopping and checkpoints is not None and cfg.checkpoint_every:
                    # A callback stopped the run: keep this step, so that a resumed run continues from it.
                    if not read_now:
                        self._absorb(values.read(), time.perf_counter() - segment_start, progress)
                        read_now = True
                    self._save(checkpoints, optimizer, scheduler, scaler, order, global_batch)
                if read_now:
                    segment_start = time.perf_counter()
            self._absorb(values.read(), time.perf_counter() - segment_start, progress)
        finally:
            progress.close()
        if cfg.eval_at_end and not (evaluations and evaluations[-1]["step"] == self.state.step):
            metrics = self._evaluate()
            if metrics is not None:
                evaluations.append({"step": self.state.step, **metrics})
        self._log({"step": self.state.step, "event": "end", "stopped_early": self.state.should_stop})
        tokens, seconds = self._tokens
        return TrainResult(steps=self.state.step, losses=self._losses, evaluations=evaluations,
                           stopped_early=self.state.should_stop,
                           tokens_per_second=tokens / seconds if seconds > 0 else None)

    def _absorb(self, records: list[StepRecord], elapsed: float, progress: Any) -> None:
        """Take read step numbers into the losses, the log window and the throughput; a non-finite
        loss found here (accelerators: up to a logging interval late) stops training unsaved."""
        if not records:
            return
        for record in records:
            if not math.isfinite(record.loss):
                raise TrainingDivergedError(
                    f"training diverged at step {record.step}: loss is {record.loss} (read at step "
                    f"{self.state.step}); these weights were not saved (the last checkpoint, if any, is intact); "
                    "lower --lr or keep gradient clipping on")
            self._losses.append(record.loss)
            for key, value in {"loss": record.loss, **record.stats}.items():
                self._window[key] = self._window.get(key, 0.0) + value
            self._window_steps += 1
        if any("tokens" in record.stats for record in records):
            self._tokens[0] += sum(record.stats.get("tokens", 0.0) for record in records)
            self._tokens[1] += elapsed
        self.state.loss = records[-1].loss
        progress.set_postfix(loss=f"{self.state.loss:.4f}", refresh=False)

    def _optimizer_step(self, model: nn.Module, order: BatchOrder, optimizer: torch.optim.Optimizer, scheduler: Any,
                        scaler: Any, autocast_dtype: torch.dtype | None, rank: int, world: int,
                        device: torch.device, check_now: bool = True) -> tuple[torch.Tensor, dict[str, Any]]:
        """One optimizer step; returns its global loss and summed statistics, left on the device.
        With `check_now` the loss is read here and a non-finite one stops before the step is applied."""
        cfg = self.config
        accumulation = cfg.gradient_accumulation
        total_loss = torch.zeros((), device=device)
        stats: dict[str, float] = {}
        share = process_slice(order.next_batch(), rank, world)
        for micro in range(accumulation):
            indices = share[micro * cfg.batch_size:(micro + 1) * cfg.batch_size]
            batch = [self.data[int(i)] for i in indices]
            last = micro == accumulation - 1
            sync = contextlib.nullcontext() if last or not hasattr(model, "no_sync") else model.no_sync()
            with sync:
                with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
                    loss = model(batch)
                if loss.dim() != 0:
                    raise ConfigError(f"{type(self.objective).__name__}.forward must return a scalar loss, "
                                      f"got shape {tuple(loss.shape)}")
                scaled = loss / accumulation
                (scaler.scale(scaled) if scaler is not None else scaled).backward()
            total_loss += scaled.detach().float()
            for key, value in (getattr(self.objective, "last_stats", None) or {}).items():
                value = value.detach().float() if isinstance(value, torch.Tensor) else float(value)
                stats[key] = stats.get(key, 0.0) + value / (1 if key == "tokens" else accumulation)
        loss = distributed.mean_across_processes(total_loss)
        loss_value = float(loss.item()) if check_now else math.nan
        if check_now and not math.isfinite(loss_value):
            raise TrainingDivergedError(
                f"training diverged at step {self.state.step + 1}: loss is {loss_value}; the weights of that step "
                "were not applied (the last checkpoint, if any, is intact); lower --lr or keep gradient clipping on")
        if scaler is not None:
            scaler.unscale_(optimizer)
        if cfg.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.objective.parameters(), cfg.max_grad_norm)
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        if "tokens" in stats and distributed.is_distributed():
            tokens = torch.tensor([float(stats["tokens"])], dtype=torch.float64)
            torch.distributed.all_reduce(tokens)
            stats["tokens"] = float(tokens.item())
        return (loss_value if check_now else loss), stats

    # -- checkpoints -----------------------------------------------------------------------------

    def _trainer_state(self, order: BatchOrder, global_batch: int) -> dict[str, Any]:
        return {"state": asdict(self.state), "data": order.state.to_json(), "global_batch_size": global_batch,
                "seed": self.config.seed}

    def _save(self, root: Path, optimizer, scheduler, scaler, order: BatchOrder, global_batch: int) -> None:
        if not all(torch.isfinite(p).all() for p in self.objective.parameters()):
            raise TrainingDivergedError(f"training diverged at step {self.state.step}: the weights are no longer "
                                        "finite; not saving them (the last checkpoint, if any, is intact)")
        path = save_checkpoint(root, self.state.step, self.objective, optimizer, scheduler,
                               self._trainer_state(order, global_batch), scaler, self.config.keep_last)
        self._log({"step": self.state.step, "event": "checkpoint", "path": str(path)})

    def _resume(self, root: Path, optimizer, scheduler, scaler, order: BatchOrder, global_batch: int) -> bool:
        path = latest_checkpoint(root)
        if path is None:
            logger.warning("--resume: no complete checkpoint in %s; starting from the beginning", root)
            if distributed.is_main_process():
                (self.output_dir / METRICS_FILE).unlink(missing_ok=True)  # the log of the lost start
            return False
        saved = load_checkpoint(path, self.objective, optimizer, scheduler, scaler)
        for key, value in (("global_batch_size", global_batch), ("seed", self.config.seed)):
            if saved[key] != value:
                raise ConfigError(f"cannot resume {path}: it was trained with {key}={saved[key]}, "
                                  f"this run has {value}")
        self.state = TrainerState(**saved["state"])
        if self.state.step < self.state.total_steps:  # a stopped run continues when resumed
            self.state.should_stop, self.state.stop_reason = False, None
        order.state = DataState.from_json(saved["data"])
        if distributed.is_main_process():
            self._truncate_metrics(self.state.step)
        logger.info("resumed from %s (step %d)", path, self.state.step)
        self._log({"step": self.state.step, "event": "resume", "path": str(path)})
        return True


def _progress_line(record: dict[str, Any], total_steps: int) -> str:
    """One log line of a training window: step, loss, rate and throughput."""
    parts = [f"step {record['step']}/{total_steps}"]
    if "loss" in record:
        parts.append(f"loss {record['loss']:.4f}")
    parts.append(f"lr {record['lr']:.3g}")
    if record.get("steps_per_s"):
        parts.append(f"{record['steps_per_s']:.2f} steps/s ({record['examples_per_s']:.1f} examples/s)")
    if record.get("tokens_per_s"):
        parts.append(f"{record['tokens_per_s']:.0f} tokens/s")
    return ", ".join(parts)


def _flag(name: str) -> str:
    """The command-line option of a TrainingConfig field."""
    return "--" + name.replace("_", "-")
