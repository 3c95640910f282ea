"""The TSDAE paper's domain experiments (issue 5, Must-show 1 and 2): adapt a start model to a domain
with TSDAE, MLM, SimCSE, CT and BERT-flow under one step budget, and evaluate every result, the
unadapted model and BM25 on the domain task and on STS-B test (STSBenchmark-raw).

    python benchmarks/tsdae_domain.py run --work-dir W --model ../shared/models/paraphrase-MiniLM-L3-v2 \\
        --steps 10000                                  # both domains, five methods, seeds 0,1,2
    python benchmarks/tsdae_domain.py run --work-dir W --model /work/runs/pretrain/bert-small \\
        --model random:/work/runs/pretrain/bert-small --methods tsdae --steps 10000
    python benchmarks/tsdae_domain.py report --work-dir W --output results.md

Domains (unlabelled text from `sentforge.data.domain_corpora`, written once to W/corpora/):
- `twitterpara`: the distinct TURL train tweets, scored with TwitterPara (mean AP of PIT-2015 test and
  TURL test);
- `qatarliving`: Qatar Living questions outside the evaluation data, scored with QatarLivingCQA (MAP).

`--model random:SPEC` starts from SPEC's architecture and tokenizer with random weights (one random
initialisation per seed; the paper's "Scratch" row). Training runs `sentforge train METHOD` in a
subprocess (each method's paper defaults, `--no-split`: one tweet or question per example); evaluation
runs in this process. Every run has its own directory W/runs/START/DOMAIN/NAME with `result.json`
written last: a rerun skips finished runs, resumes an interrupted training from its last checkpoint
(`--resume`), and evaluates a trained model that has no result yet. Failed runs are listed at the end
(exit status 1); the others go on.
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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

logger = logging.getLogger("tsdae_domain")

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"
METHODS = ("tsdae", "mlm", "simcse", "ct", "bertflow")
DOMAINS = ("twitterpara", "qatarliving")
DOMAIN_TASKS = {"twitterpara": "TwitterPara", "qatarliving": "QatarLivingCQA"}
STS_TASK = "STSBenchmark-raw"
RESULT = "result.json"
RANDOM_PREFIX = "random:"


def parse_list(text: str, kind: Callable[[str], Any] = str) -> list:
    try:
        return [kind(part.strip()) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}") from None


# ---------------------------------------------------------------------------------------------------------
# Start models, corpora
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Start:
    """A start model: a model spec, or (random) its architecture and tokenizer with random weights."""

    spec: str
    random: bool

    @classmethod
    def parse(cls, text: str) -> Start:
        random = text.startswith(RANDOM_PREFIX)
        spec = text[len(RANDOM_PREFIX):] if random else text
        path = Path(spec).expanduser()
        return cls(str(path.resolve()) if path.exists() else spec, random)

    @property
    def label(self) -> str:
        name = Path(self.spec.rstrip("/")).name or self.spec
        return f"random-{name}" if self.random else name

    def path(self, work_dir: Path, seed: int) -> str:
        """The model spec to train from (a random initialisation is written once per seed)."""
        if not self.random:
            return self.spec
        target = work_dir / "starts" / f"{self.label}-seed{seed}"
        if not (target / "modules.json").exists():
            from sentforge.recipes.pretrain import random_init_like

            random_init_like(self.spec, seed=seed).save(target, overwrite=True)
            logger.info("wrote the random initialisation %s", target)
        return str(target)


def corpus_file(work_dir: Path, domain: str, data_dir: Path) -> Path:
    """W/corpora/DOMAIN.txt (one text per line) and its summary DOMAIN.json, built on first use."""
    from sentforge.data.domain_corpora import CORPORA
    from sentforge.io import atomic_file, save_json

    path = work_dir / "corpora" / f"{domain}.txt"
    if not path.exists():
        corpus = CORPORA[domain](data_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_json(path.with_suffix(".json"), corpus.summary())
        with atomic_file(path, "w") as handle:
            handle.writelines(text + "\n" for text in corpus.texts)
        logger.info("wrote %s: %d texts", path, len(corpus.texts))
    return path


# ---------------------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------------------

@dataclass
class Run:
    """One model to evaluate on one domain: trained from a start (method set) or a baseline (none)."""

    driver: str
    start: Start | None  # None: BM25
    domain: str
    name: str  # the run directory's name, unique within W/runs/START/DOMAIN
    tasks: list[str]
    seed: int | None = None
    method: str | None = None
    steps: int | None = None
    train_options: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def directory(self, work_dir: Path) -> Path:
        return work_dir / "runs" / (self.start.label if self.start else "bm25") / self.domain / self.name

    def train_command(self, start_path: str, corpus: Path, output: Path) -> list[str]:
        return [sys.executable, "-m", "sentforge", "train", self.method, "--model", start_path,
                "--corpus", str(corpus), "--no-split", "--steps", str(self.steps), "--seed", str(self.seed),
                "--output", str(output), *self.train_options]

    def describe(self) -> dict[str, Any]:
        kind = "bm25" if self.start is None else ("unadapted" if self.method is None else self.method)
        return {"driver": self.driver, "start": self.start.label if self.start else "bm25",
                "start_spec": self.start.spec if self.start else None,
                "random_init": bool(self.start and self.start.random), "domain": self.domain, "kind": kind,
                "name": self.name, "seed": self.seed, "steps": self.steps, "train_options": self.train_options,
                **self.meta}


@dataclass
class Settings:
    work_dir: Path
    data_dir: Path
    device: str | None
    eval_batch_size: int
    checkpoint_every: int
    discard_models: bool


def setting_label(steps: int, batch_size: int | None, pooling: str | None) -> str:
    """The training budget and the overrides that every method of a sweep shares."""
    return f"steps{steps}" + (f"-bs{batch_size}" if batch_size else "") + (f"-pool{pooling}" if pooling else "")


def common_train_options(batch_size: int | None, max_seq_length: int | None) -> list[str]:
    options = []
    if batch_size:
        options += ["--batch-size", str(batch_size)]
    if max_seq_length:
        options += ["--max-seq-length", str(max_seq_length)]
    return options


def train(run: Run, run_dir: Path, settings: Settings) -> tuple[Path, dict[str, Any], float | None]:
    """Train (or resume, or reuse) the run's model; return its directory, its train.json and the seconds."""
    output = run_dir / "model"
    summary = output / "train.json"
    if summary.exists():
        return output, json.loads(summary.read_text(encoding="utf-8")), None
    corpus = corpus_file(settings.work_dir, run.domain, settings.data_dir)
    command = run.train_command(run.start.path(settings.work_dir, run.seed), corpus, output)
    if settings.device:
        command += ["--device", settings.device]
    if settings.checkpoint_every < run.steps:
        command += ["--checkpoint-every", str(settings.checkpoint_every)]
    if (output / "training").is_dir():
        command.append("--resume")
    elif output.exists():
        command.append("--overwrite")
    run_dir.mkdir(parents=True, exist_ok=True)
    log_path = run_dir / "train.log"
    logger.info("training %s: %s", run_dir, " ".join(command))
    started = time.perf_counter()
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"# {datetime.now(timezone.utc).isoformat(timespec='seconds')} {' '.join(command)}\n")
        log.flush()
        env = {**os.environ, "TQDM_MININTERVAL": "30"}  # a readable log, not a bar redrawn ten times a second
        completed = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, check=False)
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        text = log_path.read_text(encoding="utf-8", errors="replace").replace("\r", "\n")
        tail = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("# ")][-3:]
        raise RuntimeError(f"sentforge train exited with {completed.returncode} (log {log_path}): "
                           + " | ".join(tail))
    return output, json.loads(summary.read_text(encoding="utf-8")), seconds


