"""TSDAE ablations on TwitterPara, each a flag of `sentforge train tsdae`:

- noise: delete, swap, mask, replace and add, each at ratio 0.3 (`--noise-type-ratio`);
- ratio: deletion ratio 0.1, 0.2, ..., 0.9;
- pooling: CLS, mean and max;
- tying: encoder and decoder tied or untied.

Every other knob stays at the paper's default (delete, 0.6, CLS, tied), so the configurations the
groups share (e.g. delete 0.6 CLS tied) train once.

    python benchmarks/experiments/tsdae_ablation.py run --work-dir runs/tsdae/ablation \
        --model ../shared/models/paraphrase-MiniLM-L3-v2 --steps 10000
    python benchmarks/experiments/tsdae_ablation.py report --work-dir runs/tsdae/ablation --table tsdae-ablation.md

The corpus (distinct TURL train tweets minus near-duplicates of the TwitterPara test sentences), the run
layout (W/runs/START/twitterpara/NAME/result.json), resuming, `--dry-run` and the failure handling are
those of tsdae_domain.py, which this script shares; W can be the same work directory.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib.drivers import configure_logging, markdown_of, parse_floats, parse_names, write_report
from tsdae_domain import (DOMAIN_TASKS, RUNS, Run, Start, cell, check_choices, check_starts, command_line,
                          common_train_options, load_results, report_written, run_all)

DOMAIN = "twitterpara"
TASK = DOMAIN_TASKS[DOMAIN]
NOISE_TYPES = ("delete", "swap", "mask", "replace", "add")
RATIOS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
POOLINGS = ("cls", "mean", "max")
GROUPS = ("noise", "ratio", "pooling", "tying")
DEFAULT = {"noise": "delete", "noise_ratio": 0.6, "pooling": "cls", "tied": True}
# The columns of each table: the mean AP (the task's main score) and each test set's AP.
COLUMNS = (("ap_avg", "AP, mean"), ("turl.ap", "AP, TURL test"), ("pit.ap", "AP, PIT-2015 test"))


def configuration_name(config: dict) -> str:
    return (f"tsdae-{config['noise']}{config['noise_ratio']:g}-{config['pooling']}-"
            f"{'tied' if config['tied'] else 'untied'}")


def group_configurations(group: str, noise_types: Sequence[str], noise_type_ratio: float, ratios: Sequence[float],
                         poolings: Sequence[str]) -> list[dict]:
    if group == "noise":
        return [{**DEFAULT, "noise": noise, "noise_ratio": noise_type_ratio} for noise in noise_types]
    if group == "ratio":
        return [{**DEFAULT, "noise_ratio": ratio} for ratio in ratios]
    if group == "pooling":
        return [{**DEFAULT, "pooling": pooling} for pooling in poolings]
    return [{**DEFAULT, "tied": tied} for tied in (True, False)]


def ablation_runs(starts: Sequence[Start], configurations: Sequence[dict], seeds: Sequence[int], steps: int,
                  batch_size: int | None, max_seq_length: int | None, baselines: bool) -> list[Run]:
    setting = f"steps{steps}" + (f"-bs{batch_size}" if batch_size else "")
    runs = []
    for start in starts:
        if baselines:
            for seed in (seeds if start.random else [None]):
                name = "unadapted" if seed is None else f"unadapted-seed{seed}"
                runs.append(Run("tsdae_ablation", start, DOMAIN, name, [TASK], seed=seed))
        for config in configurations:
            options = ["--noise", config["noise"], "--noise-ratio", f"{config['noise_ratio']:g}",
                       "--pooling", config["pooling"], "--tied" if config["tied"] else "--untied",
                       *common_train_options(batch_size, max_seq_length)]
            for seed in seeds:
                runs.append(Run("tsdae_ablation", start, DOMAIN, f"{configuration_name(config)}-{setting}-seed{seed}",
                                [TASK], seed=seed, method="tsdae", steps=steps, train_options=options,
                                meta={"setting": setting, "ablation": config}))
    return runs


GROUP_TITLES = {"noise": "Noise type (ratio {ratio:g})", "ratio": "Deletion ratio", "pooling": "Pooling",
                "tying": "Encoder-decoder weights"}
GROUP_FACTOR = {"noise": "noise", "ratio": "noise_ratio", "pooling": "pooling", "tying": "tied"}


def in_group(group: str, config: dict) -> bool:
    """Whether a configuration varies only the group's factor from the default (the noise group fixes
    the ratio at its own value, whatever it is)."""
    fixed = {key: value for key, value in DEFAULT.items() if key != GROUP_FACTOR[group]}
    if group == "noise":
        fixed.pop("noise_ratio")
    return all(config[key] == value for key, value in fixed.items())


def ablation_section(work_dir: Path) -> list[str]:
    results = load_results(work_dir, "tsdae_ablation")
    if not results:
        raise SystemExit(f"no results of tsdae_ablation.py under {work_dir / RUNS}")
    lines = [(f"Work directory `{work_dir}`; {len(results)} finished runs; report written {report_written()}. "
              "Cells: average precision (×100) of cosine similarity against the paraphrase labels, mean ± sample "
              "standard deviation over seeds (number of seeds). Defaults: delete, ratio 0.6, CLS pooling, tied."),
             ""]
    for start in dict.fromkeys(r["run"]["start"] for r in results):
        mine = [r for r in results if r["run"]["start"] == start]
        unadapted = [r for r in mine if r["run"]["kind"] == "unadapted"]
        for setting in sorted({r["run"]["setting"] for r in mine if r["run"].get("setting")}):
            trained = [r for r in mine if r["run"].get("setting") == setting]
            lines += [f"## {start}, {setting}", ""]
            for group in GROUPS:
                members = [r for r in trained if in_group(group, r["run"]["ablation"])]
                if group == "noise":
                    # One table per ratio the noise types were compared at (0.3 unless chosen otherwise).
                    ratios = sorted({r["run"]["ablation"]["noise_ratio"] for r in members
                                     if r["run"]["ablation"]["noise"] != "delete"})
                    for ratio in ratios:
                        at_ratio = [r for r in members if r["run"]["ablation"]["noise_ratio"] == ratio]
                        lines += group_table(GROUP_TITLES[group].format(ratio=ratio), "noise", at_ratio, unadapted)
                elif len({str(r["run"]["ablation"][GROUP_FACTOR[group]]) for r in members}) > 1:
                    lines += group_table(GROUP_TITLES[group], GROUP_FACTOR[group], members, unadapted)
    return lines + [""]


def group_table(title: str, factor: str, members: list[dict], unadapted: list[dict]) -> list[str]:
    def value(result: dict) -> str:
        raw = result["run"]["ablation"][factor]
        return ("tied" if raw else "untied") if factor == "tied" else f"{raw:g}" if isinstance(raw, float) else raw

    def order(result: dict) -> tuple:
        raw = result["run"]["ablation"][factor]
        known = {"noise": NOISE_TYPES, "pooling": POOLINGS, "tied": (True, False)}.get(factor)
        return (known.index(raw), 0) if known else (0, raw)

    by_value: dict[str, list[dict]] = {}
    for result in sorted(members, key=order):
        by_value.setdefault(value(result), []).append(result)
    lines = [f"### {title}", "", "| " + " | ".join(["setting", *(label for _, label in COLUMNS)]) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    rows = ([("unadapted", unadapted)] if unadapted else []) + list(by_value.items())
    for name, results in rows:
        metrics = [[r["evaluation"]["tasks"][TASK]["metrics"][key] for r in results] for key, _ in COLUMNS]
        lines.append("| " + " | ".join([name, *(cell(values) for values in metrics)]) + " |")
    means = {name: statistics.fmean(r["scores"][TASK] for r in results) for name, results in by_value.items()}
    if means:
        lines += ["", f"Best by mean AP: {max(means, key=means.get)}."]
    return lines + [""]


def main(argv: Sequence[str] | None = None) -> int:
    parser, run = command_line(__doc__, "write the Markdown tables of the finished runs")
    run.add_argument("--groups", type=parse_names, default=GROUPS, help=f"from {','.join(GROUPS)}")
    run.add_argument("--noise-types", type=parse_names, default=NOISE_TYPES)
    run.add_argument("--noise-type-ratio", type=float, default=0.3, help="the ratio the noise types are compared at")
    run.add_argument("--ratios", type=parse_floats, default=RATIOS, help="deletion ratios (default 0.1,...,0.9)")
    run.add_argument("--poolings", type=parse_names, default=POOLINGS)
    run.add_argument("--no-baselines", action="store_true", help="skip the unadapted model")
    args = parser.parse_args(argv)
    configure_logging()
    if args.command == "report":
        return write_report(args, markdown_of("TSDAE ablations on TwitterPara", ablation_section), marker=RUNS)
    check_choices(parser, ("--groups", args.groups, GROUPS), ("--noise-types", args.noise_types, NOISE_TYPES),
                  ("--poolings", args.poolings, POOLINGS))
    check_starts(parser, args.model)
    if not all(0 < r <= 1 for r in [*args.ratios, args.noise_type_ratio]):
        parser.error("noise ratios must lie in (0, 1]")
    configurations = list({configuration_name(c): c for group in args.groups for c in group_configurations(
        group, args.noise_types, args.noise_type_ratio, args.ratios, args.poolings)}.values())
    runs = ablation_runs(args.model, configurations, args.seeds, args.steps, args.batch_size, args.max_seq_length,
                         baselines=not args.no_baselines)
    return run_all(runs, args)


if __name__ == "__main__":
    sys.exit(main())
