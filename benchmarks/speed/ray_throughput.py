"""Throughput of `--engine ray` with 1 and 2 workers on a local Ray cluster, against the local engine.

    python benchmarks/speed/ray_throughput.py runs/scale/lines.txt --lines 4000 --chunk-size 500

Encodes the first --lines lines of the file with paraphrase-MiniLM-L3-v2 (fp32) into shards, the settings
alternating for --rounds rounds (Ray started once, before timing; actors load the model inside the timed
run), prints each setting's median and its ratio to the local engine, and checks that every setting wrote
identical shards.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import SHARED

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("lines_file", type=Path)
    parser.add_argument("--lines", type=int, default=4000)
    parser.add_argument("--chunk-size", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    try:  # after the arguments: `--help` works where Ray is not installed
        import ray
    except ImportError:
        parser.exit(2, "error: this benchmark needs Ray: pip install 'sentforge[ray]'\n")

    from sentforge.scale.streaming import encode_file, read_manifest

    model = str(SHARED / "models/paraphrase-MiniLM-L3-v2")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(f"{args.lines} lines, chunk {args.chunk_size}, {os.cpu_count()} CPU cores, Ray local cluster of 2 CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "sample.txt"
        with open(args.lines_file, encoding="utf-8") as source:
            sample.write_text("".join(itertools.islice(source, args.lines)), encoding="utf-8")
        checksums, seconds = {}, {}
        settings = (("local", "local", 1), ("ray 1 worker", "ray", 1), ("ray 2 workers", "ray", 2))
        for round_ in range(args.rounds):
            for label, engine, workers in settings:
                start = time.perf_counter()
                output = encode_file(model, sample, Path(tmp) / f"{label}-{round_}", chunk_size=args.chunk_size,
                                     engine=engine, workers=workers, show_progress=False)
                seconds.setdefault(label, []).append(time.perf_counter() - start)
                checksums[label, round_] = [s["sha256"] for s in read_manifest(output)["shards"]]
                print(f"  round {round_ + 1} {label}: {args.lines / seconds[label][-1]:.0f} sentences/s")
        local = statistics.median(seconds["local"])
        for label, _, _ in settings:
            median = statistics.median(seconds[label])
            print(f"{label}: median {args.lines / median:.0f} sentences/s ({median:.1f} s), "
                  f"{local / median:.2f}x the local engine")
        print(f"identical shards across settings and rounds: {len({tuple(c) for c in checksums.values()}) == 1}")

if __name__ == "__main__":
    main()