def execute(run: Run, settings: Settings) -> None:
    from sentforge.evaluation.runner import evaluate
    from sentforge.io import save_json

    run_dir = run.directory(settings.work_dir)
    trained, train_seconds = None, None
    if run.start is None:
        model = "bm25"
    elif run.method is None:
        model = run.start.path(settings.work_dir, run.seed or 0)
    else:
        model_dir, trained, train_seconds = train(run, run_dir, settings)
        model = str(model_dir)
    started = time.perf_counter()
    report = evaluate(model, tasks=run.tasks, data_dir=settings.data_dir, batch_size=settings.eval_batch_size,
                      strict=True, device=settings.device, show_progress=False)
    eval_seconds = time.perf_counter() - started
    run_dir.mkdir(parents=True, exist_ok=True)
    save_json(run_dir / RESULT, {
        "run": run.describe(), "model": model, "train": trained, "train_seconds": train_seconds,
        "eval_seconds": round(eval_seconds, 1),
        "scores": {name: entry["main_score"] for name, entry in report["tasks"].items()},
        "evaluation": report})
    if trained is not None:
        _tidy(run_dir, settings.discard_models)
    logger.info("%s: %s", run_dir, ", ".join(f"{name} {entry['main_score']:.2f}"
                                            for name, entry in report["tasks"].items()))


