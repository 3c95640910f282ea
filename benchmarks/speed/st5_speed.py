"""Inference speed of the three Sentence-T5 encoders (enc-mean, enc-first, encdec-first) of one T5
checkpoint, by batch size and sequence length, as in the Sentence-T5 paper's appendix (Ni et al., 2022).

    python benchmarks/speed/st5_speed.py --model runs/pretrain/t5-small-2k [--threads 2] \\
        [--batch-sizes 1,8,32,128] [--lengths 16,64,128,256] [--rounds 3] [--min-time 1.0]

Each cell is sentences per second of the encoder's forward pass (backbone, pooling, projection,
L2 normalisation; fp32, CPU, torch.inference_mode) on batches whose every input is exactly `length`
tokens long (random vocabulary ids ending with EOS, no padding), so that the length is controlled;
tokenisation is not timed. A round repeats the batch for at least --min-time seconds; the cell is the
median of --rounds rounds, after one warm-up batch. Prints a Markdown table (rows: variant and length;
columns: batch size). Run it on a quiet machine: other jobs on the cores change the figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

VARIANTS = ("enc-mean", "enc-first", "encdec-first")


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def fixed_length_batch(encoder, batch_size: int, length: int, generator):
    """Features of `batch_size` inputs of exactly `length` tokens: random ordinary ids, then EOS."""
    import torch

    tokenizer = encoder.input_module.tokenizer
    special = set(tokenizer.all_special_ids)
    vocabulary = torch.tensor([i for i in range(len(tokenizer)) if i not in special])
    ids = vocabulary[torch.randint(len(vocabulary), (batch_size, length), generator=generator)]
    if tokenizer.eos_token_id is not None:
        ids[:, -1] = tokenizer.eos_token_id
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def sentences_per_second(encoder, features, rounds: int, min_time: float) -> float:
    import torch

    batch_size = features["input_ids"].shape[0]
    rates = []
    with torch.inference_mode():
        encoder(dict(features))  # warm-up
        for _ in range(rounds):
            done, start = 0, time.perf_counter()
            while True:
                encoder(dict(features))
                done += batch_size
                elapsed = time.perf_counter() - start
                if elapsed >= min_time:
                    break
            rates.append(done / elapsed)
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="A T5-family checkpoint directory.")
    parser.add_argument("--batch-sizes", type=numbers, default=[1, 8, 32, 128])
    parser.add_argument("--lengths", type=numbers, default=[16, 64, 128, 256])
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--projection-dim", type=int, default=None, help="Default: the model's hidden size.")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=1.0, help="Seconds per round.")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's).")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch

    from sentforge.support.seed import set_seed
    from sentforge.recipes.sentence_t5 import sentence_t5_encoder

    if args.threads:
        torch.set_num_threads(args.threads)
    set_seed(args.seed)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    encoders = {v: sentence_t5_encoder(args.model, v, args.projection_dim, max(args.lengths)).eval() for v in variants}
    generator = torch.Generator().manual_seed(args.seed)
    batches = {(b, n): fixed_length_batch(next(iter(encoders.values())), b, n, generator)
               for b in args.batch_sizes for n in args.lengths}
    parameters = {v: sum(p.numel() for p in e.parameters()) for v, e in encoders.items()}

    print(f"model {args.model}; {cpu_name()}, {os.cpu_count()} logical CPUs, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads; fp32; median of {args.rounds} rounds "
          f"of >= {args.min_time:g} s")
    print("parameters: " + ", ".join(f"{v} {n:,}" for v, n in parameters.items()) + "\n")
    print("| variant | length | " + " | ".join(f"batch {b}" for b in args.batch_sizes) + " |")
    print("|---|---:|" + "---:|" * len(args.batch_sizes))
    for variant, encoder in encoders.items():
        for length in args.lengths:
            cells = [sentences_per_second(encoder, batches[b, length], args.rounds, args.min_time)
                     for b in args.batch_sizes]
            print(f"| {variant} | {length} | " + " | ".join(f"{rate:,.1f}" for rate in cells) + " |", flush=True)
    print("\nsentences/s of the forward pass (tokenisation not timed)")


if __name__ == "__main__":
    main()
