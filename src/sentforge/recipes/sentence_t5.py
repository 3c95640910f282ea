"""Sentence-T5 (Ni et al., 2022): a dual encoder trained with an in-batch contrastive loss, in stages.

Encoders (`variant`):
  enc-mean      mean of the T5 encoder's token outputs (BERT-like encoders: `mean`);
  enc-first     the encoder's first token output (BERT-like: `cls`);
  encdec-first  the text goes into the encoder, the decoder start token is the only decoder input, and
                the first decoder output is the vector (T5-family checkpoints only).
Each is followed by a linear projection (no bias) to `projection_dim` and L2 normalisation, so that
the dot product of two vectors is their cosine.

Training: ContrastiveLoss (objectives/contrastive.py): softmax over the similarities of each query to
every positive (and hard negative) of the global batch, temperature 0.01 (paper), optionally
symmetric; the candidates are gathered across processes under DDP. The stages run in order, each with
a fresh optimizer and schedule: stage 1 on question–answer pairs, stage 2 on NLI triples (premise,
entailment, contradiction as hard negative); see data/qa.py. T5-family encoders train with Adafactor
at lr 1e-3, constant for the first 10% of the steps and then decaying linearly to 0 (paper);
BERT-like encoders with AdamW at 2e-5 (sentence-transformers' fine-tuning rate) on the same schedule.

Layout of `output_dir`: `stage-<i>-<kind>/` holds the encoder after stage i (a sentence-transformers
directory) and `training/stage-<i>-<kind>/` its metrics, checkpoints and `stage.json` (written last:
a stage with a stage.json is finished).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.support import distributed
from sentforge.encoder import Encoder
from sentforge.support.errors import ConfigError
from sentforge.support.io import save_json
from sentforge.loading import SHORT_NAMES, build_encoder, load
from sentforge.modules import Normalize, Pooling, Projection, T5EncoderDecoder, Transformer
from sentforge.modules.backbone import T5_FAMILY
from sentforge.objectives.contrastive import ContrastiveLoss
from sentforge.support.output_guard import locked_output
from sentforge.recipes.run_dir import TRAIN, TRAINING_DIR, RunDirectory
from sentforge.recipes.summary import record_on_card, run_summary
from sentforge.training.trainer import Trainer, TrainerState, TrainingConfig

logger = logging.getLogger(__name__)

# variant -> (backbone, pooling) of build_encoder
VARIANTS = {"enc-mean": ("encoder", "mean"), "enc-first": ("encoder", "cls"), "encdec-first": ("t5-encdec", "cls")}
VARIANT_ALIASES = {"mean": "enc-mean", "cls": "enc-first", "first": "enc-first"}
STAGE_KINDS = ("qa", "nli")
STAGE_FILE = "stage.json"
TEMPERATURE = 0.01  # Ni et al., 2022
SCHEDULE = "t5-constant-then-linear"  # constant for 10% of the steps, then linear decay to 0 (paper)
T5_TRAINING = {"optimizer": "adafactor", "lr": 1e-3, "weight_decay": 0.0}  # paper
ADAMW_TRAINING = {"optimizer": "adamw", "lr": 2e-5, "weight_decay": 0.01}  # BERT-like: sentence-transformers' rate
# Settings that must match for a finished stage to be reused by --resume.
_RESUME_KEYS = ("kind", "examples", "requested_steps", "requested_epochs", "batch_size", "seed")


def canonical_variant(name: str) -> str:
    variant = VARIANT_ALIASES.get(name, name)
    if variant not in VARIANTS:
        raise ConfigError(f"unknown Sentence-T5 pooling {name!r}; choose {', '.join(VARIANTS)} "
                          f"(BERT-like encoders: {', '.join(VARIANT_ALIASES)})")
    return variant


def is_t5(encoder: Encoder) -> bool:
    backbone = encoder.input_module
    return isinstance(backbone, T5EncoderDecoder) or (
        isinstance(backbone, Transformer) and backbone.model.config.model_type in T5_FAMILY)


def variant_of(encoder: Encoder) -> str:
    """The Sentence-T5 variant name of an encoder (BERT-like: its pooling, mean or cls)."""
    if isinstance(encoder.input_module, T5EncoderDecoder):
        return "encdec-first"
    pooling = "+".join(next(m for m in encoder if isinstance(m, Pooling)).modes)
    return {"mean": "enc-mean", "cls": "enc-first"}.get(pooling, pooling) if is_t5(encoder) else pooling


def sentence_t5_encoder(model: str | Path, variant: str | None = None, projection_dim: int | None = None,
                        max_seq_length: int | None = None) -> Encoder:
    """A Sentence-T5 encoder: backbone -> pooling -> projection -> L2 normalisation.

    `model` is a Hugging Face checkpoint (directory or hub id; `variant` default enc-mean, projection
    default: the hidden size), or a sentence-transformers / sentforge directory (or short name), whose
    modules are kept: its pooling is replaced only when `variant` is given, and a projection and a
    normalisation are added when it lacks them.
    """
    if projection_dim is not None and projection_dim < 1:
        raise ConfigError(f"projection dimension must be >= 1, got {projection_dim}")
    path = Path(model)
    if (path / "modules.json").is_file() or str(model) in SHORT_NAMES:
        encoder = load(model)
        if not isinstance(encoder, Encoder):
            raise ConfigError(f"{model}: {type(encoder).__name__} is not trainable")
        encoder = _adapted(encoder, None if variant is None else canonical_variant(variant), projection_dim)
    else:
        backbone, pooling = VARIANTS[canonical_variant(variant or "enc-mean")]
        encoder = build_encoder(model, pooling=pooling, backbone=backbone, normalize=False,
                                max_seq_length=max_seq_length, name=str(model))
        width = encoder.dim
        encoder = Encoder([*encoder, Projection(width, projection_dim or width, bias=False), Normalize()],
                          name=str(model))
    if max_seq_length:
        encoder.max_seq_length = max_seq_length
    return encoder


def _adapted(encoder: Encoder, variant: str | None, projection_dim: int | None) -> Encoder:
    modules = list(encoder)
    where = [i for i, m in enumerate(modules) if isinstance(m, Pooling)]
    if len(where) != 1 or where[0] != 1:
        raise ConfigError(f"{encoder.name}: Sentence-T5 trains backbone -> pooling [-> projection] [-> normalize]; "
                          f"this model has {', '.join(type(m).__name__ for m in modules)}")
    extra = modules[2:]
    if any(not isinstance(m, (Projection, Normalize)) for m in extra):
        raise ConfigError(f"{encoder.name}: cannot train through {', '.join(type(m).__name__ for m in extra)} "
                          "(Sentence-T5 ends with a projection and L2 normalisation)")
    if variant is not None:
        encdec = isinstance(modules[0], T5EncoderDecoder)
        if encdec and variant != "encdec-first":
            raise ConfigError(f"{encoder.name} is an encoder-decoder (encdec-first) model; --pooling {variant} "
                              "needs an encoder: start from the T5 checkpoint")
        if not encdec and variant == "encdec-first":
            raise ConfigError(f"{encoder.name} is an encoder model; --pooling encdec-first needs the T5 "
                              "encoder-decoder: start from the T5 checkpoint")
        modules[1] = Pooling(modules[1].dim, VARIANTS[variant][1])
    projections = [m for m in extra if isinstance(m, Projection)]
    if projections:
        if projection_dim is not None and projection_dim != projections[-1].output_dim:
            raise ConfigError(f"{encoder.name} already projects to {projections[-1].output_dim} dimensions; "
                              f"--projection-dim {projection_dim} differs")
        head = [m for m in extra if not isinstance(m, Normalize)]
    else:
        width = modules[1].output_dim
        head = [Projection(width, projection_dim or width, bias=False)]
    return Encoder([modules[0], modules[1], *head, Normalize()], name=encoder.name)


@dataclass
class Stage:
    """One training stage: `kind` (qa or nli) names it; `examples` are tuples (query, positive[,
    hard negative]) of one arity; a budget of `steps` or `epochs` (default: one epoch)."""

    kind: str
    examples: Sequence[tuple[str, ...]]
    steps: int | None = None
    epochs: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in STAGE_KINDS:
            raise ConfigError(f"unknown stage {self.kind!r}; choose {', '.join(STAGE_KINDS)}")
        if not self.examples:
            raise ConfigError(f"stage {self.kind} has no training examples")
        arities = {len(example) for example in self.examples}
        if len(arities) != 1 or min(arities) < 2:
            raise ConfigError(f"stage {self.kind}: examples must all be (query, positive) pairs or all "
                              f"(query, positive, negative) triples; got sizes {sorted(arities)}")
        if self.steps is not None and self.epochs is not None:
            raise ConfigError(f"stage {self.kind}: give steps or epochs, not both")
        for name in ("steps", "epochs"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"stage {self.kind}: {name} must be >= 1, got {value}")

    def name(self, index: int) -> str:
        return f"stage-{index}-{self.kind}"


@dataclass
class SentenceT5Config:
    """Training settings shared by the stages; None picks the recipe for the backbone (T5: Adafactor
    1e-3, no weight decay; BERT-like: AdamW 2e-5, weight decay 0.01)."""

    batch_size: int = 64  # per process; the paper's 2048 is a TPU-pod figure
    temperature: float = TEMPERATURE
    symmetric: bool = False
    optimizer: str | None = None
    lr: float | None = None
    weight_decay: float | None = None
    max_grad_norm: float | None = 1.0
    seed: int = 0
    device: str | None = None
    checkpoint_every: int | None = None
    keep_last: int = 2
    log_every: int = 10
    show_progress: bool | None = None

    def training_settings(self, encoder: Encoder) -> dict[str, Any]:
        settings = dict(T5_TRAINING if is_t5(encoder) else ADAMW_TRAINING)
        chosen = {"optimizer": self.optimizer, "lr": self.lr, "weight_decay": self.weight_decay}
        settings.update({key: value for key, value in chosen.items() if value is not None})
        if settings["optimizer"] in ("adamw", "adam") and (self.device or "cpu").startswith(("cpu", "cuda")):
            settings["optimizer_options"] = {"fused": True}  # one kernel per step
        return settings


@dataclass
class StageResult:
    name: str
    summary: dict[str, Any]
    result: Any = None  # TrainResult; None when a finished stage was reused by resume


def _stage_summary(stage: Stage, name: str, config: SentenceT5Config) -> dict[str, Any]:
    return {"stage": name, "kind": stage.kind, "examples": len(stage.examples), "requested_steps": stage.steps,
            "requested_epochs": stage.epochs, "batch_size": config.batch_size, "seed": config.seed}


def _finished(run_dir: Path, expected: dict[str, Any]) -> dict[str, Any] | None:
    path = run_dir / STAGE_FILE
    if not path.is_file():
        return None
    summary = json.loads(path.read_text(encoding="utf-8"))
    changed = [f"{key}={summary.get(key)!r} (now {expected[key]!r})" for key in _RESUME_KEYS
               if summary.get(key) != expected[key]]
    if changed:
        raise ConfigError(f"cannot resume: {expected['stage']} finished with other settings: {', '.join(changed)}")
    return summary


def train_stages(encoder: Encoder, stages: Sequence[Stage], output_dir: str | Path, config: SentenceT5Config,
                 resume: bool = False,
                 callbacks: Sequence[Callable[[TrainerState], None]] = ()) -> tuple[Encoder, list[StageResult]]:
    """Train `encoder` through `stages` in order; returns the final encoder and each stage's result.

    After each stage the encoder is saved to `output_dir/stage-<i>-<kind>/`. With `resume`, finished
    stages are loaded from there and the unfinished one continues from its newest checkpoint (set
    `config.checkpoint_every`), ending with the weights of an uninterrupted run. Only the first
    process writes; `callbacks` run after every optimizer step of every stage.
    """
    if not stages:
        raise ConfigError("Sentence-T5 training needs at least one stage")
    output_dir = Path(output_dir)
    settings = config.training_settings(encoder)
    results = []
    for index, stage in enumerate(stages, 1):
        name = stage.name(index)
        model_dir, run_dir = output_dir / name, output_dir / TRAINING_DIR / name
        expected = _stage_summary(stage, name, config)
        done = _finished(run_dir, expected) if resume else None
        if done is not None:
            logger.info("%s: finished earlier; loading %s", name, model_dir)
            encoder = Encoder.load(model_dir, name=encoder.name)
            results.append(StageResult(name, done))
            continue
        objective = ContrastiveLoss(encoder, temperature=config.temperature, similarity="cosine",
                                    symmetric=config.symmetric)
        training = TrainingConfig(
            output_dir=run_dir, steps=stage.steps, epochs=None if stage.steps else (stage.epochs or 1),
            batch_size=config.batch_size, schedule=SCHEDULE, max_grad_norm=config.max_grad_norm, seed=config.seed,
            device=config.device, checkpoint_every=config.checkpoint_every, keep_last=config.keep_last,
            log_every=config.log_every, resume=resume, overwrite=True, show_progress=config.show_progress,
            find_unused_parameters=distributed.launched_distributed(), **settings)
        logger.info("%s: %d examples of %d texts, %s", name, len(stage.examples), len(stage.examples[0]),
                    ", ".join(f"{k}={v}" for k, v in settings.items() if k != "optimizer_options"))
        result = Trainer(encoder, objective, stage.examples, training, callbacks=callbacks).train()
        summary = {**expected, "steps": result.steps,
                   "final_loss": result.losses[-1] if result.losses else None,
                   "temperature": config.temperature, "symmetric": config.symmetric, "training": training.to_json()}
        if distributed.is_main_process():
            encoder.save(model_dir, overwrite=True)
            save_json(run_dir / STAGE_FILE, summary)
        distributed.barrier()
        results.append(StageResult(name, summary, result))
    return encoder, results


def read_stage_data(kind: str, sources: Sequence[Any]) -> list[tuple[str, ...]]:
    """The de-duplicated examples of a stage from data files (data/qa.py readers) or from tuples."""
    from sentforge.data.qa import read_nli_triples, read_qa_pairs

    option = f"--{kind}-data"
    if not sources:
        raise ConfigError(f"--stage {kind} needs {option} (repeat it for several sources)")
    if all(isinstance(source, tuple) for source in sources):
        return list(dict.fromkeys(sources))
    read = read_qa_pairs if kind == "qa" else read_nli_triples
    examples: list[tuple[str, ...]] = []
    for path in sources:
        found = read(path)
        logger.info("%s %s: %d examples", option, path, len(found))
        examples.extend(found)
    return list(dict.fromkeys(examples))


@locked_output(TRAIN)
def train_sentence_t5(model: str | os.PathLike, data: Mapping[str, Sequence[Any]], output: str | os.PathLike,
                      stages: Sequence[str] = STAGE_KINDS, config: SentenceT5Config | None = None, *,
                      steps: Sequence[int | None] | None = None, epochs: Sequence[int | None] | None = None,
                      pooling: str | None = None, projection_dim: int | None = None,
                      max_seq_length: int | None = None, resume: bool = False,
                      overwrite: bool = False) -> tuple[Encoder, dict[str, Any]]:
    """Sentence-T5 from `model` through `stages` (qa, nli) into the run directory `output`; returns the
    encoder and the run summary. `data` maps a stage kind to its data files (or its example tuples);
    `steps` / `epochs` give one budget per stage (default: one epoch each)."""
    config = config or SentenceT5Config()
    steps, epochs = list(steps or [None] * len(stages)), list(epochs or [None] * len(stages))
    unused = [f"--{kind}-data" for kind, given in data.items() if given and kind not in stages]
    if unused:
        raise ConfigError(f"{', '.join(unused)} given, but no --stage uses it")
    paths = {kind: [source for source in sources if isinstance(source, (str, os.PathLike))]
             for kind, sources in data.items()}
    run = RunDirectory(output, resume=resume, overwrite=overwrite, model=model,
                       inputs=[(f"--{kind}-data", path) for kind, found in paths.items() for path in found])
    run.check()
    plan = [Stage(kind, read_stage_data(kind, data.get(kind) or []), steps=n, epochs=e)
            for kind, n, e in zip(stages, steps, epochs)]
    run.keep += [stage.name(index) for index, stage in enumerate(plan, 1)]  # each stage's encoder
    run.prepare(config.device, config.seed)  # the seed sets the projection's initial weights
    encoder = sentence_t5_encoder(model, pooling, projection_dim, max_seq_length)
    logger.info("st5: %s, %s, %d dimensions; stages %s", model, variant_of(encoder), encoder.dim,
                " -> ".join(f"{s.kind} ({len(s.examples)})" for s in plan))
    with run.training():
        encoder, results = train_stages(encoder, plan, run.root, config, resume=resume)

    summary = run_summary(
        "st5", str(model), {kind: [str(p) for p in paths.get(kind, ())] or "in memory" for kind in stages},
        sum(len(s.examples) for s in plan), sum(r.summary["steps"] for r in results),
        results[-1].summary.get("final_loss"), config.training_settings(encoder),
        {"temperature": config.temperature, "symmetric": config.symmetric},
        pooling=variant_of(encoder), dim=encoder.dim, t5=is_t5(encoder), temperature=config.temperature,
        symmetric=config.symmetric, stages=[result.summary for result in results])
    encoder.name = str(output)  # the trained model is the output's: its card is titled after it
    record_on_card(encoder.card, summary)
    run.finish(encoder.save, summary)
    return encoder, summary