def _tidy(run_dir: Path, discard_model: bool) -> None:
    """Drop the training checkpoints (the final model is saved beside them); with `discard_model`, keep
    only train.json and the training metrics of the model."""
    model = run_dir / "model"
    shutil.rmtree(model / "training" / "checkpoints", ignore_errors=True)
    if discard_model:
        for name, source in (("train.json", model / "train.json"),
                             ("metrics.jsonl", model / "training" / "metrics.jsonl")):
            if source.exists():
                shutil.copy2(source, run_dir / name)
        shutil.rmtree(model)


def run_all(runs: Sequence[Run], settings: Settings, dry_run: bool) -> int:
    """Run what has no result yet; return the number of failures."""
    from tqdm.auto import tqdm

    pending = [run for run in runs if not (run.directory(settings.work_dir) / RESULT).exists()]
    logger.info("%d runs planned, %d already done, %d to run", len(runs), len(runs) - len(pending), len(pending))
    if dry_run:
        for run in pending:
            what = "evaluate" if run.method is None else " ".join(run.train_command(
                "START", Path("CORPUS"), run.directory(settings.work_dir) / "model")[2:])
            print(f"{run.directory(settings.work_dir)}: {what}")
        return 0
    failures = []
    for run in tqdm(pending, desc="runs", unit="run"):
        try:
            execute(run, settings)
        except Exception as err:  # noqa: BLE001 - one failed run must not stop a sweep of hours; listed below
            logger.error("%s failed: %s", run.directory(settings.work_dir), err)
            failures.append((run, err))
    for run, err in failures:
        print(f"FAILED {run.directory(settings.work_dir)}: {err}", file=sys.stderr)
    return len(failures)


def domain_runs(starts: Sequence[Start], domains: Sequence[str], methods: Sequence[str], seeds: Sequence[int],
                steps: int, batch_size: int | None, pooling: str | None, max_seq_length: int | None,
                baselines: bool) -> list[Run]:
    setting = setting_label(steps, batch_size, pooling)
    options = common_train_options(batch_size, max_seq_length) + (["--pooling", pooling] if pooling else [])
    runs = []
    for domain in domains:
        tasks = [DOMAIN_TASKS[domain], STS_TASK]
        if baselines:
            runs.append(Run("tsdae_domain", None, domain, "bm25", tasks))
        for start in starts:
            if baselines:
                # A random start differs per seed; a checkpoint is evaluated once.
                for seed in (seeds if start.random else [None]):
                    name = "unadapted" if seed is None else f"unadapted-seed{seed}"
                    runs.append(Run("tsdae_domain", start, domain, name, tasks, seed=seed))
            for method in methods:
                for seed in seeds:
                    runs.append(Run("tsdae_domain", start, domain, f"{method}-{setting}-seed{seed}", tasks,
                                    seed=seed, method=method, steps=steps, train_options=options,
                                    meta={"setting": setting}))
    return runs


# ---------------------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------------------

