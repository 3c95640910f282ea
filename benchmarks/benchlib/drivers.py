"""The plumbing of the resumable experiment drivers (experiments/: pause_label_efficiency.py,
pause_positive_only.py, sentence_t5.py, tsdae_domain.py, tsdae_ablation.py): many runs of (train with the
CLI, evaluate) in one work directory:

- config.json holds the settings that every run of a work directory must share: the first `run`
  stores them, a later one with other settings is refused (check_config), so a table never mixes them
  (a driver whose runs name their settings, as the TSDAE drivers do, needs none);
- each run has its own sub-directory (nested ones allowed); a run whose result.json exists is finished
  and skipped (run_pending), so an interrupted experiment resumes with the same command;
- training goes through the `sentforge` command line in a subprocess (run_sentforge), its output
  appended to a log file; after the evaluation the run keeps train.json and the metrics, and the
  weights (without their resume checkpoints) only when asked (keep_training_record);
- reports show mean ± sample standard deviation over seeds, as Markdown (markdown_of, write_report) and
  PNG (sentforge.harness.report_files.save_figure at FIGURE_DPI).

This layout (a directory and a result.json per run) is not sentforge.harness's RunState (one state file
of a budgeted command): the drivers have no budget, and their work directories and reports predate it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

logger = logging.getLogger("benchlib.drivers")

RESULT_FILE = "result.json"
CONFIG_FILE = "config.json"
START = "start"
TASK_LABELS = {"STS12": "STS12", "STS13": "STS13", "STS14": "STS14", "STS15": "STS15", "STS16": "STS16",
               "STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}
FIGURE_DPI = 120


def parse_floats(text: str) -> tuple[float, ...]:
    return tuple(float(part) for part in text.split(",") if part.strip())


def parse_ints(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(",") if part.strip())


def parse_names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")


def check_config(work_dir: Path, settings: dict) -> None:
    """Store the experiment's settings on the first run; refuse a later run whose settings differ.

    `settings` holds only what must agree between runs (what may grow, such as seeds, stays out)."""
    path = work_dir / CONFIG_FILE
    if path.exists():
        stored = json.loads(path.read_text())
        changed = [key for key in settings if stored.get(key) != settings[key]]
        if changed:
            raise SystemExit(f"{path}: this work directory was run with other settings "
                             + "; ".join(f"{k}: {stored.get(k)!r} then, {settings[k]!r} now" for k in changed)
                             + ". Use another --work-dir.")
    from sentforge.support.io import save_json

    work_dir.mkdir(parents=True, exist_ok=True)
    save_json(path, settings)


def shown_path(spec: str) -> str:
    """A model spec as a report shows it: a path relative to the current directory (where the command
    runs, the repository root in the docs), so that no report carries the machine's absolute paths."""
    return os.path.relpath(spec) if os.path.isabs(spec) else spec


def budget_steps(steps: int | None, epochs: float | None, examples: int, batch_size: int) -> int:
    """`steps` as given, or `epochs` passes over the run's own training examples (at least one step)."""
    if steps is not None:
        return steps
    return max(1, round(epochs * (examples // batch_size)))


def budget_text(config: dict) -> str:
    """The stored --steps / --epochs budget of a work directory, for report headers."""
    return f"{config['steps']} steps" if config["steps"] is not None else f"{config['epochs']:g} epochs"


def run_sentforge(arguments: list[str], log_path: Path) -> None:
    """`sentforge ARGUMENTS` in a subprocess, its output appended to log_path (a resumed run keeps the log
    of its interrupted start) after a line with the time and the command; raises on failure."""
    command = [sys.executable, "-m", "sentforge", *arguments]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"# {datetime.now(timezone.utc).isoformat(timespec='seconds')} {' '.join(command)}\n")
        log.flush()
        env = {**os.environ, "TQDM_MININTERVAL": "30"}  # a readable log, not a bar redrawn ten times a second
        finished = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, check=False)
    if finished.returncode != 0:
        tail = "\n".join(log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-15:])
        raise RuntimeError(f"sentforge {' '.join(arguments[:2])} failed (exit {finished.returncode}); "
                           f"see {log_path}:\n{tail}")


