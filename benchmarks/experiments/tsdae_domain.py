"""The TSDAE paper's domain experiments: adapt a start model to a domain with TSDAE, MLM, SimCSE, CT
and BERT-flow under one step budget, and evaluate every result, the unadapted model and BM25 on the
domain task and on STS-B test (STSBenchmark-raw).

    python benchmarks/experiments/tsdae_domain.py run --work-dir runs/tsdae/domain \\
        --model ../shared/models/paraphrase-MiniLM-L3-v2 --steps 10000    # both domains, five methods, seeds 0,1,2
    python benchmarks/experiments/tsdae_domain.py run --work-dir runs/tsdae/domain-random \\
        --model random:../shared/models/paraphrase-MiniLM-L3-v2 --methods tsdae --steps 10000
    python benchmarks/experiments/tsdae_domain.py report --work-dir runs/tsdae/domain --table tsdae-domain.md

Domains (unlabelled text from `sentforge.evaluation.domain_corpora`, written once to W/corpora/):
- `twitterpara`: the distinct TURL train tweets, scored with TwitterPara (mean AP of PIT-2015 test and
  TURL test);
- `qatarliving`: Qatar Living questions outside the evaluation data, scored with QatarLivingCQA (MAP).

`--model random:SPEC` starts from SPEC's architecture and tokenizer with random weights (one random
initialisation per seed; the paper's "Scratch" row). Training runs `sentforge train METHOD` in a
subprocess (each method's paper defaults, `--no-split`: one tweet or question per example); evaluation
runs in this process. The runs follow benchmarks/benchlib/drivers.py: each has its own directory
W/runs/START/DOMAIN/NAME with `result.json` written last; a rerun skips finished runs, resumes an
interrupted training from its last checkpoint (`--resume`), and evaluates a trained model that has no
result yet; a failed run is listed at the end (exit status 1) and the others go on. The run names
carry the step budget and the shared overrides, so one work directory may hold several budgets.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import DATA
from benchlib.drivers import (RESULT_FILE, configure_logging, driver_parser, evaluate_model, format_mean_std,
                              keep_training_record, markdown_of, parse_ints, parse_names, read_results, run_pending,
                              run_sentforge, scores_of, shown_path, write_report)

logger = logging.getLogger("tsdae_domain")

METHODS = ("tsdae", "mlm", "simcse", "ct", "bertflow")
DOMAINS = ("twitterpara", "qatarliving")
DOMAIN_TASKS = {"twitterpara": "TwitterPara", "qatarliving": "QatarLivingCQA"}
STS_TASK = "STSBenchmark-raw"
RANDOM_PREFIX = "random:"
RUNS = "runs"  # W/runs/START/DOMAIN/NAME


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
        return cls(text[len(RANDOM_PREFIX):] if random else text, random)

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
    from sentforge.evaluation.domain_corpora import CORPORA
    from sentforge.support.io import atomic_file, save_json

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

    @property
    def directory(self) -> str:
        """The run's directory relative to the work directory."""
        return f"{RUNS}/{self.start.label if self.start else 'bm25'}/{self.domain}/{self.name}"

    def train_arguments(self, start_path: str, corpus: Path, output: Path) -> list[str]:
        return ["train", self.method, "--model", start_path, "--corpus", str(corpus), "--no-split",
                "--steps", str(self.steps), "--seed", str(self.seed), "--output", str(output), *self.train_options]

    def describe(self) -> dict[str, Any]:
        kind = "bm25" if self.start is None else ("unadapted" if self.method is None else self.method)
        return {"driver": self.driver, "start": self.start.label if self.start else "bm25",
                "start_spec": self.start.spec if self.start else None,
                "random_init": bool(self.start and self.start.random), "domain": self.domain, "kind": kind,
                "name": self.name, "seed": self.seed, "steps": self.steps, "train_options": self.train_options,
                **self.meta}


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


def train(run: Run, run_dir: Path, args: argparse.Namespace) -> tuple[Path, float | None]:
    """Train (or resume, or reuse) the run's model; return its directory and the training seconds."""
    output = run_dir / "model"
    if (output / "train.json").exists():
        return output, None
    corpus = corpus_file(args.work_dir, run.domain, args.data_dir)
    arguments = run.train_arguments(run.start.path(args.work_dir, run.seed), corpus, output)
    if args.device:
        arguments += ["--device", args.device]
    if args.checkpoint_every < run.steps:
        arguments += ["--checkpoint-every", str(args.checkpoint_every)]
    if (output / "training").is_dir():
        arguments.append("--resume")
    elif output.exists():
        arguments.append("--overwrite")
    started = time.perf_counter()
    run_sentforge(arguments, run_dir / "train.log")
    return output, time.perf_counter() - started


def execute(run: Run, args: argparse.Namespace) -> dict[str, Any]:
    from sentforge.support.io import save_json

    run_dir = args.work_dir / run.directory
    run_dir.mkdir(parents=True, exist_ok=True)
    trained, train_seconds = None, None
    if run.start is None:
        model = "bm25"
    elif run.method is None:
        model = run.start.path(args.work_dir, run.seed or 0)
    else:
        model_dir, train_seconds = train(run, run_dir, args)
        model = str(model_dir)
    started = time.perf_counter()
    report = evaluate_model(model, run.tasks, run_dir / "eval.json", args.data_dir, args.eval_batch_size,
                            args.device, strict=True)
    eval_seconds = time.perf_counter() - started
    if run.method is not None:
        trained = keep_training_record(Path(model), run_dir, args.keep_models)
    result = {"run": run.describe(), "model": model, "train": trained, "train_seconds": train_seconds,
              "eval_seconds": round(eval_seconds, 1), "scores": scores_of(report), "evaluation": report}
    save_json(run_dir / RESULT_FILE, result)
    return result