def load_results(work_dir: Path, driver: str) -> list[dict[str, Any]]:
    results = []
    for path in sorted((work_dir / "runs").glob(f"*/*/*/{RESULT}")):
        result = json.loads(path.read_text(encoding="utf-8"))
        if result["run"]["driver"] == driver:
            results.append(result)
    return results


def cell(values: Sequence[float]) -> str:
    """mean ± sample standard deviation (number of seeds); one value alone has no spread."""
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.2f} (1)"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f} ({len(values)})"


def scores(results: Sequence[dict[str, Any]], task: str) -> list[float]:
    return [r["scores"][task] for r in results if task in r["scores"]]


def best(rows: dict[str, list[dict[str, Any]]], task: str, candidates: Sequence[str]) -> str | None:
    means = {kind: statistics.mean(scores(rows[kind], task)) for kind in candidates
             if kind in rows and scores(rows[kind], task)}
    return max(means, key=means.get) if means else None


def domain_report(work_dir: Path) -> str:
    results = load_results(work_dir, "tsdae_domain")
    if not results:
        raise SystemExit(f"no results of tsdae_domain.py under {work_dir / 'runs'}")
    starts = list(dict.fromkeys(r["run"]["start"] for r in results if r["run"]["kind"] != "bm25"))
    domains = [d for d in DOMAINS if any(r["run"]["domain"] == d for r in results)]
    lines = ["# TSDAE domain experiments", "",
             (f"Work directory `{work_dir}`; {len(results)} finished runs; report written "
              f"{datetime.now(timezone.utc).isoformat(timespec='minutes')}. Cells: mean ± sample standard "
              "deviation over seeds (number of seeds). Domain scores: TwitterPara mean AP of PIT-2015 and TURL "
              "test (×100); QatarLivingCQA MAP (×100). STS-B: STSBenchmark-raw test Spearman (×100) of the model "
              "adapted on that domain. BM25 has no STS score."), ""]
    for domain in domains:
        corpus = work_dir / "corpora" / f"{domain}.json"
        if corpus.exists():
            info = json.loads(corpus.read_text(encoding="utf-8"))
            lines.append(f"- {domain} corpus: {info['texts']} texts ({info['distinct_read']} distinct read, "
                         f"{info['dropped_as_heldout_near_duplicates']} dropped as near-duplicates of test texts)")
    for start in starts:
        mine = [r for r in results if r["run"]["start"] == start]
        settings = sorted({r["run"]["setting"] for r in mine if r["run"].get("setting")}) or [None]
        for setting in settings:
            spec = mine[0]["run"]["start_spec"]
            origin = ("random weights in the architecture of " if mine[0]["run"]["random_init"] else "")
            origin += f"`{spec}`"
            lines += ["", f"## {start}" + (f", {setting}" if setting else ""), "", f"Start: {origin}.", ""]
            header, rule = ["method"], ["---"]
            for domain in domains:
                header += [f"{DOMAIN_TASKS[domain]}", f"STS-B ({domain})"]
                rule += ["---:", "---:"]
            lines += ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
            rows: dict[str, dict[str, list[dict[str, Any]]]] = {}
            for result in results:
                run = result["run"]
                if run["kind"] == "bm25" or (run["start"] == start and run.get("setting") in (None, setting)):
                    rows.setdefault(run["kind"], {}).setdefault(run["domain"], []).append(result)
            order = ["bm25", "unadapted", *METHODS, *sorted(set(rows) - {"bm25", "unadapted", *METHODS})]
            for kind in (k for k in order if k in rows):
                line = [kind]
                for domain in domains:
                    found = rows[kind].get(domain, [])
                    line += [cell(scores(found, DOMAIN_TASKS[domain])), cell(scores(found, STS_TASK))]
                lines.append("| " + " | ".join(line) + " |")
            adapted = [k for k in rows if k not in ("bm25", "unadapted")]
            for domain in domains:
                by_kind = {kind: rows[kind][domain] for kind in rows if domain in rows[kind]}
                task_best, sts_best = best(by_kind, DOMAIN_TASKS[domain], adapted), best(by_kind, STS_TASK, adapted)
                if task_best is not None:
                    lines += ["", (f"Best adapted method by mean, {domain}: {DOMAIN_TASKS[domain]} {task_best}; "
                                   f"STS-B {sts_best}.")]
    return "\n".join(lines) + "\n"