def keep_training_record(model_dir: Path, run_dir: Path, keep_model: bool) -> dict:
    """Copy train.json and the metrics logs beside the result (training/metrics.jsonl as metrics.jsonl,
    training/<stage>/metrics.jsonl as metrics-<stage>.jsonl); drop the weights unless keep_model, and
    the resume checkpoints in any case (the final model is saved beside them). Returns train.json."""
    summary = json.loads((model_dir / "train.json").read_text())
    shutil.copy2(model_dir / "train.json", run_dir / "train.json")
    training = model_dir / "training"
    for metrics in sorted(training.rglob("metrics.jsonl")) if training.is_dir() else ():
        stage = metrics.parent.relative_to(training)
        shutil.copy2(metrics, run_dir / ("metrics.jsonl" if stage == Path(".") else f"metrics-{stage.name}.jsonl"))
    if keep_model:
        for checkpoints in sorted(training.rglob("checkpoints")) if training.is_dir() else ():
            shutil.rmtree(checkpoints)
    else:
        shutil.rmtree(model_dir)
    return summary


def evaluate_model(model: Any, tasks: Sequence[str], output: Path, data_dir: Path, batch_size: int,
                   device: str | None, strict: bool = False) -> dict:
    """sentforge.evaluation.evaluate on `tasks`, its JSON and Markdown written beside the run; `strict`:
    a task whose data is missing fails the run instead of being skipped."""
    from sentforge.evaluation import evaluate

    return evaluate(model, list(tasks), data_dir=data_dir, batch_size=batch_size, output=output, overwrite=True,
                    device=device, show_progress=False, strict=strict)


def scores_of(report: dict) -> dict[str, float]:
    return {name: float(entry["main_score"]) for name, entry in report["tasks"].items()}


def family_mean(report: dict, family: str) -> float | None:
    values = [float(e["main_score"]) for e in report["tasks"].values() if e["family"] == family]
    return statistics.fmean(values) if values else None


def run_pending(work_dir: Path, names: Sequence[str], execute: Callable[[int], dict],
                describe: Callable[[dict], str]) -> int:
    """Execute (by index) every run of `names` whose result.json is missing, in order; a failed run is
    logged and the others go on. Returns the exit code: 1 when a run failed, else 0."""
    failed = []
    for number, name in enumerate(names, 1):
        if (work_dir / name / RESULT_FILE).exists():
            logger.info("[%d/%d] %s: done before, skipped", number, len(names), name)
            continue
        logger.info("[%d/%d] %s", number, len(names), name)
        try:
            result = execute(number - 1)
        except Exception as err:  # one failed run must not stop the others; it is reported at the end
            logger.error("%s failed: %s", name, err)
            failed.append(name)
            continue
        logger.info("[%d/%d] %s: %s", number, len(names), name, describe(result))
    if failed:
        logger.error("%d run(s) failed: %s (rerun the same command to retry them)", len(failed), ", ".join(failed))
        return 1
    return 0


# --- reports -------------------------------------------------------------------------------------


def read_results(work_dir: Path, runs: str = "*") -> list[dict]:
    """The results of the finished runs whose directories match the glob `runs` below work_dir."""
    return [json.loads(path.read_text()) for path in sorted(work_dir.glob(f"{runs}/{RESULT_FILE}"))]


def read_experiment(work_dir: Path) -> tuple[dict, list[dict]]:
    """The work directory's config.json and the results of its finished runs."""
    return json.loads((work_dir / CONFIG_FILE).read_text()), read_results(work_dir)


