"""PAUSE in the positive-only setting (the paper's similar-company use case) on
Quora duplicate questions: only a fraction of the duplicate pairs is labelled, everything else --
the other duplicates and every non-duplicate -- is unlabelled (K = 1, no negative labels). A pair
is called a duplicate when the cosine similarity of its two embeddings reaches a threshold.

    python benchmarks/experiments/pause_positive_only.py run --model ../shared/models/paraphrase-MiniLM-L3-v2 \\
        --work-dir runs/pause-positive-only/minilm-l3 --steps 1000 --batch-size 64
    python benchmarks/experiments/pause_positive_only.py report --work-dir runs/pause-positive-only/minilm-l3 \\
        --table pause-positive-only.md

Data: `glue/qqp-partial/qqp_train_subset.tsv` (23,496 labelled pairs after its malformed first row).
Once per work directory, with --split-seed, a class-stratified random split holds out --test-size
labelled pairs (test) and --dev-size (dev); every remaining pair that shares a question with a
held-out pair is dropped, so no held-out question is seen in training; the rest is the training
pool. Its duplicates are labelled `positive`, all its other pairs unlabelled (data/pool.jsonl);
each run keeps a seeded share (--fractions: 100/50/10/5 %) of those positive labels through
`sentforge train pause --label-fraction`, with the class prior --prior (default: the share of
duplicates in the pool, a figure a user with positive-only data has to estimate).

Threshold: the cosine similarity (sentforge's pair-classification scoring) that maximises accuracy on
the dev pairs (every dev score is a candidate; a pair is a duplicate when its score is >= the
threshold); accuracy, precision, recall and F1 at that threshold are measured on the test pairs,
together with the threshold-free average precision (the pair-classification task's metric). The
untrained start model goes through the same procedure (`start/`) as the reference.
Runs are resumable as in pause_label_efficiency.py: a run with a result.json is skipped.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import DATA
from benchlib.drivers import (RESULT_FILE, START, budget_steps, budget_text, check_config, configure_logging,
                              driver_parser, format_mean_std, keep_training_record, markdown_of, parse_floats,
                              parse_ints, read_experiment, run_pending, run_sentforge, shown_path, write_report)

logger = logging.getLogger("pause_positive_only")

QQP = DATA / "glue" / "qqp-partial" / "qqp_train_subset.tsv"
FRACTIONS = (1.0, 0.5, 0.1, 0.05)
SEEDS = (0,)
SPLIT_DIR = "data"
METRICS = ("accuracy", "precision", "recall", "f1", "average_precision")


def split_pairs(pairs: Sequence[tuple], test_size: int, dev_size: int, seed: int) -> dict[str, list[tuple]]:
    """test, dev: class-stratified random held-out pairs; pool: the rest minus every pair that shares a
    question with a held-out pair."""
    from sklearn.model_selection import train_test_split

    labels = [label for _, _, label in pairs]
    rest, test = train_test_split(list(range(len(pairs))), test_size=test_size, stratify=labels, random_state=seed)
    rest, dev = train_test_split(rest, test_size=dev_size, stratify=[labels[i] for i in rest], random_state=seed)
    held_out = {text for i in (*test, *dev) for text in pairs[i][:2]}
    pool = [pairs[i] for i in sorted(rest) if pairs[i][0] not in held_out and pairs[i][1] not in held_out]
    return {"test": [pairs[i] for i in sorted(test)], "dev": [pairs[i] for i in sorted(dev)], "pool": pool}


def best_threshold(scores: np.ndarray, is_positive: np.ndarray) -> tuple[float, float]:
    """(threshold, accuracy): the threshold among the scores (or +inf: nothing positive) whose rule
    `score >= threshold` is most accurate on these pairs."""
    from sklearn.metrics import roc_curve

    false_positive_rate, true_positive_rate, thresholds = roc_curve(is_positive, scores, drop_intermediate=False)
    positives = int(is_positive.sum())
    negatives = len(is_positive) - positives
    accuracy = (true_positive_rate * positives + (1 - false_positive_rate) * negatives) / len(is_positive)
    best = int(np.argmax(accuracy))
    return float(thresholds[best]), float(accuracy[best])


def labelled_pairs(name: str, pairs: Sequence[tuple], positive: str):
    """(sentence1, sentence2, label) rows as the pair-classification task's LabelledPairs (1: positive)."""
    from sentforge.evaluation.readers.useb import LabelledPairs

    labels = np.array([int(label == positive) for _, _, label in pairs])
    return LabelledPairs(name, [a for a, _, _ in pairs], [b for _, b, _ in pairs], labels, labels.astype(np.float64))


