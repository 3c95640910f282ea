"""Side-by-side Markdown table of several `sentforge eval` reports (one column per model).

    python benchmarks/reports/results_table.py runs/bm25.json runs/glove.json runs/minilm-l6.json --output table.md

Rows: the main score of every task that ran in at least one report, grouped by family, then the family
means and the timing of each run. A task a model did not run (skipped or not applicable) shows "–".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sentforge.support.io import atomic_file

GEOMETRY_NOTE = "lower is better"
FOUR_DECIMALS = {"alignment", "uniformity"}


def _label(report: dict) -> str:
    return Path(report["model"]).name


def _score(value: float, metric: str) -> str:
    # Correlations, accuracies, MCC and APs are ×100 already; alignment/uniformity are raw distances.
    return f"{value:.4f}" if metric in FOUR_DECIMALS else f"{value:.2f}"


def _geometry_rows(name: str, reports: list[dict]) -> list[str]:
    rows = []
    for metric in ("alignment", "uniformity"):
        cells = [_score(r["tasks"][name]["metrics"][metric], metric) if name in r["tasks"] else "–" for r in reports]
        rows.append(f"| geometry | {name} | {metric} ({GEOMETRY_NOTE}) | " + " | ".join(cells) + " |")
    return rows


def table(reports: list[dict]) -> str:
    tasks: dict[str, tuple[str, str]] = {}
    # The report with the most tasks sets the order (the registry's), so families do not follow whichever
    # model happened to be listed first.
    for report in sorted(reports, key=lambda r: -len(r["tasks"])):
        for name, task in report["tasks"].items():
            tasks.setdefault(name, (task["family"], task["main_metric"]))
    families = list(dict.fromkeys(family for family, _ in tasks.values()))

    header = "| family | task | metric | " + " | ".join(_label(r) for r in reports) + " |"
    lines = [header, "|---|---|---|" + "---:|" * len(reports)]
    for family in families:
        for name, (task_family, metric) in tasks.items():
            if task_family != family:
                continue
            cells = [_score(r["tasks"][name]["main_score"], metric) if name in r["tasks"] else "–" for r in reports]
            if family == "geometry":
                lines.extend(_geometry_rows(name, reports))
                continue
            lines.append(f"| {family} | {name} | {metric} | " + " | ".join(cells) + " |")
    for family in families:
        if family == "geometry":
            continue
        cells = [f"{r['families'][family]['mean_main_score']:.2f} ({r['families'][family]['n_tasks']})"
                 if family in r["families"] else "–" for r in reports]
        lines.append(f"| **mean** | **{family}** (tasks) | | " + " | ".join(cells) + " |")
    lines.append("| timing | distinct texts encoded | | "
                 + " | ".join(f"{r['timing']['distinct_texts_encoded']:,}" for r in reports) + " |")
    lines.append("| timing | encoding s / total s | | "
                 + " | ".join(f"{r['timing']['encode_seconds']:.0f} / {r['timing']['total_seconds']:.0f}"
                              for r in reports) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="JSON reports written by `sentforge eval --output`.")
    parser.add_argument("--output", type=Path, help="Also write the table to this Markdown file.")
    args = parser.parse_args(argv)
    reports = []
    for path in args.reports:
        try:
            reports.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as err:
            print(f"error: {path}: {err}", file=sys.stderr)
            return 2
    text = table(reports)
    print(text, end="")
    if args.output:
        with atomic_file(args.output, "w") as handle:
            handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
