"""PAUSE label efficiency: PAUSE against supervised-only training at label
fractions 100/50/30/10/5/1 %, each trained encoder evaluated on STS12-16, STS-B and SICK-R (Spearman)
and, at 100 % and 10 %, on the SentEval transfer tasks.

    python benchmarks/experiments/pause_label_efficiency.py run --model ../shared/models/paraphrase-MiniLM-L3-v2 \\
        --work-dir runs/pause-label-efficiency/minilm-l3 --steps 2000 --batch-size 64
    python benchmarks/experiments/pause_label_efficiency.py report --work-dir runs/pause-label-efficiency/minilm-l3 \\
        --table pause-label-efficiency.md --plot pause-label-efficiency.png

`run` trains with `sentforge train pause` (a subprocess: only the command-line syntax is relied on) on
SNLI dev+test and SICK train (`--pairs` to change), one run per (method, label fraction, seed), each
in its own sub-directory of --work-dir; a run whose result.json exists is skipped, so an interrupted
experiment resumes with the same command. A run's label subset, batches and initialisation all
follow its seed; by default seeds 0,1,2 at 100/10/1 % and seed 0 elsewhere.
The start model itself is evaluated once (`start/`) as the reference. The budget (--steps, or
--epochs over each run's own training pairs) and the other training settings are stored in
config.json on the first run; a later `run` with other settings is refused, so one table never
mixes budgets. `report` writes Markdown tables (mean ± sample std over seeds) and a PNG curve of
the STS average against the label fraction, one panel per --work-dir.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import DATA
from benchlib.drivers import (FIGURE_DPI, RESULT_FILE, START, TASK_LABELS, budget_steps, budget_text, check_config,
                              configure_logging, driver_parser, evaluate_model, family_mean, format_mean_std,
                              keep_training_record, markdown_of, mean_std, parse_floats, parse_ints, parse_names,
                              read_experiment, run_pending, run_sentforge, scores_of, shown_path, tasks_of,
                              write_report)

logger = logging.getLogger("pause_label_efficiency")

PAIRS = ("senteval/downstream/SNLI", "senteval/downstream/SICK/SICK_train.txt")  # relative to --data-dir
FRACTIONS = (1.0, 0.5, 0.3, 0.1, 0.05, 0.01)
SEEDS = (0, 1, 2)
MULTI_SEED_FRACTIONS = (1.0, 0.1, 0.01)
TRANSFER_FRACTIONS = (1.0, 0.1)
STS_TASKS = ("sts12", "sts13", "sts14", "sts15", "sts16", "stsbenchmark", "sickrelatedness")
TRANSFER_TASKS = ("transfer",)
METHODS = ("pause", "supervised")
METHOD_NAMES = {"pause": "PAUSE", "supervised": "supervised-only", "start": "start model"}


@dataclass(frozen=True)
class Run:
    method: str  # "pause", "supervised" or START
    fraction: float | None = None
    seed: int | None = None

    @property
    def name(self) -> str:
        return START if self.method == START else f"{self.method}-f{self.fraction:g}-s{self.seed}"


def plan(fractions: Sequence[float], seeds: Sequence[int], multi_seed_fractions: Sequence[float],
         methods: Sequence[str]) -> list[Run]:
    """Every seed at the multi-seed fractions, the first seed elsewhere; every method for each.

    Seed-major, so that an interrupted experiment already has a whole curve for the first seed.
    """
    runs = []
    for seed in seeds:
        for fraction in fractions:
            if seed == seeds[0] or fraction in multi_seed_fractions:
                runs += [Run(method, fraction, seed) for method in methods]
    return runs


def execute(run: Run, args: argparse.Namespace, pairs: list, with_transfer: bool) -> dict:
    """Train (unless the start model), evaluate and write the run's result.json; returns the result."""
    from sentforge.data.nli import label_fraction
    from sentforge.support.io import save_json

    run_dir = args.work_dir / run.name
    run_dir.mkdir(parents=True, exist_ok=True)
    tasks = [*args.sts_tasks, *(args.transfer_tasks if with_transfer else ())]
    result: dict = {"run": run.name, "method": run.method, "fraction": run.fraction, "seed": run.seed,
                    "model": args.model, "tasks": tasks}
    if run.method == START:
        tick = time.perf_counter()
        report = evaluate_model(args.model, tasks, run_dir / "eval.json", args.data_dir, args.eval_batch_size,
                                args.device)
        result["eval_seconds"] = round(time.perf_counter() - tick, 1)
    else:
        labelled = sum(label is not None for _, _, label in label_fraction(pairs, run.fraction, run.seed))
        examples = labelled if run.method == "supervised" else len(pairs)
        batch_size = min(args.batch_size, examples)  # supervised-only at 1 % may hold fewer pairs than a batch
        steps = budget_steps(args.steps, args.epochs, examples, batch_size)
        model_dir = run_dir / "model"
        tick = time.perf_counter()
        if not (model_dir / "train.json").exists():  # the CLI writes train.json last: a finished training
            arguments = ["--model", args.model, *(a for p in args.pairs for a in ("--pairs", str(p))),
                         "--label-fraction", f"{run.fraction:g}", "--steps", str(steps), "--batch-size",
                         str(batch_size), "--seed", str(run.seed), "--output", str(model_dir), "--overwrite",
                         "--log-every", str(max(1, steps // 50))]
            arguments += ["--supervised-only"] if run.method == "supervised" else []
            arguments += ["--lr", str(args.lr)] if args.lr is not None else []
            arguments += ["--max-seq-length", str(args.max_seq_length)] if args.max_seq_length else []
            arguments += ["--device", args.device] if args.device else []
            logger.info("%s: training %d steps of %d pairs (%d labelled)", run.name, steps, batch_size, labelled)
            run_sentforge(["train", "pause", *arguments], run_dir / "train.log")
        result["train_seconds"] = round(time.perf_counter() - tick, 1)
        tick = time.perf_counter()
        report = evaluate_model(str(model_dir), tasks, run_dir / "eval.json", args.data_dir,
                                args.eval_batch_size, args.device)
        result["eval_seconds"] = round(time.perf_counter() - tick, 1)
        summary = keep_training_record(model_dir, run_dir, args.keep_models)
        result.update({"steps": summary["steps"], "batch_size": summary["batch_size"],
                       "examples": summary["examples"], "labelled": summary["labelled"],
                       "final_loss": summary["final_loss"]})
    result.update({"scores": scores_of(report),
                   "families": {name: entry["family"] for name, entry in report["tasks"].items()},
                   "sts_avg": family_mean(report, "sts"),
                   "transfer_avg": family_mean(report, "transfer"), "skipped": report["skipped"]})
    save_json(run_dir / RESULT_FILE, result)
    return result


def command_run(args: argparse.Namespace) -> int:
    from sentforge.data.nli import read_nli_pairs

    args.pairs = [Path(p) if Path(p).is_absolute() else args.data_dir / p for p in args.pairs]
    if Path(args.model).exists():  # a directory: stored absolute, so that config.json compares reliably
        args.model = str(Path(args.model).resolve())
    settings = {"model": args.model, "pairs": [str(p) for p in args.pairs], "steps": args.steps,
                "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr,
                "max_seq_length": args.max_seq_length, "sts_tasks": list(args.sts_tasks),
                "transfer_tasks": list(args.transfer_tasks)}
    check_config(args.work_dir, settings)
    pairs = [pair for path in args.pairs for pair in read_nli_pairs(path)]
    logger.info("%d pairs from %s", len(pairs), ", ".join(map(str, args.pairs)))
    runs = [Run(START), *plan(args.fractions, args.seeds, args.multi_seed_fractions, args.methods)]
    names = [run.name for run in runs]

    def execute_run(index: int) -> dict:
        run = runs[index]
        in_transfer = run.fraction in args.transfer_fractions
        with_transfer = bool(args.transfer_fractions) if run.method == START else in_transfer
        return execute(run, args, pairs, with_transfer)

    def describe(result: dict) -> str:
        averages = [f"{family} average {result[key]:.2f}" for family, key in (("STS", "sts_avg"),
                                                                               ("transfer", "transfer_avg"))
                    if result[key] is not None]
        return ", ".join(averages) or "no scores"

    return run_pending(args.work_dir, names, execute_run, describe)


# --- report --------------------------------------------------------------------------------------

def grouped(results: list[dict]) -> dict[tuple[str, float | None], list[dict]]:
    """Results by (method, fraction), the start model first, then by fraction (largest first), PAUSE first."""
    groups: dict[tuple[str, float | None], list[dict]] = {}
    order = {START: 0, "pause": 1, "supervised": 2}
    for result in sorted(results, key=lambda r: (r["method"] != START, -(r["fraction"] or 0), order[r["method"]],
                                                 r["seed"] or 0)):
        groups.setdefault((result["method"], result["fraction"]), []).append(result)
    return groups


def score_table(groups: dict, family_tasks: list[str], average_key: str, title: str) -> list[str]:
    """One row per (method, fraction) that has scores for these tasks: mean ± std per task and the average."""
    header = [TASK_LABELS.get(task, task) for task in family_tasks]
    lines = [f"**{title}**", "", "| labels | method | seeds | " + " | ".join(header) + " | average |",
             "|---|---|---:|" + "---:|" * (len(header) + 1)]
    for (method, fraction), results in groups.items():
        rows = [r for r in results if r[average_key] is not None]
        if not rows:
            continue
        cells = [format_mean_std([r["scores"][t] for r in rows if t in r["scores"]]) for t in family_tasks]
        lines.append(f"| {'–' if fraction is None else f'{fraction * 100:g} %'} | {METHOD_NAMES[method]} | "
                     f"{len(rows)} | " + " | ".join(cells) + f" | {format_mean_std([r[average_key] for r in rows])} |")
    return lines


def comparison_table(groups: dict, n_tasks: int) -> list[str]:
    """STS average per fraction: PAUSE, supervised-only, their difference, and PAUSE relative to PAUSE at 100 %."""
    pause = {f: [r["sts_avg"] for r in rs] for (m, f), rs in groups.items() if m == "pause"}
    supervised = {f: [r["sts_avg"] for r in rs] for (m, f), rs in groups.items() if m == "supervised"}
    full = statistics.fmean(pause[1.0]) if pause.get(1.0) else None
    lines = [f"**STS average ({n_tasks} task{'s' if n_tasks != 1 else ''}): PAUSE against supervised-only**", "",
             "| labels | PAUSE | supervised-only | PAUSE − supervised | PAUSE / PAUSE at 100 % |",
             "|---|---:|---:|---:|---:|"]
    for fraction in sorted(set(pause) | set(supervised), reverse=True):
        a, b = pause.get(fraction, []), supervised.get(fraction, [])
        difference = f"{statistics.fmean(a) - statistics.fmean(b):+.2f}" if a and b else "–"
        relative = f"{100 * statistics.fmean(a) / full:.1f} %" if a and full else "–"
        lines.append(f"| {fraction * 100:g} % | {format_mean_std(a)} | {format_mean_std(b)} | {difference} "
                     f"| {relative} |")
    return lines


def section(work_dir: Path) -> list[str]:
    config, results = read_experiment(work_dir)
    budget = budget_text(config)
    lines = [f"## Start model `{shown_path(config['model'])}`", "",
             f"Training: {budget}, batch size {config['batch_size']}, pairs: "
             + ", ".join(f"`{Path(p).name}`" for p in config["pairs"]) + f"; {len(results)} finished runs in "
             f"`{work_dir}`.", ""]
    if not results:
        return lines
    groups = grouped(results)
    sts_tasks, transfer_tasks = tasks_of(results, "sts"), tasks_of(results, "transfer")
    lines += comparison_table(groups, len(sts_tasks)) + [""]
    lines += score_table(groups, sts_tasks, "sts_avg", "STS tasks (Spearman)") + [""]
    if transfer_tasks:
        lines += score_table(groups, transfer_tasks, "transfer_avg", "SentEval transfer tasks (accuracy)") + [""]
    return lines


markdown = markdown_of("PAUSE label efficiency", section, intro=(
    "Spearman × 100 of cosine similarity (STS: SentEval's mean over subsets for STS12-16), accuracy "
    "for the transfer tasks; mean ± sample standard deviation over seeds."))


def plot(work_dirs: Sequence[Path], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sentforge.harness.report_files import save_figure

    fig, axes = plt.subplots(1, len(work_dirs), figsize=(6 * len(work_dirs), 4.2), squeeze=False)
    for ax, work_dir in zip(axes[0], work_dirs):
        config, results = read_experiment(work_dir)
        groups = grouped(results)
        for method, style in (("pause", "o-"), ("supervised", "s--")):
            points = sorted((f, mean_std([r["sts_avg"] for r in rs])) for (m, f), rs in groups.items() if m == method)
            if points:
                ax.errorbar([100 * f for f, _ in points], [m for _, (m, _) in points],
                            yerr=[s or 0.0 for _, (_, s) in points], fmt=style, capsize=3, label=METHOD_NAMES[method])
        if (START, None) in groups:
            ax.axhline(groups[(START, None)][0]["sts_avg"], color="grey", ls=":", label="start model")
        ax.set_xscale("log")
        fractions = sorted({f for (m, f) in groups if m != START})
        ax.set_xticks([100 * f for f in fractions], [f"{100 * f:g}" for f in fractions])
        ax.minorticks_off()
        ax.set_xlabel("labelled pairs (%)")
        ax.set_ylabel("STS average Spearman × 100")
        ax.set_title(Path(config["model"]).name, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save_figure(plt, fig, path, FIGURE_DPI)  # laid out, written atomically, closed


def main(argv: Sequence[str] | None = None) -> int:
    parser, run = driver_parser(__doc__, "Markdown tables and a PNG curve from finished runs", plot=True)
    budget = run.add_mutually_exclusive_group(required=True)
    budget.add_argument("--steps", type=int, help="optimizer steps of every run")
    budget.add_argument("--epochs", type=float, help="passes over each run's own training pairs (PAUSE: all "
                                                     "pairs; supervised-only: the labelled ones)")
    run.add_argument("--batch-size", type=int, default=64, help="pairs per batch (paper: 1024)")
    run.add_argument("--lr", type=float, default=None, help="peak learning rate (default: the CLI's, 7.5e-5)")
    run.add_argument("--max-seq-length", type=int, default=None)
    run.add_argument("--fractions", type=parse_floats, default=FRACTIONS, help="label fractions, comma-separated")
    run.add_argument("--seeds", type=parse_ints, default=SEEDS)
    run.add_argument("--multi-seed-fractions", type=parse_floats, default=MULTI_SEED_FRACTIONS,
                     help="fractions run with every seed; the others with the first seed only")
    run.add_argument("--methods", type=parse_names, default=METHODS, help="pause,supervised")
    run.add_argument("--pairs", nargs="+", default=list(PAIRS), help="pair data (relative paths: to --data-dir)")
    run.add_argument("--sts-tasks", type=parse_names, default=STS_TASKS)
    run.add_argument("--transfer-tasks", type=parse_names, default=TRANSFER_TASKS)
    run.add_argument("--transfer-fractions", type=parse_floats, default=TRANSFER_FRACTIONS,
                     help="fractions also evaluated on the transfer tasks (empty: none)")
    run.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args(argv)
    configure_logging()
    if args.command == "run":
        if any(not 0.0 < f <= 1.0 for f in args.fractions):
            parser.error(f"--fractions must lie in (0, 1], got {args.fractions}")
        if unknown := set(args.methods) - set(METHODS):
            parser.error(f"--methods: unknown {sorted(unknown)}; choose from {', '.join(METHODS)}")
        if (args.steps is not None and args.steps < 1) or (args.epochs is not None and args.epochs <= 0):
            parser.error("the budget (--steps or --epochs) must be positive")
        return command_run(args)
    return write_report(args, markdown, plot)


if __name__ == "__main__":
    sys.exit(main())
