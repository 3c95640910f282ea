"""`sentforge train METHOD`: adapt or train an encoder with one learning method on the Trainer.

`train` is a command group: the methods below share one command (one option list, registered under
each method's name); `train pause` (cli/pause.py) and `train st5` (cli/st5.py) have their own.

Unsupervised (a corpus of sentences): tsdae, mlm, simcse, ct, bertflow. Supervised (a pair file):
mnrl (sentence1, sentence2[, negative]) and sts (sentence1, sentence2, score). --output receives
the trained encoder (a sentence-transformers directory) and `training/` (metrics.jsonl,
checkpoints); the encoder written by one run is a valid --model for the next, which chains the
TSDAE paper's settings:

    sentforge train tsdae --model PRETRAINED --corpus domain.txt --output tsdae        # from a checkpoint
    sentforge train tsdae --model SENTENCE_MODEL --corpus domain.txt --output adapted  # sentence-tuned -> target
    sentforge train mnrl --model tsdae --corpus labelled_pairs.tsv --output final      # unsupervised -> supervised
"""

from __future__ import annotations

import inspect
import json
import logging
import shutil
import tempfile
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from sentforge.cli.app import DeviceOpt, ModelOpt, OverwriteOpt, SeedOpt, app
from sentforge.errors import ConfigError, InputFileError

logger = logging.getLogger("sentforge.cli")

train_app = typer.Typer(no_args_is_help=True, help="Adapt or train an encoder: one sub-command per method.")
app.add_typer(train_app, name="train")

TRAINING_DIR = "training"
SUMMARY_FILE = "train.json"
CORPUS_SUFFIXES = (".zip", ".txt", ".jsonl")


class Method(str, Enum):
    tsdae = "tsdae"
    mlm = "mlm"
    simcse = "simcse"
    ct = "ct"
    bertflow = "bertflow"
    mnrl = "mnrl"
    sts = "sts"


SUPERVISED = {Method.mnrl.value, Method.sts.value}
METHOD_HELP = {
    "tsdae": "TSDAE (Wang et al., 2021): reconstruct sentences from noisy input through the sentence vector.",
    "mlm": "Masked-language-model domain adaptation of the backbone.",
    "simcse": "Unsupervised SimCSE (Gao et al., 2021): dropout views of a sentence as positives.",
    "ct": "Contrastive Tension (Carlsson et al., 2021): two encoder copies agree on identical sentences.",
    "bertflow": "BERT-flow (Li et al., 2020): a normalising flow on the frozen encoder's vectors.",
    "mnrl": "Multiple-negatives ranking on (sentence1, sentence2[, negative]) pairs.",
    "sts": "Cosine regression on (sentence1, sentence2, score) pairs.",
}
# The pooling each method's paper trains and evaluates with; "keep" leaves the model's own.
DEFAULT_POOLING = {"tsdae": "cls", "mlm": "mean", "simcse": "cls", "ct": "mean", "bertflow": "mean",
                   "mnrl": "keep", "sts": "keep"}


def method_training_defaults(method: str) -> dict[str, Any]:
    """The TrainingConfig values a method's paper uses (optimizer, lr, batch size, schedule, ...)."""
    from sentforge.objectives import bertflow, ct, regression, simcse, tsdae

    defaults = {
        "tsdae": tsdae.TRAINING_DEFAULTS,
        # MLM domain adaptation as the TSDAE paper's baseline: BERT's fine-tuning rate, TSDAE's batch size.
        "mlm": {"optimizer": "adamw", "lr": 5e-5, "batch_size": 8, "schedule": "constant"},
        "simcse": simcse.SIMCSE_TRAINING_DEFAULTS,
        "ct": ct.TRAINING_DEFAULTS,
        "bertflow": bertflow.TRAINING_DEFAULTS,
        "mnrl": simcse.MNRL_TRAINING_DEFAULTS,
        "sts": regression.TRAINING_DEFAULTS,
    }[method]
    values = dict(defaults)
    if values["optimizer"] in ("adamw", "adam"):
        # One fused kernel per step instead of a loop of element-wise passes over every parameter.
        values["optimizer_options"] = {"fused": True}
    return values


def _read_lines(path: Path) -> list[str]:
    from sentforge.data.texts import decoded_lines

    return [line.strip() for line in decoded_lines(path) if line.strip()]