def classification_metrics(scores: np.ndarray, is_positive: np.ndarray, threshold: float) -> dict[str, float]:
    """Accuracy, precision, recall and F1 (× 100) of `score >= threshold`."""
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    predicted = scores >= threshold
    precision, recall, f1, _ = precision_recall_fscore_support(is_positive, predicted, average="binary",
                                                               zero_division=0)
    return {"accuracy": 100 * accuracy_score(is_positive, predicted), "precision": 100 * precision,
            "recall": 100 * recall, "f1": 100 * f1}


def held_out_evaluation(model: str, split: dict[str, list[tuple]], positive: str, args: argparse.Namespace) -> dict:
    """Threshold from the dev pairs, metrics on the test pairs (each distinct text encoded once)."""
    import sentforge
    from sentforge.evaluation import CachedEncoder
    from sentforge.evaluation.scoring import pair_scores, paraphrase_metrics

    encoder = CachedEncoder(sentforge.load(model, device=args.device), batch_size=args.eval_batch_size)
    dev, test = (labelled_pairs(name, split[name], positive) for name in ("dev", "test"))
    dev_scores, test_scores = pair_scores(encoder, dev), pair_scores(encoder, test)
    threshold, dev_accuracy = best_threshold(dev_scores, dev.labels == 1)
    return {"threshold": threshold, "dev_accuracy": 100 * dev_accuracy,
            **classification_metrics(test_scores, test.labels == 1, threshold),
            "average_precision": paraphrase_metrics(test_scores, test)["ap"]}


def write_jsonl(path: Path, pairs: Sequence[tuple]) -> None:
    from sentforge.support.io import atomic_file

    with atomic_file(path, "w") as handle:
        for first, second, label in pairs:
            handle.write(json.dumps({"sentence1": first, "sentence2": second, "label": label}) + "\n")


def read_jsonl(path: Path) -> list[tuple]:
    return [(r["sentence1"], r["sentence2"], r["label"]) for r in map(json.loads, path.read_text().splitlines())]


def prepare_split(args: argparse.Namespace) -> dict:
    """Read QQP, split it and write data/{test,dev,pool}.jsonl and data/pool-pu.jsonl once per work
    directory; later runs read them back. Returns the split and its statistics."""
    from sentforge.data.nli import DUPLICATE, positive_only, read_qqp
    from sentforge.support.io import save_json

    data_dir = args.work_dir / SPLIT_DIR
    stats_path = data_dir / "split.json"
    if stats_path.exists():
        split = {name: read_jsonl(data_dir / f"{name}.jsonl") for name in ("test", "dev", "pool")}
        return {"split": split, "stats": json.loads(stats_path.read_text())}
    pairs = read_qqp(args.qqp, skip_malformed=True)
    split = split_pairs(pairs, args.test_size, args.dev_size, args.split_seed)
    for name, part in split.items():
        write_jsonl(data_dir / f"{name}.jsonl", part)
    write_jsonl(data_dir / "pool-pu.jsonl", positive_only(split["pool"], DUPLICATE))
    count = {name: {"pairs": len(part), "duplicates": sum(label == DUPLICATE for _, _, label in part)}
             for name, part in split.items()}
    stats = {"read": len(pairs), **count,
             "dropped_sharing_a_held_out_question": len(pairs) - args.test_size - args.dev_size - len(split["pool"])}
    save_json(stats_path, stats)
    return {"split": split, "stats": stats}


