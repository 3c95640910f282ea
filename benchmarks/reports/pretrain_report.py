"""Report on `sentforge pretrain` runs: loss-curve PNGs, held-out metrics of the untrained vs the
pre-trained model, STS-B test Spearman (mean pooling) against the same architecture randomly
initialised, and training throughput.

    python benchmarks/reports/pretrain_report.py --run runs/pretrain/bert-small-5k --run runs/pretrain/t5-small-2k \
        --data ../shared/data --img-dir docs/img --output runs/pretrain/report.json
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from pathlib import Path

import torch

from sentforge import load
from sentforge.evaluation.readers.sts import STSB_RAW, STSPairs, read_stsbenchmark
from sentforge.evaluation.scoring import correlations
from sentforge.support.io import save_json
from sentforge.recipes.pretrain import SUMMARY_FILE, random_init_like
from sentforge.recipes.run_dir import TRAINING_DIR

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import DATA


def stsb_spearman(encoder, pairs: STSPairs) -> float:
    """STS-B test Spearman x100 of cosine similarity (each side encoded in batches of 64, as the published
    figures were)."""
    a = encoder.encode(pairs.sentences1, batch_size=64, normalize=True)
    b = encoder.encode(pairs.sentences2, batch_size=64, normalize=True)
    return correlations((a * b).sum(axis=1), pairs.scores)["spearman"]


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / TRAINING_DIR / "metrics.jsonl").read_text().splitlines()]


def plot(run: Path, log: list[dict], metric: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in log if "loss" in r]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, [r["loss"] for r in log if "loss" in r], label="training loss (mean of 10 steps)", lw=1)
    evals = [(r["step"], r["eval"][metric]) for r in log if "eval" in r]
    ax.plot(*zip(*evals), "o-", label=f"held-out {metric}")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_title(f"{run.name}: pre-training from scratch")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)


def report(run: Path, data: Path, img_dir: Path) -> dict:
    summary = json.loads((run / SUMMARY_FILE).read_text())
    log = records(run)
    kind = summary["config"]["kind"]
    metric = "mlm_loss" if kind == "mlm" else "span_loss"
    evals = [r for r in log if "eval" in r]
    image = img_dir / f"pretrain-{run.name}-loss.png"
    plot(run, log, metric, image)
    start = [r for r in log if r.get("event") == "start"][0]
    throughput = [r["tokens_per_s"] for r in log if "tokens_per_s" in r]
    result = {
        "run": str(run), "kind": kind, "steps": summary["steps"], "parameters": summary["parameters"],
        "train_sentences": summary["train_sentences"], "heldout_sentences": summary["heldout_sentences"],
        "heldout_untrained": evals[0]["eval"], "heldout_pretrained": summary["heldout"],
        "tokens_per_second_compute": summary["tokens_per_second"],
        "tokens_per_second_median_window": statistics.median(throughput) if throughput else None,
        "loss_curve": str(image), "batch_size": start["config"]["batch_size"],
    }
    # The original file with its sentences as written: a trailing space is a token for a SentencePiece model.
    pairs = read_stsbenchmark(data / STSB_RAW, normalize=str)
    result["stsb_test_spearman_pretrained"] = stsb_spearman(load(run), pairs)
    random_encoder = random_init_like(run, seed=summary["config"]["seed"])
    result["stsb_test_spearman_random_init"] = stsb_spearman(random_encoder, pairs)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, action="append", required=True)
    parser.add_argument("--data", type=Path, default=DATA,
                        help="the data root (default ../shared/data)")
    parser.add_argument("--img-dir", type=Path, default=Path("docs/img"))
    parser.add_argument("--output", type=Path)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(args.threads)
    results = [report(run, args.data, args.img_dir) for run in args.run]
    print(json.dumps(results, indent=2))
    if args.output:
        save_json(args.output, results)


if __name__ == "__main__":
    main()