def read_sentences(paths: list[Path], field: str | None, split: bool, min_words: int, max_words: int) -> list[str]:
    """Sentences of corpus paths (.zip NLTK packages, .txt, .jsonl, folders of those; any other file
    is read as one sentence per line), length-filtered and de-duplicated."""
    from sentforge.data.corpora import SentenceFilter, read_corpus

    sentences: list[str] = []
    for path in paths:
        if path.is_file() and path.suffix.lower() not in CORPUS_SUFFIXES:
            sentences.extend(_read_lines(path))
        else:
            sentences.extend(read_corpus(path, field=field, split=split))
    kept = SentenceFilter(min_words=min_words, max_words=max_words)(sentences)
    logger.info("corpus: %d sentences read, %d kept (%d-%d words, de-duplicated)",
                len(sentences), len(kept), min_words, max_words)
    return kept


def with_pooling(encoder, mode: str):
    """The encoder with its pooling module replaced by `mode` pooling (modules after pooling kept)."""
    from sentforge.encoder import Encoder
    from sentforge.modules import Pooling

    index = next((i for i, module in enumerate(encoder) if isinstance(module, Pooling)), None)
    if index is None:
        raise ConfigError(f"--pooling {mode}: the model has no pooling module to replace")
    modules = list(encoder)
    if modules[index].modes == (mode,):
        return encoder
    modules[index] = Pooling(modules[index].dim, mode)
    logger.info("pooling: %s -> %s", ",".join(encoder[index].modes), mode)
    return Encoder(modules, name=encoder.name)


