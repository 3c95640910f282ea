"""Pre-training from scratch: a tokenizer and a BERT-like (masked LM) or T5-like (span corruption)
model trained on an unlabelled corpus, written as a standard Hugging Face directory.

Output directory:
    config.json, model.safetensors, tokenizer files   the model (`transformers.AutoModel`,
                                                      `sentforge.load`, `build_encoder` read it)
    pretrain.json                                     the run's settings and final held-out metrics
    training/tokenizer/                               the tokenizer, trained once (reused on resume)
    training/heldout.txt                              held-out sentences (never trained on)
    training/metrics.jsonl, training/checkpoints/     the Trainer's log and checkpoints
The directory is handled by recipes/run_dir.py: the finished model replaces the old contents in one
step, and --overwrite keeps the old output until the new one is complete.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sentforge.data.corpora import SentenceFilter, load_sentences
from sentforge.support.errors import ConfigError, InputFileError
from sentforge.support.output_guard import locked_output, output_lock
from sentforge.recipes.run_dir import RunDirectory
from sentforge.training.config import TrainingConfig

if TYPE_CHECKING:  # the model stack is imported where a model is built: `pretrain_corpus` checks its settings first
    import torch
    from transformers import PreTrainedTokenizerFast

    from sentforge.encoder import Encoder

logger = logging.getLogger(__name__)

KINDS = ("mlm", "t5")
TOKENIZER_DIR = "tokenizer"
HELDOUT_FILE = "heldout.txt"
SUMMARY_FILE = "pretrain.json"
PRETRAIN = "pretrain"  # the command family named in the output marker and the lock


@dataclass(frozen=True)
class ModelSize:
    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab_size: int
    max_positions: int = 512


# tiny: unit tests. small: about BERT-mini (Turc et al., 2019: 4 layers, hidden 256). base: BERT-base /
# T5 v1.1-base widths.
BERT_SIZES = {
    "tiny": ModelSize(layers=2, hidden=64, heads=2, intermediate=128, vocab_size=1000, max_positions=128),
    "small": ModelSize(layers=4, hidden=256, heads=4, intermediate=1024, vocab_size=16000),
    "base": ModelSize(layers=12, hidden=768, heads=12, intermediate=3072, vocab_size=30522),
}
T5_SIZES = {
    "tiny": ModelSize(layers=2, hidden=64, heads=2, intermediate=128, vocab_size=1000),
    "small": ModelSize(layers=4, hidden=256, heads=4, intermediate=1024, vocab_size=16000),
    "base": ModelSize(layers=12, hidden=768, heads=12, intermediate=2048, vocab_size=32100),
}


@dataclass
class PretrainConfig:
    """Settings of one pre-training run.

    Default learning rates (AdamW, batch 32, 5% warm-up) are the ones measured on this corpus (see
    docs/training.md): 3e-4 for MLM (at 1e-3 the small BERT collapsed to predicting the unigram
    distribution, and its sentence vectors lost the lexical signal of the random initialisation) and
    1e-3 for span corruption.
    """

    kind: str = "mlm"
    size: str = "small"
    steps: int = 1000
    batch_size: int = 64
    lr: float | None = None  # default: 3e-4 (mlm), 1e-3 (t5)
    optimizer: str = "adamw"
    schedule: str = "linear"
    warmup_ratio: float = 0.05
    weight_decay: float = 0.01
    max_seq_length: int = 128
    vocab_size: int | None = None  # default: the size preset's
    heldout: int = 1000
    seed: int = 0
    checkpoint_every: int = 200
    keep_last: int = 2
    eval_every: int | None = None  # default: 5 evaluations per run
    log_every: int = 10
    device: str | None = None
    gradient_accumulation: int = 1
    overrides: dict[str, Any] = field(default_factory=dict)  # ModelSize fields to change

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"unknown pre-training objective {self.kind!r}; choose mlm or t5")
        sizes = BERT_SIZES if self.kind == "mlm" else T5_SIZES
        if self.size not in sizes:
            raise ConfigError(f"unknown model size {self.size!r}; choose one of {', '.join(sizes)}")
        if self.heldout < 1:
            raise ConfigError(f"heldout must be >= 1, got {self.heldout}")
        # The trainer's checks of the shared hyper-parameters, before any output is written.
        TrainingConfig(steps=self.steps, batch_size=self.batch_size, optimizer=self.optimizer, lr=self.learning_rate,
                       schedule=self.schedule, weight_decay=self.weight_decay, warmup_ratio=self.warmup_ratio,
                       gradient_accumulation=self.gradient_accumulation, log_every=self.log_every)

    @property
    def learning_rate(self) -> float:
        return self.lr if self.lr is not None else (3e-4 if self.kind == "mlm" else 1e-3)

    @property
    def model_size(self) -> ModelSize:
        base = (BERT_SIZES if self.kind == "mlm" else T5_SIZES)[self.size]
        values = {**asdict(base), **self.overrides}
        if self.vocab_size:
            values["vocab_size"] = self.vocab_size
        return ModelSize(**values)


def split_heldout(sentences: Sequence[str], n_heldout: int, seed: int) -> tuple[list[str], list[str]]:
    """(training sentences, held-out sentences): a seeded random split."""
    if n_heldout >= len(sentences):
        raise ConfigError(f"the corpus has {len(sentences)} sentences; cannot hold out {n_heldout}")
    order = np.random.default_rng(seed).permutation(len(sentences))
    held = set(order[:n_heldout].tolist())
    train = [s for i, s in enumerate(sentences) if i not in held]
    return train, [sentences[i] for i in sorted(held)]


def train_tokenizer(kind: str, sentences: Sequence[str], vocab_size: int) -> PreTrainedTokenizerFast:
    from sentforge.recipes.tokenizer import train_unigram, train_wordpiece

    if kind == "mlm":
        return train_wordpiece(sentences, vocab_size=vocab_size)
    return train_unigram(sentences, vocab_size=vocab_size)


def canonical_vocabulary(path: str | Path) -> None:
    """Renumber the vocabulary of a saved `tokenizer.json` in a deterministic order.

    The tokenizers library collects the initial alphabet in a hash map, so two trainings on the same
    text can give the same tokens different ids, and a seeded initialisation then gives them different
    weights. Special tokens keep their ids; the other WordPiece tokens are numbered in sorted order,
    Unigram pieces by descending score, ties by piece. Tokenisation itself does not change.
    """
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    model = data["model"]
    special = {token["content"] for token in data.get("added_tokens", []) if token.get("special")}
    if model["type"] == "WordPiece":
        vocab = model["vocab"]
        free_ids = sorted(i for token, i in vocab.items() if token not in special)
        numbered = {token: i for token, i in vocab.items() if token in special}
        numbered.update(zip(sorted(token for token in vocab if token not in special), free_ids))
        model["vocab"] = dict(sorted(numbered.items(), key=lambda item: item[1]))
    elif model["type"] == "Unigram":
        pieces = model["vocab"]
        positions = [i for i, (piece, _) in enumerate(pieces) if piece not in special]
        ordered = sorted((pieces[i] for i in positions), key=lambda entry: (-entry[1], entry[0]))
        for position, entry in zip(positions, ordered):
            pieces[position] = entry
    else:
        raise ConfigError(f"{path}: cannot renumber a {model['type']} vocabulary")
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def build_model(kind: str, size: ModelSize, tokenizer: PreTrainedTokenizerFast, max_seq_length: int,
                seed: int) -> tuple[Encoder, torch.nn.Module]:
    """A randomly initialised encoder (mean pooling) and its pre-training objective."""
    from transformers import BertConfig, BertModel, T5Config, T5EncoderModel

    from sentforge.encoder import Encoder
    from sentforge.modules import Pooling, Transformer
    from sentforge.objectives.mlm import MaskedLanguageModeling
    from sentforge.objectives.span_corruption import SpanCorruption
    from sentforge.support.seed import set_seed

    set_seed(seed)
    vocab = len(tokenizer)
    if kind == "mlm":
        config = BertConfig(vocab_size=vocab, hidden_size=size.hidden, num_hidden_layers=size.layers,
                            num_attention_heads=size.heads, intermediate_size=size.intermediate,
                            max_position_embeddings=size.max_positions, pad_token_id=tokenizer.pad_token_id)
        model = BertModel(config, add_pooling_layer=False)
    else:
        config = T5Config(vocab_size=vocab, d_model=size.hidden, d_kv=size.hidden // size.heads, d_ff=size.intermediate,
                          num_layers=size.layers, num_decoder_layers=size.layers, num_heads=size.heads,
                          # Tied output embedding with T5's d_model**-0.5 logit scaling: the untied head's
                          # std-1 initialisation in transformers starts at a loss near 100 nats, which a
                          # short run never recovers from.
                          feed_forward_proj="gated-gelu", tie_word_embeddings=True,
                          decoder_start_token_id=tokenizer.pad_token_id, pad_token_id=tokenizer.pad_token_id,
                          eos_token_id=tokenizer.eos_token_id)
        model = T5EncoderModel(config)
    backbone = Transformer(model, tokenizer, max_seq_length=min(max_seq_length, size.max_positions))
    encoder = Encoder([backbone, Pooling(backbone.output_dim, "mean")], name=f"{kind}-{size.hidden}")
    objective = MaskedLanguageModeling(encoder) if kind == "mlm" else SpanCorruption(encoder)
    return encoder, objective


def _save_model(objective: torch.nn.Module, tokenizer: PreTrainedTokenizerFast, directory: Path) -> None:
    """Write the Hugging Face files of the pre-trained model into `directory`."""
    objective.lm.save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)


@locked_output(PRETRAIN)
def pretrain(sentences: Sequence[str], output: str | Path, config: PretrainConfig, resume: bool = False,
             overwrite: bool = False, show_progress: bool | None = None,
             inputs: Iterable[tuple[str, str | os.PathLike]] = ()) -> dict[str, Any]:
    """Pre-train from scratch on `sentences` and write the model to `output`; returns the summary.
    `inputs` name the files the sentences came from (an overwrite never deletes them)."""
    from transformers import AutoTokenizer

    from sentforge.support import distributed
    from sentforge.training.trainer import Trainer

    run = RunDirectory(output, resume=resume, overwrite=overwrite, inputs=inputs, summary_file=SUMMARY_FILE,
                       run_name="pre-training run", kind=PRETRAIN)
    run.prepare(config.device)
    with run.training():  # the tokenizer is trained into the run at once
        main = distributed.is_main_process()
        work = run.work
        train_texts, heldout = split_heldout(list(sentences), config.heldout, config.seed)
        size = config.model_size
        tokenizer_dir = work / TOKENIZER_DIR
        if main and not (tokenizer_dir / "tokenizer.json").exists():
            logger.info("training a %s tokenizer (vocabulary %d) on %d sentences",
                        "WordPiece" if config.kind == "mlm" else "Unigram", size.vocab_size, len(train_texts))
            tokenizer = train_tokenizer(config.kind, train_texts, size.vocab_size)
            tokenizer.save_pretrained(tokenizer_dir)
            canonical_vocabulary(tokenizer_dir / "tokenizer.json")
            (work / HELDOUT_FILE).write_text("".join(f"{s}\n" for s in heldout), encoding="utf-8")
        distributed.barrier()
        tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
        encoder, objective = build_model(config.kind, size, tokenizer, config.max_seq_length, config.seed)
        logger.info("%s model: %s parameters", config.kind, f"{sum(p.numel() for p in objective.parameters()):,}")

        eval_every = config.eval_every or max(1, config.steps // 5)
        training = TrainingConfig(
            output_dir=work, steps=config.steps, batch_size=config.batch_size, optimizer=config.optimizer,
            lr=config.learning_rate, weight_decay=config.weight_decay, schedule=config.schedule,
            warmup_ratio=config.warmup_ratio, seed=config.seed, group_by_length=True, log_every=config.log_every,
            eval_every=eval_every, eval_at_start=True, checkpoint_every=config.checkpoint_every,
            keep_last=config.keep_last, resume=resume, overwrite=True, device=config.device,
            gradient_accumulation=config.gradient_accumulation, show_progress=show_progress)
        result = Trainer(encoder, objective, train_texts, training,
                         evaluator=lambda _encoder: objective.evaluate(heldout, seed=config.seed)).train()

    summary: dict[str, Any] = {}
    if main:
        final = objective.evaluate(heldout, seed=config.seed)
        summary = {"config": asdict(config), "model_size": asdict(size), "parameters": sum(
            p.numel() for p in objective.parameters()), "train_sentences": len(train_texts),
            "heldout_sentences": len(heldout), "steps": result.steps, "heldout": final,
            "tokens_per_second": result.tokens_per_second}
    run.finish(lambda directory: _save_model(objective, tokenizer, directory), summary)
    if main:
        logger.info("wrote %s: held-out %s", output, summary["heldout"])
    return summary


def pretrain_corpus(kind: str, corpus: Sequence[str | os.PathLike], output: str | Path, *, min_words: int = 3,
                    max_words: int = 128, field: str | None = None, resume: bool = False, overwrite: bool = False,
                    threads: int | None = None, **settings: Any) -> dict[str, Any]:
    """`sentforge pretrain`: pre-train a `kind` (mlm or t5) model from scratch on the sentences of the
    `corpus` files (folders of NLTK zips, .txt or .jsonl files, or such files; JSONL `field`) of
    `min_words` to `max_words` words, and write it to `output`; returns the summary (empty on the
    processes of a distributed run other than the first).

    settings: the other PretrainConfig fields (size, steps, batch_size, lr, ...). threads: CPU threads for
    torch (default: torch's choice). The output is locked and checked before the settings and before
    the corpus is read; `resume` continues the run in `output` from its last checkpoint.
    """
    inputs = [("--corpus", path) for path in corpus]
    with output_lock(output, PRETRAIN):
        RunDirectory(output, resume=resume, overwrite=overwrite, inputs=inputs, run_name="pre-training run",
                     kind=PRETRAIN).check()
        config = PretrainConfig(kind=kind, **settings)
        if threads:
            import torch

            torch.set_num_threads(threads)
        sentences = load_sentences(corpus, SentenceFilter(min_words=min_words, max_words=max_words), field=field)
        if not sentences:
            raise InputFileError(f"no sentences of {min_words}-{max_words} words in {', '.join(map(str, corpus))}")
        return pretrain(sentences, output, config, resume=resume, overwrite=overwrite, inputs=inputs)


def random_init_like(model_dir: str | Path, seed: int = 0) -> Encoder:
    """The architecture and tokenizer of a pre-trained directory with random weights, mean pooling:
    the baseline that pre-training is measured against."""
    from transformers import AutoConfig, AutoTokenizer, BertModel, T5EncoderModel

    from sentforge.encoder import Encoder
    from sentforge.modules import Pooling, Transformer
    from sentforge.support.seed import set_seed

    config = AutoConfig.from_pretrained(str(model_dir))
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    set_seed(seed)
    model = T5EncoderModel(config) if config.model_type == "t5" else BertModel(config, add_pooling_layer=False)
    backbone = Transformer(model, tokenizer)
    return Encoder([backbone, Pooling(backbone.output_dim, "mean")], name=f"random-init:{model_dir}")