def write_report(text: str, output: Path) -> None:
    from sentforge.io import atomic_file

    output.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(output, "w") as handle:
        handle.write(text)
    print(f"wrote {output}")


# ---------------------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------------------

def add_common_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--work-dir", type=Path, required=True, help="runs, corpora and random starts go here")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="the data root (default ../shared/data)")
    parser.add_argument("--steps", type=int, required=True, help="optimizer steps per training run")
    parser.add_argument("--seeds", type=lambda t: parse_list(t, int), default=[0, 1, 2])
    parser.add_argument("--batch-size", type=int, help="one batch size for every method (default: each method's)")
    parser.add_argument("--max-seq-length", type=int, help="truncate training texts to this many tokens")
    parser.add_argument("--device", help="training and evaluation device (default: cuda when available)")
    parser.add_argument("--eval-batch-size", type=int, default=64)
    parser.add_argument("--checkpoint-every", type=int, default=1000,
                        help="checkpoint interval, for resuming an interrupted run (removed when it finishes)")
    parser.add_argument("--discard-models", action="store_true",
                        help="delete each trained model once evaluated (keeps train.json and metrics.jsonl)")
    parser.add_argument("--dry-run", action="store_true", help="list the pending runs and stop")


def command_line(description: str, report_help: str) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """A driver's parser: `run` (returned, for the driver's own options) with the common options and
    --model, and `report` (--work-dir, --output)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="train and evaluate what has no result yet")
    add_common_run_options(run)
    run.add_argument("--model", action="append", required=True, type=Start.parse,
                     help="start model spec; random:SPEC for SPEC's architecture with random weights (repeatable)")
    report = commands.add_parser("report", help=report_help)
    report.add_argument("--work-dir", type=Path, required=True)
    report.add_argument("--output", type=Path, required=True)
    return parser, run


def settings_from(args: argparse.Namespace) -> Settings:
    return Settings(args.work_dir.resolve(), args.data_dir.resolve(), args.device, args.eval_batch_size,
                    args.checkpoint_every, args.discard_models)



def check_choices(parser: argparse.ArgumentParser, *options: tuple[str, Sequence[str], Sequence[str]]) -> None:
    """Stop with a usage error naming the option when a list option holds a value outside its choices."""
    for name, chosen, allowed in options:
        if unknown := sorted(set(chosen) - set(allowed)):
            parser.error(f"{name}: unknown {', '.join(unknown)}; choose from {', '.join(allowed)}")

def main(argv: Sequence[str] | None = None) -> int:
    parser, run = command_line(__doc__, "write the Markdown table of the finished runs")
    run.add_argument("--domains", type=parse_list, default=list(DOMAINS), help=f"from {','.join(DOMAINS)}")
    run.add_argument("--methods", type=parse_list, default=list(METHODS), help=f"from {','.join(METHODS)}")
    run.add_argument("--pooling", help="one pooling for every method (cls, mean, max, keep; default: each method's)")
    run.add_argument("--no-baselines", action="store_true", help="skip BM25 and the unadapted models")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

    if args.command == "report":
        write_report(domain_report(args.work_dir.resolve()), args.output)
        return 0
    check_choices(parser, ("--domains", args.domains, DOMAINS), ("--methods", args.methods, METHODS))
    labels = [start.label for start in args.model]
    if len(set(labels)) != len(labels):
        parser.error(f"--model: two start models share a directory name ({', '.join(labels)})")
    runs = domain_runs(args.model, args.domains, args.methods, args.seeds, args.steps, args.batch_size,
                       args.pooling, args.max_seq_length, baselines=not args.no_baselines)
    return 1 if run_all(runs, settings_from(args), args.dry_run) else 0


if __name__ == "__main__":
    sys.exit(main())
