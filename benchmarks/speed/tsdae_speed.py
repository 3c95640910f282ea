"""TSDAE training speed: sentforge (its Trainer and TSDAE objective) against sentence-transformers'
DenoisingAutoEncoderLoss, on CPU in one process.

    python benchmarks/speed/tsdae_speed.py [--rounds 6] [--steps 30] [--threads 1]

Both start from the same model (default ../shared/models/paraphrase-MiniLM-L3-v2, CLS pooling, tied
encoder-decoder), train on the same sentences (the first 2,000 distinct tweets of TURL train
a.toks) in the same batches of 8 (the Trainer's seeded batch order, replayed for the other side),
with the same deletion noise function (sentforge.data.noise.WordNoise("delete", 0.6)) and the
optimiser that each side's trainer uses by default (sentence-transformers' trainer: fused AdamW, no
weight decay, lr 3e-5 here, gradient norm clipped at 1; sentforge: the `sentforge train tsdae`
defaults, which are the same). A step is everything from the raw
sentences to the updated weights: noise, tokenisation, forward, backward, clipping, optimiser step.
The sentence-transformers side runs as a plain loop (its trainer needs the `datasets` package, and a
bare loop only flatters it): for each batch it noises the sentences, tokenises the two columns with
`model.preprocess` as its data collator does, and calls the loss.

Rounds alternate (A B, B A, ...); each round times `--steps` steps after `--warmup` untimed ones.
Printed: steps/s (and the mean training loss, a check that both sides learn alike) per round, the
median of each side, and the median of the per-round ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import SHARED

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
MODEL = SHARED / "models/paraphrase-MiniLM-L3-v2"
SENTENCES = SHARED / "data/twitterpara/turl/castorini-twitterPPDB/train/a.toks"


def read_sentences(path: Path, n: int) -> list[str]:
    seen: dict[str, None] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            text = line.strip()
            if text and text not in seen:
                seen[text] = None
                if len(seen) == n:
                    break
    return list(seen)


class SentenceTransformersRun:
    """DenoisingAutoEncoderLoss driven the way SentenceTransformerTrainer drives it."""

    def __init__(self, model_dir: Path, noise, lr: float, max_seq_length: int | None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

        backbone = Transformer(str(model_dir))
        self.model = SentenceTransformer(modules=[backbone, Pooling(backbone.get_embedding_dimension(), "cls")],
                                         device="cpu")
        if max_seq_length:
            self.model.max_seq_length = max_seq_length
        self.loss = DenoisingAutoEncoderLoss(self.model, tie_encoder_decoder=True)
        self.noise = noise
        self.lr = lr
        self.torch = torch

    def run(self, sentences: list[str], steps: int, batch_size: int, seed: int) -> tuple[list[float], list[float]]:
        from sentforge.training.batch_order import BatchOrder

        torch = self.torch
        order = BatchOrder(len(sentences), batch_size, seed)  # the order sentforge's Trainer draws
        batches = [[sentences[i] for i in order.next_batch()] for _ in range(steps)]
        # transformers' default optimiser for its Trainer with torch >= 2.8: fused AdamW, no decay.
        optimizer = torch.optim.AdamW([p for p in self.loss.parameters() if p.requires_grad], lr=self.lr,
                                      weight_decay=0.0, fused=True)
        self.loss.train()
        stamps, losses = [time.perf_counter()], []
        for batch in batches:
            noisy = [self.noise(text) for text in batch]
            features = [self.model.preprocess(noisy), self.model.preprocess(batch)]
            loss = self.loss(features, None)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.loss.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            stamps.append(time.perf_counter())
            losses.append(loss.item())
        return stamps, losses


class SentforgeRun:
    """`sentforge train tsdae` minus the file output: the recipe's objective and Trainer settings."""

    def __init__(self, model_dir: Path, noise, seed: int, max_seq_length: int | None) -> None:
        from sentforge.loading import build_encoder
        from sentforge.objectives.tsdae import TSDAE
        from sentforge.recipes import get_recipe

        self.encoder = build_encoder(model_dir, pooling="cls")
        if max_seq_length:
            self.encoder.max_seq_length = max_seq_length
        self.objective = TSDAE(self.encoder, noise=noise, seed=seed)
        self.defaults = get_recipe("tsdae").training_defaults()

    def run(self, sentences: list[str], steps: int, batch_size: int, seed: int) -> tuple[list[float], list[float]]:
        from sentforge.training.trainer import Trainer, TrainingConfig

        stamps = [time.perf_counter()]
        config = TrainingConfig(steps=steps, seed=seed, show_progress=False,
                                **{**self.defaults, "batch_size": batch_size})
        trainer = Trainer(self.encoder, self.objective, sentences, config,
                          callbacks=[lambda state: stamps.append(time.perf_counter())])
        return stamps, trainer.train().losses


def steps_per_second(stamps: list[float], warmup: int) -> float:
    timed = stamps[warmup:]
    return (len(timed) - 1) / (timed[-1] - timed[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--sentences", type=Path, default=SENTENCES)
    parser.add_argument("--n-sentences", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per round and side")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps at the start of each round")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-seq-length", type=int, help="tokens per text on both sides (default: the model's)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (one process)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    import numpy as np
    import torch

    from sentforge.data.noise import WordNoise
    from sentforge.support.seed import set_seed

    torch.set_num_threads(args.threads)
    set_seed(args.seed)
    sentences = read_sentences(args.sentences, args.n_sentences)
    noise = WordNoise("delete", 0.6, seed=args.seed)
    sides = {"sentence-transformers": SentenceTransformersRun(args.model, noise, 3e-5, args.max_seq_length),
             "sentforge": SentforgeRun(args.model, noise, args.seed, args.max_seq_length)}
    per_round = args.steps + args.warmup
    results: dict[str, list[float]] = {name: [] for name in sides}
    mean_losses: dict[str, list[float]] = {name: [] for name in sides}
    for round_no in range(args.rounds):
        names = list(sides) if round_no % 2 == 0 else list(reversed(sides))
        for name in names:
            stamps, losses = sides[name].run(sentences, per_round, args.batch_size, args.seed + round_no)
            rate = steps_per_second(stamps, args.warmup)
            results[name].append(rate)
            mean_losses[name].append(float(np.mean(losses)))
            print(f"round {round_no + 1} {name:>22}: {rate:.3f} steps/s, mean loss {mean_losses[name][-1]:.3f}",
                  flush=True)
    ratios = [a / b for a, b in zip(results["sentforge"], results["sentence-transformers"])]
    summary = {
        "model": str(args.model), "sentences": len(sentences), "batch_size": args.batch_size,
        "max_seq_length": args.max_seq_length, "threads": args.threads, "rounds": args.rounds,
        "timed_steps_per_round": args.steps,
        "steps_per_s": results,
        "median_steps_per_s": {name: statistics.median(rates) for name, rates in results.items()},
        "median_ratio": statistics.median(ratios), "ratio_range": [min(ratios), max(ratios)],
        "mean_loss_per_round": mean_losses,
        "mean_words_per_sentence": float(np.mean([len(s.split()) for s in sentences])),
    }
    print(f"median steps/s: sentforge {summary['median_steps_per_s']['sentforge']:.3f}, sentence-transformers "
          f"{summary['median_steps_per_s']['sentence-transformers']:.3f}; median per-round ratio "
          f"{summary['median_ratio']:.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
