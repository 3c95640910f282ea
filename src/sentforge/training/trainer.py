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
- `evaluator`: a callable `encoder -> metrics dict` or a `Task`, run every `eval_every` steps and at the
  schedule's last step (main process).
- `callbacks` are called after every optimizer step with the `TrainerState` (its `loss` is the latest
  one read: every step's on the CPU; on accelerators the numbers are read at logging, evaluation and
  checkpoint steps only, see training/step_values.py).
- On accelerators the loss and statistics stay on the device between those reads, so a non-finite
  loss is detected at the next read; the weights are then not saved (the last checkpoint stays whole).
  On the CPU it is detected before its step is applied.
- `batch_sampler` (optional) gives fixed batches of example indices instead of a random permutation
  (see training/batch_order.py: `BatchSampler`); the epoch order of those batches is still seeded.
- Stopping: `time_limit` and early stopping are rules of training/stopping.py, run after every step
  before the `callbacks`; a rule or a callback stops the run by setting `state.should_stop`. Whatever
  stopped it, that step is the last: its numbers are read and, with checkpoints on, it is checkpointed
  once (before the callbacks when a rule or the schedule asks), so `resume=True` continues from it.

The output directory holds `metrics.jsonl` (one JSON object per logged step / evaluation) and
`checkpoints/step-XXXXXXXX/` (see training/checkpoint.py); `resume=True` continues from the newest
complete checkpoint with identical results to an uninterrupted run (same seed, same device type).
"""

from __future__ import annotations

import contextlib
import logging
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn
from tqdm.auto import tqdm

from sentforge.support import distributed
from sentforge.support.device import parse_device
from sentforge.support.errors import ConfigError, OutputExistsError, TrainingDivergedError
from sentforge.support.seed import set_seed
from sentforge.training.batch_order import BatchOrder, BatchSampler, DataState, process_slice, text_lengths
from sentforge.training.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from sentforge.training.config import TrainingConfig
from sentforge.training.metrics_log import METRICS_FILE, MetricsLog, progress_line
from sentforge.training.optim import build_optimizer, build_scheduler, parameter_groups, schedule_from_config
from sentforge.training.state import LoopState, TrainerState, TrainResult
from sentforge.training.step_values import StepRecord
from sentforge.training.stopping import EarlyStopping, TimeLimit, early_stopping_metric

__all__ = ["METRICS_FILE", "TrainResult", "Trainer", "TrainerState", "TrainingConfig"]

logger = logging.getLogger(__name__)

CHECKPOINTS_DIR = "checkpoints"


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
        self.log = MetricsLog(self.output_dir)
        self.time_limit = TimeLimit(config.time_limit) if config.time_limit is not None else None
        self.early_stopping = EarlyStopping(
            config.early_stopping_patience, early_stopping_metric(config.early_stopping_metric, evaluator),
            config.early_stopping_mode) if config.early_stopping_patience else None
        self.stop_rules: list[Callable[[TrainerState], None]] = [
            rule for rule in (self.time_limit, self.early_stopping) if rule is not None]

    # -- setup -----------------------------------------------------------------------------------

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
        self.log.remove()
        shutil.rmtree(self.output_dir / CHECKPOINTS_DIR, ignore_errors=True)

    def _setup(self) -> LoopState:
        """Device, processes, data order, optimizer, schedule; the checkpoint resumed from if any."""
        cfg = self.config
        device = distributed.process_device(parse_device(cfg.device) if cfg.device else None)
        distributed.init_distributed(device)
        world, rank = distributed.world_size(), distributed.rank()
        self._check_output()
        distributed.barrier()
        set_seed(cfg.seed + rank)

        # One global batch per optimizer step: every process takes its slice and splits it into
        # `gradient_accumulation` micro-batches of `batch_size`.
        global_batch = cfg.batch_size * world * cfg.gradient_accumulation
        lengths = text_lengths(self.data) if cfg.group_by_length else None
        order = BatchOrder(len(self.data), global_batch, cfg.seed, lengths, sampler=self.batch_sampler)
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
        loop = LoopState(
            model=self.objective, device=device, autocast_dtype=autocast_dtype, rank=rank, world=world,
            global_batch=global_batch, total_steps=total_steps, order=order, optimizer=optimizer,
            scheduler=scheduler, scaler=scaler,
            checkpoints=self.output_dir / CHECKPOINTS_DIR if self.output_dir is not None and cfg.checkpoint_every
            else None,
            read_every_step=self._reads_every_step(device))

        if self.output_dir is not None and distributed.is_main_process():
            self.output_dir.mkdir(parents=True, exist_ok=True)
        resumed = self._resume(loop) if cfg.resume else False
        if distributed.is_distributed():
            loop.model = nn.parallel.DistributedDataParallel(
                self.objective, device_ids=[device.index] if device.type == "cuda" else None,
                find_unused_parameters=cfg.find_unused_parameters)
        if not resumed:
            self.log.write({"step": 0, "event": "start", "config": cfg.to_json(), "world_size": world,
                            "total_steps": total_steps, "examples": len(self.data)})
            if cfg.eval_at_start:
                self._evaluate(loop)
        return loop

    # -- evaluation ------------------------------------------------------------------------------

    def _evaluate(self, loop: LoopState) -> None:
        """Score the encoder (main process), log the metrics and feed them to early stopping."""
        if self.evaluator is None:
            return
        if distributed.is_main_process():
            was_training = self.objective.training
            self.objective.eval()
            try:
                run = getattr(self.evaluator, "evaluate", self.evaluator)
                with torch.no_grad():
                    metrics = dict(run(self.encoder))
            finally:
                self.objective.train(was_training)
            self.log.write({"step": self.state.step, "eval": metrics})
            logger.info("step %d: evaluation %s", self.state.step, metrics)
            if self.early_stopping is not None:
                self.early_stopping.evaluated(self.state, metrics)
            loop.evaluations.append({"step": self.state.step, **metrics})

    def _agree_on_stop(self) -> None:
        """Every process follows the first one's decision to stop (else DDP would hang)."""
        stop = torch.tensor([1.0 if self.state.should_stop else 0.0])
        if distributed.is_distributed():
            torch.distributed.broadcast(stop, src=0)
        self.state.should_stop = bool(stop.item())

    # -- the loop --------------------------------------------------------------------------------

    def train(self) -> TrainResult:
        cfg = self.config
        loop = self._setup()
        self.objective.train()
        loop.progress = tqdm(total=loop.total_steps, initial=self.state.step, desc="train", unit="step",
                             disable=(not distributed.is_main_process()) or (
                                 None if cfg.show_progress is None else not cfg.show_progress), dynamic_ncols=True)
        if self.time_limit is not None:
            self.time_limit.start()
        loop.window_start = loop.segment_start = time.perf_counter()
        try:
            while self.state.step < loop.total_steps and not self.state.should_stop:
                self._step(loop)
            self._absorb(loop)
        finally:
            loop.progress.close()
        if cfg.eval_at_end and not (loop.evaluations and loop.evaluations[-1]["step"] == self.state.step):
            self._evaluate(loop)
            if self.early_stopping is not None:  # this evaluation counts too: the run is marked stopped early
                self.early_stopping(self.state)
        self.log.write({"step": self.state.step, "event": "end", "stopped_early": self.state.should_stop})
        return TrainResult(steps=self.state.step, losses=loop.losses, evaluations=loop.evaluations,
                           stopped_early=self.state.should_stop,
                           tokens_per_second=loop.tokens / loop.token_seconds if loop.token_seconds > 0 else None)

    def _step(self, loop: LoopState) -> None:
        """One optimizer step and what falls due at it: logging, evaluation, the stop rules and callbacks,
        a checkpoint."""
        cfg, state = self.config, self.state
        loss, stats = self._optimizer_step(loop)
        state.step += 1
        state.epoch = loop.order.state.epoch
        state.lr = loop.scheduler.get_last_lr()[0]
        loop.values.add(state.step, loss, stats)
        loop.progress.update(1)

        log_now = state.step % cfg.log_every == 0 or state.step == loop.total_steps
        # The schedule's last step is evaluated too: its model, at the end of the learning-rate decay, is otherwise
        # never compared when the schedule is no multiple of the cadence.
        eval_now = bool(cfg.eval_every and (state.step % cfg.eval_every == 0 or state.step == loop.total_steps))
        save_now = loop.checkpoints is not None and (
            state.step % cfg.checkpoint_every == 0 or state.step == loop.total_steps)
        if loop.read_every_step or log_now or eval_now or save_now:
            self._read(loop)
        if log_now:
            self._log_window(loop)
        if eval_now:
            self._evaluate(loop)
        for rule in self.stop_rules:
            rule(state)
        if self.stop_rules:
            self._agree_on_stop()
        # Kept before the user's callbacks, so that a run killed inside one resumes from this step.
        saved = self._keep(loop, save_now)
        stopped = state.should_stop
        for callback in self.callbacks:
            callback(state)
        if state.should_stop and not stopped and not saved:
            self._keep(loop, False)
        if loop.read_this_step:
            loop.segment_start, loop.read_this_step = time.perf_counter(), False

    def _keep(self, loop: LoopState, save_now: bool) -> bool:
        """The one stop path, whatever stopped the run: its last step is read and, with checkpoints on, saved
        (as every checkpoint step is), so that a resumed run continues from it. True when saved."""
        if self.state.should_stop:
            self._read(loop)
        if loop.checkpoints is None or not (save_now or self.state.should_stop):
            return False
        self._save(loop)
        return True

    def _read(self, loop: LoopState) -> None:
        """Read this step's numbers (and those of the steps before it not read yet), once."""
        if not loop.read_this_step:
            self._absorb(loop)
            loop.read_this_step = True

    def _absorb(self, loop: LoopState) -> None:
        """Take read step numbers into the losses, the log window and the throughput; a non-finite
        loss found here (accelerators: up to a logging interval late) stops training unsaved."""
        records: list[StepRecord] = loop.values.read()
        if not records:
            return
        for record in records:
            if not math.isfinite(record.loss):
                raise TrainingDivergedError(
                    f"training diverged at step {record.step}: loss is {record.loss} (read at step "
                    f"{self.state.step}); these weights were not saved (the last checkpoint, if any, is intact); "
                    "lower --lr or keep gradient clipping on")
            loop.losses.append(record.loss)
            for key, value in {"loss": record.loss, **record.stats}.items():
                loop.window[key] = loop.window.get(key, 0.0) + value
            loop.window_steps += 1
        if any("tokens" in record.stats for record in records):
            loop.tokens += sum(record.stats.get("tokens", 0.0) for record in records)
            loop.token_seconds += time.perf_counter() - loop.segment_start
        self.state.loss = records[-1].loss
        loop.progress.set_postfix(loss=f"{self.state.loss:.4f}", refresh=False)

    def _log_window(self, loop: LoopState) -> None:
        """Log the means of the steps since the last logged one, with their rates."""
        span = time.perf_counter() - loop.window_start
        window, window_steps = loop.window, loop.window_steps
        record = {"step": self.state.step, "epoch": loop.order.state.epoch, "lr": self.state.lr,
                  "steps_per_s": window_steps / span if span > 0 else None,
                  "examples_per_s": window_steps * loop.global_batch / span if span > 0 else None}
        for key, value in window.items():
            record[key] = value if key == "tokens" else value / window_steps
        if "tokens" in window and span > 0:
            record["tokens_per_s"] = window["tokens"] / span
        self.log.write(record)
        if loop.progress.disable and distributed.is_main_process():
            # No progress bar (not a terminal, e.g. piped to a file): the log carries the progress.
            logger.info("%s", progress_line(record, loop.total_steps))
        loop.window, loop.window_steps, loop.window_start = {}, 0, time.perf_counter()

    def _optimizer_step(self, loop: LoopState) -> tuple[torch.Tensor | float, dict[str, Any]]:
        """One optimizer step; returns its global loss and summed statistics, left on the device.
        Where every step is read (the CPU), the loss is read here and a non-finite one stops before
        the step is applied."""
        cfg, device = self.config, loop.device
        accumulation = cfg.gradient_accumulation
        total_loss = torch.zeros((), device=device)
        stats: dict[str, float] = {}
        share = process_slice(loop.order.next_batch(), loop.rank, loop.world)
        for micro in range(accumulation):
            indices = share[micro * cfg.batch_size:(micro + 1) * cfg.batch_size]
            batch = [self.data[int(i)] for i in indices]
            last = micro == accumulation - 1
            sync = contextlib.nullcontext() if last or not hasattr(loop.model, "no_sync") else loop.model.no_sync()
            with sync:
                with torch.autocast(device.type, dtype=loop.autocast_dtype, enabled=loop.autocast_dtype is not None):
                    loss = loop.model(batch)
                if loss.dim() != 0:
                    raise ConfigError(f"{type(self.objective).__name__}.forward must return a scalar loss, "
                                      f"got shape {tuple(loss.shape)}")
                scaled = loss / accumulation
                (loop.scaler.scale(scaled) if loop.scaler is not None else scaled).backward()
            total_loss += scaled.detach().float()
            for key, value in (getattr(self.objective, "last_stats", None) or {}).items():
                value = value.detach().float() if isinstance(value, torch.Tensor) else float(value)
                stats[key] = stats.get(key, 0.0) + value / (1 if key == "tokens" else accumulation)
        loss = distributed.mean_across_processes(total_loss)
        if loop.read_every_step:
            loss = float(loss.item())
            if not math.isfinite(loss):
                raise TrainingDivergedError(
                    f"training diverged at step {self.state.step + 1}: loss is {loss}; the weights of that step "
                    "were not applied (the last checkpoint, if any, is intact); lower --lr or keep gradient "
                    "clipping on")
        if loop.scaler is not None:
            loop.scaler.unscale_(loop.optimizer)
        if cfg.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.objective.parameters(), cfg.max_grad_norm)
        if loop.scaler is not None:
            loop.scaler.step(loop.optimizer)
            loop.scaler.update()
        else:
            loop.optimizer.step()
        loop.scheduler.step()
        loop.optimizer.zero_grad(set_to_none=True)
        if "tokens" in stats and distributed.is_distributed():
            tokens = torch.tensor([float(stats["tokens"])], dtype=torch.float64)
            torch.distributed.all_reduce(tokens)
            stats["tokens"] = float(tokens.item())
        return loss, stats

    # -- checkpoints -----------------------------------------------------------------------------

    def _save(self, loop: LoopState) -> None:
        if not all(torch.isfinite(p).all() for p in self.objective.parameters()):
            raise TrainingDivergedError(f"training diverged at step {self.state.step}: the weights are no longer "
                                        "finite; not saving them (the last checkpoint, if any, is intact)")
        trainer_state = {"state": asdict(self.state), "data": loop.order.state.to_json(),
                         "global_batch_size": loop.global_batch, "seed": self.config.seed}
        path = save_checkpoint(loop.checkpoints, self.state.step, self.objective, loop.optimizer, loop.scheduler,
                               trainer_state, loop.scaler, self.config.keep_last)
        self.log.write({"step": self.state.step, "event": "checkpoint", "path": str(path)})

    def _resume(self, loop: LoopState) -> bool:
        root = self.output_dir / CHECKPOINTS_DIR
        path = latest_checkpoint(root)
        if path is None:
            logger.warning("--resume: no complete checkpoint in %s; starting from the beginning", root)
            if distributed.is_main_process():
                self.log.remove()  # the log of the lost start
            return False
        saved = load_checkpoint(path, self.objective, loop.optimizer, loop.scheduler, loop.scaler)
        for key, value in (("global_batch_size", loop.global_batch), ("seed", self.config.seed)):
            if saved[key] != value:
                raise ConfigError(f"cannot resume {path}: it was trained with {key}={saved[key]}, "
                                  f"this run has {value}")
        self.state = TrainerState(**saved["state"])
        if self.state.step < self.state.total_steps:  # a stopped run continues when resumed
            self.state.should_stop, self.state.stop_reason = False, None
        loop.order.state = DataState.from_json(saved["data"])
        if distributed.is_main_process():
            self.log.truncate_after(self.state.step)
        logger.info("resumed from %s (step %d)", path, self.state.step)
        self.log.write({"step": self.state.step, "event": "resume", "path": str(path)})
        return True
