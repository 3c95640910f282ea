"""`sentforge.train_cross_encoder`: a cross-encoder trained on labelled pairs, in a run directory.

    ce = sentforge.train_cross_encoder("all-MiniLM-L6-v2", "labelled.jsonl", "ce-model", epochs=4)

The examples: every pair with a label (1 related, 0 not; a score in [0, 1] is a soft label), and for each
label-1 pair `negatives` more label-0 pairs: its first text with a text drawn at random from the other
groups' second texts (in-pool negatives, as sentence-transformers' cross-encoder examples add). With
`symmetric`, each pair is also read in the other order (for tasks where order carries no meaning: duplicate
questions, paraphrases). The run directory is every training run's (recipes/run_dir.py): the model at the
top, `train.json`, `training/` (metrics and checkpoints); the same output, lock and resume rules.
"""

from __future__ import annotations

import logging
import os
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sentforge.recipes.data import PYTHON_ARGUMENTS, ArgumentNames, data_paths, read_examples
from sentforge.recipes.run_dir import TRAIN, RunDirectory
from sentforge.support.errors import ConfigError
from sentforge.support.output_guard import locked_output

logger = logging.getLogger(__name__)

METHOD = "cross-encoder"


@dataclass(frozen=True)
class CrossEncoderSettings:
    """How a cross-encoder trains: the measured defaults on 2-core CPUs (docs/cross-encoder.md)."""

    epochs: int = 4
    batch_size: int = 16
    lr: float = 5e-5
    warmup_ratio: float = 0.1
    max_length: int = 256
    negatives: int = 1  # in-pool negatives per label-1 pair
    symmetric: bool = False
    pos_weight: float = 1.0

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "max_length"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} (--{name.replace('_', '-')}) must be a positive integer, got {value!r}")
        if not isinstance(self.negatives, int) or self.negatives < 0:
            raise ConfigError(f"negatives (--negatives) must be 0 or more, got {self.negatives!r}")
        if not 0 < self.lr <= 1:
            raise ConfigError(f"lr (--lr) must be in (0, 1], got {self.lr!r}")
        if not 0 <= self.warmup_ratio < 1:
            raise ConfigError(f"warmup_ratio (--warmup-ratio) must be in [0, 1), got {self.warmup_ratio!r}")
        if not self.pos_weight > 0:
            raise ConfigError(f"pos_weight (--pos-weight) must be above 0, got {self.pos_weight!r}")


def training_examples(pairs: Sequence[tuple[str, str, Any]], settings: CrossEncoderSettings,
                      seed: int) -> list[tuple[str, str, float]]:
    """(text, text, target) rows: the labelled pairs, `negatives` in-pool negatives per label-1 pair, and with
    `symmetric` each row in both orders."""
    labelled = [(a, b, float(label)) for a, b, label in pairs if label is not None]
    if not labelled:
        raise ConfigError("the pairs hold no label: a cross-encoder trains on pairs labelled 0/1 (or scored in [0, 1])")
    outside = [t for _, _, t in labelled if not 0 <= t <= 1]
    if outside:
        raise ConfigError(f"a cross-encoder's targets are 0/1 labels or scores in [0, 1]; got {outside[0]!r}")
    rows = list(labelled)
    if settings.negatives:
        rng = random.Random(seed)
        related: dict[str, set[str]] = {}
        for a, b, _ in labelled:
            related.setdefault(a, set()).add(b)
        pool = sorted({b for _, b, _ in labelled})
        for a, _, target in labelled:
            if target < 1:
                continue
            for _ in range(settings.negatives):
                for _ in range(10):  # a draw among the query's own texts is drawn again
                    text = pool[rng.randrange(len(pool))]
                    if text not in related[a] and text != a:
                        rows.append((a, text, 0.0))
                        break
    if settings.symmetric:
        rows += [(b, a, t) for a, b, t in rows]
    return rows


def train_cross_encoder(model: str | os.PathLike | Any, data: Any, output: str | os.PathLike,
                        **settings: Any) -> Any:
    """Train a cross-encoder on labelled pairs `data` and write it to `output`; returns the trained
    CrossEncoder (the keywords of `run_cross_encoder`)."""
    return run_cross_encoder(model, data, output, **settings)[0]