def save_into(encoder, output: Path) -> None:
    """Write the encoder's files into `output` (beside training/), modules.json last: a directory
    with a modules.json holds a finished model."""
    tmp = Path(tempfile.mkdtemp(dir=output, prefix=".model.", suffix=".tmp"))
    try:
        encoder.save(tmp / "model")
        names = sorted((p.name for p in (tmp / "model").iterdir()), key=lambda n: n == "modules.json")
        for name in names:
            target = output / name
            if target.is_dir():
                shutil.rmtree(target)
            (tmp / "model" / name).replace(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def split_numbers(text: str | None, kind: type, option: str) -> tuple:
    if not text:
        return ()
    try:
        return tuple(kind(part) for part in text.split(","))
    except ValueError:
        raise ConfigError(f"{option}: expected comma-separated numbers, got {text!r}") from None


def train(
    method: Method,
    model: ModelOpt,
    corpus: Annotated[list[Path], typer.Option(help="Training data. Unsupervised methods: sentences (.txt, .jsonl, "
                                                     "NLTK .zip, a folder of those; other files: one sentence per "
                                                     "line); repeat for several. mnrl/sts: a .tsv/.csv/.jsonl "
                                                     "pair file (sentence1, sentence2[, score | negative]).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the trained encoder and training/.")],
    steps: Annotated[int | None, typer.Option(min=1, help="Optimizer steps (default: one epoch).")] = None,
    epochs: Annotated[int | None, typer.Option(min=1, help="Epochs instead of steps.")] = None,
    batch_size: Annotated[int | None, typer.Option(
        min=1, help="Examples per step (default: the method's paper: tsdae 8, ct 16, bertflow 32, ...).")] = None,
    lr: Annotated[float | None, typer.Option(help="Learning rate (default: the method's paper).")] = None,
    optimizer: Annotated[str | None, typer.Option(help="adamw, adam, adafactor or rmsprop.")] = None,
    schedule: Annotated[str | None, typer.Option(help="constant, linear, polynomial, piecewise, "
                                                       "t5-constant-then-linear.")] = None,
    warmup_ratio: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    weight_decay: Annotated[float | None, typer.Option(min=0.0)] = None,
    lr_boundaries: Annotated[str | None, typer.Option(help="Piecewise schedule: steps where the rate "
                                                            "changes, e.g. 500,1000 (ct: 500,...,2000).")] = None,
    lr_factors: Annotated[str | None, typer.Option(help="Piecewise schedule: rate multipliers, one more "
                                                         "than boundaries (ct: 1,0.8,0.6,0.4,0.2).")] = None,
    max_grad_norm: Annotated[float, typer.Option(min=0.0, help="Gradient clipping (0: none).")] = 1.0,
    pooling: Annotated[str | None, typer.Option(help="cls, mean or max, or keep (the model's own). Default: "
                                                      "the method's paper (tsdae/simcse cls; mlm/ct/bertflow "
                                                      "mean; mnrl/sts keep).")] = None,
    noise: Annotated[str, typer.Option(help="tsdae: delete, swap, mask, replace or add.")] = "delete",
    noise_ratio: Annotated[float, typer.Option(min=0.0, max=1.0, help="tsdae: share of words hit.")] = 0.6,
    tied: Annotated[bool, typer.Option("--tied/--untied", help="tsdae: share encoder and decoder weights.")] = True,
    mlm_probability: Annotated[float, typer.Option(min=0.01, max=0.99, help="mlm: share of tokens masked.")] = 0.15,
    temperature: Annotated[float, typer.Option(min=1e-4, help="simcse/mnrl: softmax temperature "
                                                               "(mnrl: 1/scale).")] = 0.05,
    negatives: Annotated[int, typer.Option(min=1, help="ct: negative pairs per positive pair (K).")] = 7,
    flow_steps: Annotated[int, typer.Option(min=1, help="bertflow: flow steps.")] = 9,
    flow_hidden: Annotated[int, typer.Option(min=1, help="bertflow: coupling network width.")] = 32,
    score_max: Annotated[float, typer.Option(help="sts: the gold score that means identical (cosine 1).")] = 5.0,
    max_seq_length: Annotated[int | None, typer.Option(min=2, help="Truncate texts to this many tokens.")] = None,
    field: Annotated[str | None, typer.Option(help="JSONL corpus field holding the text (default: text).")] = None,
    split: Annotated[bool, typer.Option(help="Split corpus paragraphs into sentences.")] = True,
    min_words: Annotated[int, typer.Option(min=1, help="Drop corpus sentences shorter than this.")] = 3,
    max_words: Annotated[int, typer.Option(min=1, help="Drop corpus sentences longer than this.")] = 128,
    checkpoint_every: Annotated[int | None, typer.Option(min=1, help="Checkpoint every N steps.")] = None,
    keep_last: Annotated[int, typer.Option(min=1, help="Checkpoints to keep.")] = 2,
    log_every: Annotated[int, typer.Option(min=1)] = 10,
    resume: Annotated[bool, typer.Option(help="Continue the run in --output from its last checkpoint.")] = False,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Train an encoder with one method: TSDAE, MLM, SimCSE, CT, BERT-flow, MNRL or STS regression.
    Options that name a method in their help apply to that method only."""
    import torch

    from sentforge.encoder import Encoder
    from sentforge.io import check_output_dir, save_json
    from sentforge.loading import load
    from sentforge.seed import set_seed
    from sentforge.training import distributed
    from sentforge.training.trainer import Trainer, TrainingConfig

    name = method.value
    if resume and overwrite:
        raise ConfigError("--resume and --overwrite exclude each other")
    if steps is not None and epochs is not None:
        raise ConfigError("give --steps or --epochs, not both")
    if resume:
        if output.exists() and not (output / TRAINING_DIR).is_dir():
            raise ConfigError(f"--resume: {output} holds no training run ({TRAINING_DIR}/ is missing)")
    else:
        check_output_dir(output, overwrite)
    # The same command runs on N processes (torchrun / accelerate launch): only the first writes.
    distributed.init_distributed(torch.device(device) if device else None)
    if not resume and overwrite and output.exists() and distributed.is_main_process():
        shutil.rmtree(output)
    distributed.barrier()
    set_seed(seed)

    data = _training_data(name, corpus, field, split, min_words, max_words)
    encoder = load(model, device)
    if not isinstance(encoder, Encoder):
        raise ConfigError(f"--model {model}: {type(encoder).__name__} is not trainable; give a Hugging Face "
                          "or sentence-transformers model")
    chosen_pooling = pooling or DEFAULT_POOLING[name]
    if chosen_pooling != "keep":
        encoder = with_pooling(encoder, chosen_pooling)
    if max_seq_length:
        encoder.max_seq_length = max_seq_length
    objective = _objective(name, encoder, model=model, noise=noise, noise_ratio=noise_ratio, tied=tied, seed=seed,
                           mlm_probability=mlm_probability, temperature=temperature, negatives=negatives,
                           flow_steps=flow_steps, flow_hidden=flow_hidden, score_max=score_max)
    if name == "bertflow":
        # The encoder is frozen: encode the corpus once and fit the flow on the vectors.
        data = list(encoder.encode(data, batch_size=64, show_progress=None))

    settings = method_training_defaults(name)
    chosen = {"batch_size": batch_size, "lr": lr, "optimizer": optimizer, "schedule": schedule,
              "warmup_ratio": warmup_ratio, "weight_decay": weight_decay,
              "schedule_boundaries": split_numbers(lr_boundaries, int, "--lr-boundaries") or None,
              "schedule_factors": split_numbers(lr_factors, float, "--lr-factors") or None}
    settings.update({key: value for key, value in chosen.items() if value is not None})
    if optimizer is not None and optimizer not in ("adamw", "adam"):
        settings.pop("optimizer_options", None)
    if settings.get("optimizer_options") and device and not device.startswith(("cpu", "cuda")):
        settings.pop("optimizer_options")
    config = TrainingConfig(output_dir=output / TRAINING_DIR, steps=steps, epochs=None if steps else (epochs or 1),
                            max_grad_norm=max_grad_norm or None, seed=seed, device=device,
                            checkpoint_every=checkpoint_every, keep_last=keep_last, log_every=log_every,
                            resume=resume, overwrite=True,
                            # Hugging Face backbones carry a pooler layer that no sentence objective uses.
                            find_unused_parameters=distributed.launched_distributed(), **settings)
    logger.info("%s: %d training examples, %s", name, len(data),
                ", ".join(f"{k}={v}" for k, v in settings.items() if k != "optimizer_options"))
    result = Trainer(encoder, objective, data, config).train()

    if distributed.is_main_process():
        trained = objective.fitted_encoder() if name == "bertflow" else encoder
        save_into(trained, output)
        save_json(output / SUMMARY_FILE, {
            "method": name, "model": model, "pooling": chosen_pooling, "examples": len(data), "steps": result.steps,
            "final_loss": result.losses[-1] if result.losses else None, "training": config.to_json(),
            "method_options": _method_options(name, noise=noise, noise_ratio=noise_ratio, tied=tied,
                                              mlm_probability=mlm_probability, temperature=temperature,
                                              negatives=negatives, flow_steps=flow_steps, flow_hidden=flow_hidden,
                                              score_max=score_max)})
        typer.echo(f"wrote {output}: {name}, {result.steps} steps"
                   + (f", final loss {result.losses[-1]:.4f}" if result.losses else ""))
    distributed.barrier()


def _register(method: Method) -> None:
    """`train METHOD`: the shared `train` command with `method` fixed (its signature minus `method`)."""

    def command(**options: Any) -> None:
        train(method, **options)

    signature = inspect.signature(train, eval_str=True)
    command.__signature__ = signature.replace(parameters=[p for p in signature.parameters.values()
                                                          if p.name != "method"])
    command.__doc__ = f"{METHOD_HELP[method.value]}\n\n{train.__doc__}"
    train_app.command(method.value)(command)


for _method in Method:
    _register(_method)


def _training_data(method: str, corpus: list[Path], field: str | None, split: bool, min_words: int,
                   max_words: int) -> list:
    from sentforge.data.pairs import read_pairs

    if not corpus:
        raise ConfigError("--corpus is required")
    if method in SUPERVISED:
        if len(corpus) != 1:
            raise ConfigError(f"{method} trains on one pair file; got {len(corpus)} --corpus paths")
        return read_pairs(corpus[0], with_scores=method == "sts")
    for path in corpus:
        if not path.exists():
            raise InputFileError(f"corpus not found: {path}")
    sentences = read_sentences(corpus, field, split, min_words, max_words)
    if not sentences:
        raise InputFileError(f"no sentences of {min_words}-{max_words} words in {', '.join(map(str, corpus))}")
    return sentences


def _method_options(method: str, **options: Any) -> dict[str, Any]:
    keys = {"tsdae": ("noise", "noise_ratio", "tied"), "mlm": ("mlm_probability",), "simcse": ("temperature",),
            "ct": ("negatives",), "bertflow": ("flow_steps", "flow_hidden"), "mnrl": ("temperature",),
            "sts": ("score_max",)}[method]
    return {key: options[key] for key in keys}


def _masked_lm_checkpoint(model: str) -> str | None:
    """The model directory itself when it holds a masked-LM head to keep training (a checkpoint
    written by `sentforge pretrain mlm`); otherwise the head starts new."""
    config = Path(model) / "config.json"
    if not config.is_file():
        return None
    architectures = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
    return model if any(name.endswith("ForMaskedLM") for name in architectures) else None


def _objective(method: str, encoder, **options: Any):
    if method == "tsdae":
        from sentforge.objectives.tsdae import TSDAE

        return TSDAE(encoder, noise=options["noise"], noise_ratio=options["noise_ratio"], tie=options["tied"],
                     seed=options["seed"])
    if method == "mlm":
        from sentforge.objectives.mlm import MaskedLanguageModeling

        return MaskedLanguageModeling(encoder, mlm_probability=options["mlm_probability"],
                                      head_from=_masked_lm_checkpoint(options["model"]))
    if method == "simcse":
        from sentforge.objectives.simcse import simcse

        return simcse(encoder, temperature=options["temperature"])
    if method == "ct":
        from sentforge.objectives.ct import ContrastiveTension

        return ContrastiveTension(encoder, negatives=options["negatives"], seed=options["seed"])
    if method == "bertflow":
        from sentforge.objectives.bertflow import BertFlow

        return BertFlow(encoder, steps=options["flow_steps"], hidden=options["flow_hidden"])
    if method == "mnrl":
        from sentforge.objectives.simcse import mnrl

        return mnrl(encoder, scale=1.0 / options["temperature"])
    from sentforge.objectives.regression import CosineRegression

    return CosineRegression(encoder, score_max=options["score_max"])