def mean_std(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for a single value)."""
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else None)


def format_mean_std(values: Sequence[float], digits: int = 2, count: bool = False, empty: str = "–") -> str:
    """`mean ± std` (the mean alone for one value), with `(number of values)` when `count`."""
    if not values:
        return empty
    mean, std = mean_std(values)
    text = f"{mean:.{digits}f}" if std is None else f"{mean:.{digits}f} ± {std:.{digits}f}"
    return f"{text} ({len(values)})" if count else text


def tasks_of(results: list[dict], family: str) -> list[str]:
    """The tasks of a family that some run scored, in the order the runs report them."""
    names = [name for r in results for name, f in r["families"].items() if f == family]
    return list(dict.fromkeys(names))


def driver_parser(description: str, report_help: str, plot: bool,
                  model_help: str = "start model: a directory or a name sentforge.load knows",
                  model_type: Callable[[str], Any] = str, several_models: bool = False,
                  ) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The command line of a driver: `run` (returned, for the driver's own options), with --model
    (repeatable when several_models), --work-dir, --eval-batch-size, --device and --keep-models; and
    `report` (--work-dir repeated, --table, --plot when the driver draws one, --overwrite)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="train and evaluate the runs not done yet")
    run.add_argument("--model", required=True, type=model_type, action="append" if several_models else "store",
                     help=model_help + (" (repeatable)" if several_models else ""))
    run.add_argument("--work-dir", type=Path, required=True, help="one sub-directory per run; reruns resume")
    run.add_argument("--eval-batch-size", type=int, default=64)
    run.add_argument("--device", default=None)
    run.add_argument("--keep-models", action="store_true", help="keep each run's trained encoder (default: "
                                                                "only its train.json, metrics and results)")
    report = commands.add_parser("report", help=report_help)
    report.add_argument("--work-dir", type=Path, action="append", required=True, help="repeat for several models")
    report.add_argument("--table", type=Path, default=None, help="Markdown output (default: print)")
    if plot:
        report.add_argument("--plot", type=Path, default=None, help="PNG output")
    report.add_argument("--overwrite", action="store_true")
    return parser, run


def markdown_of(title: str, section: Callable[[Path], list[str]], intro: str | None = None,
                ) -> Callable[[Sequence[Path]], str]:
    """The `report` Markdown of a driver: the title, the intro paragraph when given, then one section per
    work directory."""
    def markdown(work_dirs: Sequence[Path]) -> str:
        lines = [f"# {title}", ""] + ([intro, ""] if intro else [])
        for work_dir in work_dirs:
            lines += section(work_dir)
        return "\n".join(lines).rstrip("\n") + "\n"
    return markdown


def write_report(args: argparse.Namespace, markdown: Callable[[Sequence[Path]], str],
                 plot: Callable[[Sequence[Path], Path], None] | None = None, marker: str = CONFIG_FILE) -> int:
    """The `report` command: the Markdown of args.work_dir to args.table (or stdout) and, when the
    driver draws one, the plot to args.plot; refuses existing outputs without args.overwrite, and work
    directories without `marker` (what the driver's `run` writes first)."""
    from sentforge.support.errors import OutputExistsError
    from sentforge.support.io import atomic_file
    from sentforge.support.output_guard import check_existing_file

    missing = [str(d) for d in args.work_dir if not (d / marker).exists()]
    if missing:
        raise SystemExit(f"no experiment in {', '.join(missing)} ({marker} missing)")
    plot_path = getattr(args, "plot", None)
    if plot_path is not None:
        check_existing_file(Path(plot_path), "png", args.overwrite)
    # the table is plain Markdown, often a docs/ page: any existing file is replaced with --overwrite (the
    # output rule's "markdown" format would accept only a file signed by a sentforge command)
    if args.table is not None and Path(args.table).is_dir():
        raise OutputExistsError(f"output path {args.table} is a directory, expected a file")
    if args.table is not None and Path(args.table).exists() and not args.overwrite:
        raise OutputExistsError(f"output file {args.table} already exists; pass --overwrite to replace it")
    text = markdown(args.work_dir)
    if args.table is not None:
        with atomic_file(args.table, "w") as handle:
            handle.write(text)
        logger.info("wrote %s", args.table)
    else:
        print(text)
    if plot is not None and plot_path is not None:
        plot(args.work_dir, plot_path)
        logger.info("wrote %s", plot_path)
    return 0
