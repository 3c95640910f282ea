"""How long adapt's selection takes on a finished run's output, and one paired interval on its dev units.

    python benchmarks/speed/selection_time.py OUTPUT [--rounds 2] [--rule labels-first] [--seed 0]

OUTPUT is a finished `sentforge adapt` output directory (its adapt.json and dev-items/). Each round times what
adapt computes between the speed measurement and saving the model: every finished candidate's per-unit dev
scores read, `select` (each candidate's paired dev gain over the start model and the leader's comparisons),
and the cross-fitted scores of the trained candidates that report.json gives. Printed per round: wall and CPU
seconds; then the seconds of one paired interval (the start model's dev scores against themselves), the
cost adapt times on its start model to plan the selection. Nothing is written.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from sentforge.adaptation.adapt_state import STATE_FILE
from sentforge.adaptation.intervals import selection_items
from sentforge.adaptation.result import CandidateResult, StartResult
from sentforge.adaptation.select import RULES, select
from sentforge.harness.dev_scores import load_items, paired_gain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rule", choices=RULES, default="labels-first")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    saved = json.loads((args.output / STATE_FILE).read_text(encoding="utf-8"))["results"]
    results = {name: CandidateResult.from_json(result) for name, result in saved.items()}
    done = {name: result for name, result in results.items() if result.done}
    starts = [name for name, result in results.items() if isinstance(result, StartResult)]
    trained = {name: result for name, result in done.items() if result.chosen_on_dev}
    for round_ in range(args.rounds):
        wall, cpu = time.monotonic(), time.process_time()
        items = selection_items(args.output, done, args.rule, args.seed)
        chosen = select(results, starts, args.rule, items, args.seed)
        selection_items(args.output, trained, "cross-fitted", args.seed)
        print(f"round {round_ + 1}: {len(done)} candidates, {len(chosen.comparisons)} comparisons, chose "
              f"{chosen.chosen}: wall {time.monotonic() - wall:.1f} s, CPU {time.process_time() - cpu:.1f} s")
    start = load_items(args.output, starts[0])
    wall = time.monotonic()
    paired_gain(start, start, args.seed)
    print(f"one paired interval on {len(start)} dev units ({start.statistic}): {time.monotonic() - wall:.2f} s")


if __name__ == "__main__":
    main()
