"""The wall time of finished adapt runs replayed on N parallel slots (`--engine ray`), from each candidate's
measured wall seconds in report.json: the start models first on the coordinator, the trained candidates from
the start model side by side in run order as slots free (tsdae+mnrl once tsdae has finished), then the
meta-embeddings, distil and a continuation on the coordinator, as adapt.parallel runs them. The same work as
the run, not more: a candidate cut by its share or stopped by racing keeps its measured time. What the replay
leaves out is printed as the run's remainder (probes, the speed measurement, the report), counted once, as on
one slot.

    python benchmarks/adapt/slots_estimate.py runs/ql-l6-60 --slots 1,2,5,8
"""

from __future__ import annotations

import argparse
import heapq
import json
from pathlib import Path

from sentforge.adaptation.candidates import METHODS


def _starts_from(name: str, method: str) -> str | None:
    """The candidate whose model `name` starts from, by its method's declared order (tsdae+mnrl: tsdae)."""
    before = METHODS[method].after if method in METHODS else None
    return None if before is None else name.removesuffix(method) + before


def replay(candidates: dict[str, dict], slots: int) -> float:
    """Seconds from the first start model to the last candidate on `slots` slots (list scheduling in run order;
    a candidate that starts from another trained candidate's model waits for that one)."""
    done = {name: c for name, c in candidates.items() if c.get("status") == "done" and c.get("wall_s")}
    starts = sum(c["wall_s"] for c in done.values() if c["kind"] == "start")
    trained = {name: c for name, c in done.items() if c["kind"] == "train" and not c.get("continues")}
    finished: dict[str, float] = {}
    free = [starts] * slots  # when each slot frees
    heapq.heapify(free)
    for name, c in trained.items():
        after = _starts_from(name, c["method"])
        begin = max(heapq.heappop(free), finished.get(after, 0.0))
        finished[name] = begin + c["wall_s"]
        heapq.heappush(free, finished[name])
    coordinator = sum(c["wall_s"] for c in done.values() if c["kind"] in ("meta", "distil") or c.get("continues"))
    return max([starts, *finished.values()]) + coordinator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="finished adapt output folders (report.json)")
    parser.add_argument("--slots", type=lambda s: [int(n) for n in s.split(",")], default=[1, 2, 8])
    args = parser.parse_args()
    print("| run | wall (measured) | candidates' sum | remainder | " +
          " | ".join(f"{n} slot{'s' if n > 1 else ''} (estimate)" for n in args.slots) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(args.slots))
    for run in args.runs:
        report = json.loads((run / "report.json").read_text(encoding="utf-8"))
        one = replay(report["candidates"], 1)
        remainder = report["wall_s"] - one
        estimates = [replay(report["candidates"], n) + remainder for n in args.slots]
        print(f"| {run.name} | {report['wall_s']:.0f} s | {one:.0f} s | {remainder:.0f} s | "
              + " | ".join(f"{e:.0f} s ({report['wall_s'] / e:.2f}x)" for e in estimates) + " |")


if __name__ == "__main__":
    main()