def run_all(runs: Sequence[Run], args: argparse.Namespace) -> int:
    """Run what has no result yet (with --dry-run, list it); return the exit code."""
    pending = [run for run in runs if not (args.work_dir / run.directory / RESULT_FILE).exists()]
    logger.info("%d runs planned, %d already done, %d to run", len(runs), len(runs) - len(pending), len(pending))
    if args.dry_run:
        for run in pending:
            what = "evaluate" if run.method is None else "sentforge " + " ".join(
                run.train_arguments("START", Path("CORPUS"), args.work_dir / run.directory / "model"))
            print(f"{args.work_dir / run.directory}: {what}")
        return 0

    def describe(result: dict[str, Any]) -> str:
        return ", ".join(f"{name} {score:.2f}" for name, score in result["scores"].items())

    return run_pending(args.work_dir, [run.directory for run in runs], lambda index: execute(runs[index], args),
                       describe)


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
    return [r for r in read_results(work_dir, f"{RUNS}/*/*/*") if r["run"]["driver"] == driver]


def cell(values: Sequence[float]) -> str:
    """mean ± sample standard deviation (number of seeds); one value alone has no spread."""
    return format_mean_std(values, count=True, empty="—")


def scores(results: Sequence[dict[str, Any]], task: str) -> list[float]:
    return [r["scores"][task] for r in results if task in r["scores"]]


def best(rows: dict[str, list[dict[str, Any]]], task: str, candidates: Sequence[str]) -> str | None:
    means = {kind: statistics.fmean(scores(rows[kind], task)) for kind in candidates
             if kind in rows and scores(rows[kind], task)}
    return max(means, key=means.get) if means else None


def report_written() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="minutes")


def domain_section(work_dir: Path) -> list[str]:
    results = load_results(work_dir, "tsdae_domain")
    if not results:
        raise SystemExit(f"no results of tsdae_domain.py under {work_dir / RUNS}")
    starts = list(dict.fromkeys(r["run"]["start"] for r in results if r["run"]["kind"] != "bm25"))
    domains = [d for d in DOMAINS if any(r["run"]["domain"] == d for r in results)]
    lines = [(f"Work directory `{work_dir}`; {len(results)} finished runs; report written {report_written()}. "
              "Cells: mean ± sample standard deviation over seeds (number of seeds). Domain scores: TwitterPara "
              "mean AP of PIT-2015 and TURL test (×100); QatarLivingCQA MAP (×100). STS-B: STSBenchmark-raw test "
              "Spearman (×100) of the model adapted on that domain. BM25 has no STS score."), ""]
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
            spec = shown_path(mine[0]["run"]["start_spec"])
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
    return lines + ["", ""]  # two blank lines before the next work directory


# ---------------------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------------------

def command_line(description: str, report_help: str) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The benchlib.drivers parser with the options both TSDAE drivers' `run` shares."""
    parser, run = driver_parser(description, report_help, plot=False, model_type=Start.parse, several_models=True,
                                model_help="start model spec; random:SPEC for SPEC's architecture with random weights")
    run.add_argument("--data-dir", type=Path, default=DATA, help="the data root (default ../shared/data)")
    run.add_argument("--steps", type=int, required=True, help="optimizer steps per training run")
    run.add_argument("--seeds", type=parse_ints, default=(0, 1, 2))
    run.add_argument("--batch-size", type=int, help="one batch size for every method (default: each method's)")
    run.add_argument("--max-seq-length", type=int, help="truncate training texts to this many tokens")
    run.add_argument("--checkpoint-every", type=int, default=1000,
                     help="checkpoint interval, for resuming an interrupted run (removed when it finishes)")
    run.add_argument("--dry-run", action="store_true", help="list the pending runs and stop")
    return parser, run


def check_choices(parser: argparse.ArgumentParser, *options: tuple[str, Sequence[str], Sequence[str]]) -> None:
    """Stop with a usage error naming the option when a list option holds a value outside its choices."""
    for name, chosen, allowed in options:
        if unknown := sorted(set(chosen) - set(allowed)):
            parser.error(f"{name}: unknown {', '.join(unknown)}; choose from {', '.join(allowed)}")


def check_starts(parser: argparse.ArgumentParser, starts: Sequence[Start]) -> None:
    labels = [start.label for start in starts]
    if len(set(labels)) != len(labels):
        parser.error(f"--model: two start models share a directory name ({', '.join(labels)})")


def main(argv: Sequence[str] | None = None) -> int:
    parser, run = command_line(__doc__, "write the Markdown table of the finished runs")
    run.add_argument("--domains", type=parse_names, default=DOMAINS, help=f"from {','.join(DOMAINS)}")
    run.add_argument("--methods", type=parse_names, default=METHODS, help=f"from {','.join(METHODS)}")
    run.add_argument("--pooling", help="one pooling for every method (cls, mean, max, keep; default: each method's)")
    run.add_argument("--no-baselines", action="store_true", help="skip BM25 and the unadapted models")
    args = parser.parse_args(argv)
    configure_logging()
    if args.command == "report":
        return write_report(args, markdown_of("TSDAE domain experiments", domain_section), marker=RUNS)
    check_choices(parser, ("--domains", args.domains, DOMAINS), ("--methods", args.methods, METHODS))
    check_starts(parser, args.model)
    runs = domain_runs(args.model, args.domains, args.methods, args.seeds, args.steps, args.batch_size,
                       args.pooling, args.max_seq_length, baselines=not args.no_baselines)
    return run_all(runs, args)


if __name__ == "__main__":
    sys.exit(main())