@locked_output(TRAIN)
def run_cross_encoder(model: str | os.PathLike | Any, data: Any, output: str | os.PathLike, *,
                      steps: int | None = None, time_limit: float | None = None, resume: bool = False,
                      overwrite: bool = False, device: str | None = None, seed: int = 0,
                      argument_names: ArgumentNames = PYTHON_ARGUMENTS, show_progress: bool | None = None,
                      **settings: Any) -> tuple[Any, dict[str, Any]]:
    """Train a cross-encoder on labelled pairs `data` and write it to `output`; returns the trained
    CrossEncoder and the run summary (train.json). model: an encoder spec or Encoder (a new cross-encoder from
    its transformer) or a cross-encoder directory (trained on); settings: the fields of CrossEncoderSettings;
    `steps` replaces its epochs; `time_limit` (seconds) stops training cleanly, keeping the last step's model."""
    from sentforge.training.config import TrainingConfig

    # Every option is checked before the model stack (torch, transformers) loads and before anything is written.
    unknown = sorted(set(settings) - set(CrossEncoderSettings.__dataclass_fields__))
    if unknown:
        raise ConfigError(f"unknown cross-encoder setting(s) {', '.join(unknown)}; choose from "
                          f"{', '.join(CrossEncoderSettings.__dataclass_fields__)}")
    chosen = CrossEncoderSettings(**settings)
    given = not isinstance(model, (str, os.PathLike))
    spec = getattr(model, "name", "") if given else str(model)
    paths = data_paths(data)
    run = RunDirectory(output, resume=resume, overwrite=overwrite, model=None if given else spec,
                       inputs=[(argument_names.data, path) for path in paths])
    run.check()
    budget = {"steps": steps} if steps is not None else {"epochs": chosen.epochs}
    common = {"batch_size": chosen.batch_size, "lr": chosen.lr, "warmup_ratio": chosen.warmup_ratio,
              "time_limit": time_limit, "seed": seed, "device": device, "show_progress": show_progress}
    TrainingConfig(output_dir=run.work, **budget, **common)  # checked before any data or model is read
    examples = training_examples(read_examples("labelled pairs", data, arguments=argument_names), chosen, seed)
    from sentforge.cross_encoder import CrossEncoder, is_cross_encoder_dir
    from sentforge.objectives.cross_encoder import CrossEncoderBCE
    from sentforge.recipes.summary import run_summary
    from sentforge.support.seed import set_seed
    from sentforge.training.trainer import Trainer

    set_seed(seed)
    if isinstance(model, CrossEncoder):
        cross_encoder = model
    elif not given and is_cross_encoder_dir(spec):
        cross_encoder = CrossEncoder.load(spec, device=device, max_length=chosen.max_length)
    else:
        cross_encoder = CrossEncoder.from_encoder(model, max_length=chosen.max_length, seed=seed, device=device)
    run.prepare(device)
    objective = CrossEncoderBCE(cross_encoder, pos_weight=chosen.pos_weight)
    config = TrainingConfig(output_dir=run.work, resume=resume, overwrite=True, **budget, **common)
    trainer = Trainer(cross_encoder, objective, examples, config)
    positives = sum(t >= 0.5 for _, _, t in examples)
    logger.info("cross-encoder: %d training rows (%d positive), %s", len(examples), positives,
                ", ".join(f"{k}={v}" for k, v in asdict(chosen).items()))
    with run.training():
        result = trainer.train()
    cross_encoder.eval()
    extra = {"stopped": trainer.state.stop_reason} if trainer.state.stop_reason else {}
    summary = run_summary(METHOD, spec, [str(p) for p in paths] or "in memory", len(examples), result.steps,
                          result.losses[-1] if result.losses else None, config.to_json(), asdict(chosen), **extra)
    cross_encoder.name = str(output)
    run.finish(cross_encoder.save, summary)
    return cross_encoder, summary

