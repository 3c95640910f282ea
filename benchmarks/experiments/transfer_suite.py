"""The 7 SentEval transfer tasks for one model in one process: accuracy against the official SentEval
result and wall time against the official code's run on the same 2-core machine kind.

    python benchmarks/experiments/transfer_suite.py [--model all-MiniLM-L6-v2] [--data-dir ../shared/data]
                                        [--batch-size 64] [--n-jobs -1]

Each task's texts are encoded once (a shared embedding cache: a text another task already encoded is
not encoded again), then its classifier runs; a task's time includes its encoding. The total includes
loading the model. The reference figures (all-MiniLM-L6-v2, official SentEval code, scikit-learn
path, kfold 10, seed 1111, same files) and its 1,809 s total are those of docs/transfer.md. The load
average is printed because other jobs sharing the cores make the times pessimistic.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import DATA

REFERENCE = {"MR": 76.68, "CR": 82.60, "SUBJ": 92.35, "MPQA": 87.49, "SST2": 81.55, "TREC": 90.00, "MRPC": 71.59}
REFERENCE_MRPC_F1 = 80.74
REFERENCE_SECONDS = 1809.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--n-jobs", type=int, default=-1, help="worker processes for the folds (-1: all cores)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    started = time.perf_counter()
    load_before = os.getloadavg()
    import sentforge
    from sentforge.evaluation import CachedEncoder, resolve_tasks

    encoder = CachedEncoder(sentforge.load(args.model), batch_size=args.batch_size, show_progress=False)
    tasks = [cls(args.data_dir, n_jobs=args.n_jobs) for cls in resolve_tasks("transfer")]
    print(f"model {args.model}, loaded in {time.perf_counter() - started:.1f} s; n_jobs={args.n_jobs}", flush=True)
    print(f"{'task':6} {'acc':>7} {'ref':>7} {'diff':>6} {'encode s':>9} {'classify s':>10} {'total s':>8}", flush=True)
    for task in tasks:
        tick = time.perf_counter()
        encoder.warm(task.texts())
        encoded = time.perf_counter()
        result = task.evaluate(encoder)
        done = time.perf_counter()
        reference = REFERENCE[task.name]
        print(f"{task.name:6} {result['acc']:7.2f} {reference:7.2f} {result['acc'] - reference:+6.2f} "
              f"{encoded - tick:9.1f} {done - encoded:10.1f} {done - tick:8.1f}", flush=True)
        if "f1" in result:
            print(f"{'  F1':6} {result['f1']:7.2f} {REFERENCE_MRPC_F1:7.2f} {result['f1'] - REFERENCE_MRPC_F1:+6.2f}"
                  f"   (on [u, v, |u-v|, u*v]: acc {result['acc_uv']:.2f}, F1 {result['f1_uv']:.2f})", flush=True)
    total = time.perf_counter() - started
    print(f"total {total:.1f} s for {len(encoder)} distinct texts (model loading included); official SentEval "
          f"{REFERENCE_SECONDS:.0f} s; speed-up {REFERENCE_SECONDS / total:.2f}x")
    load_after = os.getloadavg()
    print(f"load average (1/5/15 min) at start {load_before[0]:.1f}/{load_before[1]:.1f}/{load_before[2]:.1f}, "
          f"at end {load_after[0]:.1f}/{load_after[1]:.1f}/{load_after[2]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
