"""Where a training step's time goes, sentforge against sentence-transformers: the timed steps profiled.

    python benchmarks/speed/gpu_profile.py --device cuda --only tsdae ct mlm --steps 20 --warmup 10
    python benchmarks/speed/gpu_profile.py --device cpu --only tsdae --steps 3 --warmup 2 --max-seq-length 64

Each side trains exactly as in `gpu_speed.py` (same model, data, batch sizes and library entry points);
here the steps after `--warmup` run under `torch.profiler`, and a second run of the same steps under
`torch.cuda.set_sync_debug_mode("warn")` names the source lines that wait for the GPU. Per step:

- wall ms: the profiled steps' wall time (the profiler slows both sides alike);
- aten ops: operators called from Python or C++ at the top level (each launches one or more kernels);
- on CUDA, kernels: kernels launched; GPU busy ms: the union of the kernels' time intervals, so
  `GPU busy / wall` is the share of the step the GPU computes (far below 1: the step is bound by the
  host: Python, dispatch and launches); syncs: host waits for the device (cudaStreamSynchronize,
  cudaDeviceSynchronize, cudaEventSynchronize, blocking cudaMemcpy), and where they come from.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
import gpu_speed  # the training of both sides: this script profiles the speed benchmark's steps
from benchlib import fail
from benchlib.device import print_device

SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy")
TRAINED = ("tsdae", "mnrl", "simcse", "ct", "mlm")


def _top_level_aten(events) -> int:
    """aten operators not nested in another one on the same thread."""
    count = 0
    by_thread = collections.defaultdict(list)
    for event in events:
        if event.name.startswith("aten::") and event.device_type.name == "CPU":
            by_thread[event.thread].append(event)
    for thread_events in by_thread.values():
        open_until = -1.0
        for event in sorted(thread_events, key=lambda e: (e.time_range.start, -e.time_range.end)):
            if event.time_range.start >= open_until:
                count += 1
                open_until = event.time_range.end
    return count


def _busy_ms(kernels) -> float:
    """The union of the kernels' intervals, in ms (the profiler's times are in microseconds)."""
    busy, end = 0.0, -1.0
    for start, stop in sorted((k.time_range.start, k.time_range.end) for k in kernels):
        if stop <= end:
            continue
        busy += stop - max(start, end)
        end = stop
    return busy / 1000


def profile_clock(summary: dict):
    """A gpu_speed Clock that profiles the steps between its two marks and writes `summary`."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    class ProfiledClock(gpu_speed.Clock):
        def at(self, step: int) -> None:
            super().at(step)
            start, end = self.wanted
            if step == start:
                activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.device == "cuda" else [])
                self.profiler = profile(activities=activities)
                self.profiler.__enter__()
            elif step == end:
                self.profiler.__exit__(None, None, None)
                steps, seconds = end - start, self.marks[end] - self.marks[start]
                events = self.profiler.events()
                summary["wall ms"] = 1000 * seconds / steps
                summary["aten ops"] = _top_level_aten(events) / steps
                if self.device == "cuda":
                    kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
                    summary["kernels"] = len(kernels) / steps
                    summary["GPU busy ms"] = _busy_ms(kernels) / steps
                    summary["syncs"] = sum(e.name in SYNC_CALLS for e in events) / steps

    return ProfiledClock


def sync_clock(sites: collections.Counter):
    """A gpu_speed Clock that records, between its two marks, the source lines of synchronising CUDA calls."""
    import torch

    class SyncClock(gpu_speed.Clock):
        def at(self, step: int) -> None:
            start, end = self.wanted
            if step == end:
                torch.cuda.set_sync_debug_mode("default")
                self.caught.__exit__(None, None, None)
                for warning in self.log:
                    if "synchroniz" in str(warning.message):
                        sites[f"{warning.filename.split('site-packages/')[-1]}:{warning.lineno}"] += 1 / (end - start)
            super().at(step)
            if step == start:
                self.caught = warnings.catch_warnings(record=True)
                self.log = self.caught.__enter__()
                warnings.simplefilter("always")
                torch.cuda.set_sync_debug_mode("warn")

    return SyncClock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    gpu_speed.add_run_arguments(parser)
    parser.add_argument("--only", nargs="+", choices=TRAINED, default=list(TRAINED))
    parser.add_argument("--steps", type=int, default=20, help="profiled training steps per side")
    parser.add_argument("--warmup", type=int, default=10, help="unprofiled steps before them")
    args = parser.parse_args()
    if min(args.steps, args.warmup) < 1:
        fail("--steps and --warmup must be >= 1")
    texts = gpu_speed.start_run(args)
    train = {"sentforge": gpu_speed.sentforge_train, "sentence-transformers": gpu_speed.st_train}
    rows = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = gpu_speed.build_model(gpu_speed.tokenizer_dir(args.tokenizer), work / "model", args.seed)
        for part in args.only:
            batch = args.batch_size or gpu_speed.BATCH[part]
            data = gpu_speed.training_texts(texts, part, args)
            for side in args.sides:
                summary: dict = {}
                train[side](part, model, data, args, work, clock_type=profile_clock(summary))
                sites: collections.Counter = collections.Counter()
                if args.device == "cuda":
                    train[side](part, model, data, args, work, clock_type=sync_clock(sites))
                rows.append((f"{part}, batch {batch}", side, summary, sites))
                print(f"{part} {side}: {summary}", file=sys.stderr, flush=True)

    print_device(args.device)
    columns = ["wall ms", "aten ops"] + (["kernels", "GPU busy ms", "syncs"] if args.device == "cuda" else [])
    print(f"\n| {args.device}, per step | side | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for name, side, summary, _ in rows:
        print(f"| {name} | {side} | " + " | ".join(f"{summary[c]:,.1f}" for c in columns) + " |")
    if args.device == "cuda":
        print("\nsynchronising calls per step, by source line:")
        for name, side, _, sites in rows:
            listed = ", ".join(f"{site} ({count:g})" for site, count in sites.most_common(8)) or "none"
            print(f"- {name}, {side}: {listed}")
    print(f"\n({time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