def run_name(fraction: float | None, seed: int | None) -> str:
    return START if fraction is None else f"pause-f{fraction:g}-s{seed}"


def execute(fraction: float | None, seed: int | None, args: argparse.Namespace, data: dict, prior: float) -> dict:
    from sentforge.data.nli import DUPLICATE
    from sentforge.support.io import save_json

    name = run_name(fraction, seed)
    run_dir = args.work_dir / name
    run_dir.mkdir(parents=True, exist_ok=True)
    result: dict = {"run": name, "method": "start" if fraction is None else "pause", "fraction": fraction,
                    "seed": seed, "model": args.model}
    model = args.model
    if fraction is not None:
        pool = data["split"]["pool"]
        batch_size = min(args.batch_size, len(pool))
        steps = budget_steps(args.steps, args.epochs, len(pool), batch_size)
        model_dir = run_dir / "model"
        tick = time.perf_counter()
        if not (model_dir / "train.json").exists():
            arguments = ["--model", args.model, "--pairs", str(args.work_dir / SPLIT_DIR / "pool-pu.jsonl"),
                         "--label-fraction", f"{fraction:g}", "--priors", f"positive={prior:.6g}",
                         "--steps", str(steps), "--batch-size", str(batch_size), "--seed", str(seed),
                         "--output", str(model_dir), "--overwrite", "--log-every", str(max(1, steps // 50))]
            arguments += ["--lr", str(args.lr)] if args.lr is not None else []
            arguments += ["--max-seq-length", str(args.max_seq_length)] if args.max_seq_length else []
            arguments += ["--device", args.device] if args.device else []
            logger.info("%s: training %d steps of %d pairs", name, steps, batch_size)
            run_sentforge(["train", "pause", *arguments], run_dir / "train.log")
        result["train_seconds"] = round(time.perf_counter() - tick, 1)
        model = str(model_dir)
    tick = time.perf_counter()
    result.update(held_out_evaluation(model, data["split"], DUPLICATE, args))
    result["eval_seconds"] = round(time.perf_counter() - tick, 1)
    if fraction is not None:
        summary = keep_training_record(Path(model), run_dir, args.keep_models)
        result.update({"steps": summary["steps"], "batch_size": summary["batch_size"],
                       "labelled_positives": summary["labelled"], "prior": prior,
                       "final_loss": summary["final_loss"]})
    save_json(run_dir / RESULT_FILE, result)
    return result


def command_run(args: argparse.Namespace) -> int:
    if Path(args.model).exists():
        args.model = str(Path(args.model).resolve())
    settings = {"model": args.model, "qqp": str(args.qqp.resolve()), "test_size": args.test_size,
                "dev_size": args.dev_size, "split_seed": args.split_seed, "steps": args.steps, "epochs": args.epochs,
                "batch_size": args.batch_size, "lr": args.lr, "max_seq_length": args.max_seq_length,
                "prior": args.prior}
    check_config(args.work_dir, settings)
    data = prepare_split(args)
    pool = data["stats"]["pool"]
    prior = args.prior if args.prior is not None else pool["duplicates"] / pool["pairs"]
    logger.info("split: %s; prior %.4f", data["stats"], prior)
    runs = [(None, None), *((f, s) for f in args.fractions for s in args.seeds)]
    names = [run_name(fraction, seed) for fraction, seed in runs]

    def describe(result: dict) -> str:
        return (f"test accuracy {result['accuracy']:.2f}, precision {result['precision']:.2f}, recall "
                f"{result['recall']:.2f} (threshold {result['threshold']:.4f})")

    return run_pending(args.work_dir, names, lambda index: execute(*runs[index], args, data, prior), describe)


def section(work_dir: Path) -> list[str]:
    config, results = read_experiment(work_dir)
    stats = json.loads((work_dir / SPLIT_DIR / "split.json").read_text())
    budget = budget_text(config)
    lines = [f"## Start model `{shown_path(config['model'])}`", "",
             (f"Split (seed {config['split_seed']}): test {stats['test']['pairs']} pairs "
              f"({stats['test']['duplicates']} duplicates), dev {stats['dev']['pairs']} "
              f"({stats['dev']['duplicates']}), training pool {stats['pool']['pairs']} "
              f"({stats['pool']['duplicates']}; {stats['dropped_sharing_a_held_out_question']} pairs sharing a "
              f"question with a held-out pair dropped). Training: {budget}, batch size {config['batch_size']}."),
             "", ("| positives labelled | labelled pairs | seeds | accuracy | precision | recall | F1 "
                  "| average precision | threshold | dev accuracy |"), "|---|---:|---:|" + "---:|" * 7]
    start = [r for r in results if r["fraction"] is None]
    trained = sorted((r for r in results if r["fraction"] is not None), key=lambda r: (-r["fraction"], r["seed"]))
    groups: dict = {}
    for result in start + trained:
        groups.setdefault(result["fraction"], []).append(result)
    for fraction, rows in groups.items():
        label = "start model (untrained)" if fraction is None else f"{fraction * 100:g} %"
        labelled = "–" if fraction is None else str(rows[0]["labelled_positives"])  # the same for every seed
        cells = [format_mean_std([r[m] for r in rows]) for m in METRICS]
        thresholds = [r["threshold"] for r in rows]
        lines.append(f"| {label} | {labelled} | {len(rows)} | " + " | ".join(cells)
                     + f" | {np.mean(thresholds):.3f} | {format_mean_std([r['dev_accuracy'] for r in rows])} |")
    return lines + [""]


markdown = markdown_of("PAUSE with positive labels only (Quora duplicate questions)", section, intro=(
    "Test pairs called duplicates when their cosine similarity reaches the threshold that is most "
    "accurate on the dev pairs; metrics × 100 (average precision needs no threshold); mean ± sample "
    "standard deviation over seeds."))


def main(argv: Sequence[str] | None = None) -> int:
    parser, run = driver_parser(__doc__, "a Markdown table from finished runs", plot=False)
    budget = run.add_mutually_exclusive_group(required=True)
    budget.add_argument("--steps", type=int, help="optimizer steps of every run")
    budget.add_argument("--epochs", type=float, help="passes over the training pool")
    run.add_argument("--batch-size", type=int, default=64, help="pairs per batch (paper: 1024)")
    run.add_argument("--lr", type=float, default=None, help="peak learning rate (default: the CLI's, 7.5e-5)")
    run.add_argument("--max-seq-length", type=int, default=None)
    run.add_argument("--prior", type=float, default=None,
                     help="class prior of the duplicates (default: their share in the training pool)")
    run.add_argument("--fractions", type=parse_floats, default=FRACTIONS, help="shares of the positives labelled")
    run.add_argument("--seeds", type=parse_ints, default=SEEDS)
    run.add_argument("--qqp", type=Path, default=QQP, help="GLUE QQP .tsv with is_duplicate labels")
    run.add_argument("--test-size", type=int, default=4000)
    run.add_argument("--dev-size", type=int, default=2000)
    run.add_argument("--split-seed", type=int, default=0)
    args = parser.parse_args(argv)
    configure_logging()
    if args.command == "run":
        if any(not 0.0 < f <= 1.0 for f in args.fractions):
            parser.error(f"--fractions must lie in (0, 1], got {args.fractions}")
        if args.prior is not None and not 0.0 < args.prior < 1.0:
            parser.error(f"--prior must lie in (0, 1), got {args.prior}")
        if (args.steps is not None and args.steps < 1) or (args.epochs is not None and args.epochs <= 0):
            parser.error("the budget (--steps or --epochs) must be positive")
        return command_run(args)
    return write_report(args, markdown)


if __name__ == "__main__":
    sys.exit(main())
