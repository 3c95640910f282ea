"""Sentence-T5: raw encoders against NLI-only and QA -> NLI contrastive training,
on STS, SentEval transfer and alignment/uniformity, for a T5 checkpoint and for a BERT-like encoder.

    python benchmarks/experiments/sentence_t5.py run --model runs/pretrain/t5-small-2k \\
        --work-dir runs/sentence-t5/t5-small-2k
    python benchmarks/experiments/sentence_t5.py run --model ../shared/models/paraphrase-MiniLM-L3-v2 \\
        --work-dir runs/sentence-t5/minilm-l3
    python benchmarks/experiments/sentence_t5.py report --work-dir runs/sentence-t5/t5-small-2k \\
        --work-dir runs/sentence-t5/minilm-l3 --table sentence-t5.md --plot sentence-t5-geometry.png

`run` evaluates, for every encoder variant (--variants; T5 default: enc-mean, enc-first,
encdec-first; otherwise `own`, the model's own pooling; `mean` or `cls` replace it) and training
setting (--settings):
  raw     the variant's backbone and pooling as they are: no projection, no training;
  nli     `sentforge train st5 --stage nli` (SNLI dev+test and SICK train triples, contradiction as
          hard negative) from the start model;
  qa-nli  `sentforge train st5 --stage qa --stage nli` (Qatar Living Good answers, WikiQA train+dev
          positives, QQP duplicates; then the same NLI stage) from the start model; its QA stage is
          trained afresh, not shared with any other run.
Training goes through the command line in a subprocess (the paper's recipe: projection and L2 norm,
in-batch softmax at temperature 0.01, Adafactor 1e-3 for T5, AdamW 2e-5 otherwise); the budget is
one epoch per stage unless --stage-steps or --stage-epochs says otherwise (every stage of every
run; --qa-steps gives the QA stage its own). Each trained run is repeated for every --seeds value (raw
runs are deterministic: once).

Every encoder is evaluated with sentforge.evaluation.evaluate on the seven STS tasks, the SentEval
transfer tasks (--transfer-tasks: a subset, or '' for none) and AlignmentUniformity. STS is reported as Sentence-T5
does: SentEval's "all" setting for STS12-16 (one Spearman correlation over the concatenated subsets,
`spearman_all`) and Spearman for STS-B and SICK-R.

Each (variant, setting, seed) has its own sub-directory of --work-dir; a run whose result.json exists
is skipped, so an interrupted experiment resumes with the same command (an unfinished training
resumes its finished stages). The settings that must agree between runs are stored in config.json
on the first run and a later `run` with others is refused; variants, settings and seeds may grow.
Trained weights are deleted after the evaluation unless --keep-models. `report` writes Markdown
tables (mean ± sample std over seeds) and a PNG alignment-uniformity scatter (the paper's Figure 4),
one point per encoder, for one or more work directories.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
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
from benchlib.drivers import (FIGURE_DPI, RESULT_FILE, TASK_LABELS, check_config, configure_logging, driver_parser,
                              evaluate_model, family_mean, format_mean_std, keep_training_record, markdown_of,
                              mean_std, parse_ints, parse_names, read_experiment, run_pending, run_sentforge,
                              scores_of, shown_path, tasks_of, write_report)

logger = logging.getLogger("sentence_t5")

QA_DATA = ("cqa-qatarliving", "wikiqa", "glue/qqp-partial")  # relative to --data-dir
NLI_DATA = ("senteval/downstream/SNLI", "senteval/downstream/SICK/SICK_train.txt")
T5_VARIANTS = ("enc-mean", "enc-first", "encdec-first")
OWN = "own"  # a BERT-like or sentence-transformers model's own pooling
VARIANTS = (*T5_VARIANTS, OWN, "mean", "cls")
SETTINGS = {"raw": (), "nli": ("nli",), "qa-nli": ("qa", "nli")}  # setting -> training stages in order
SETTING_NAMES = {"raw": "raw", "nli": "NLI", "qa-nli": "QA → NLI"}
STS_TASKS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness")
TRANSFER_TASKS = ("transfer",)
GEOMETRY = "AlignmentUniformity"


@dataclass(frozen=True)
class Run:
    variant: str
    setting: str
    seed: int | None = None  # None: a raw encoder, which no seed changes

    @property
    def name(self) -> str:
        return f"{self.variant}-{self.setting}" + ("" if self.seed is None else f"-s{self.seed}")


def plan(variants: Sequence[str], settings: Sequence[str], seeds: Sequence[int]) -> list[Run]:
    """The raw encoders once, then every trained setting for every variant, seed-major and setting by
    setting, so that an interrupted experiment already holds whole comparisons for the first seed."""
    runs = [Run(variant, "raw") for variant in variants if "raw" in settings]
    trained = [setting for setting in SETTINGS if setting != "raw" and setting in settings]
    return runs + [Run(variant, setting, seed) for seed in seeds for setting in trained for variant in variants]


def default_variants(model: str) -> tuple[str, ...]:
    """The three Sentence-T5 variants for a T5-family checkpoint; otherwise the model's own pooling."""
    from sentforge.modules.backbone import T5_FAMILY

    config = Path(model) / "config.json"
    model_type = json.loads(config.read_text()).get("model_type") if config.is_file() else None
    return T5_VARIANTS if model_type in T5_FAMILY else (OWN,)


def pooling_option(variant: str) -> str | None:
    """The --pooling of `sentforge train st5` (None: keep the model's own)."""
    return None if variant == OWN else variant


def sts_scores(report: dict) -> dict[str, float]:
    """Per STS task, the Sentence-T5 figure: the "all" Spearman over the subsets where a task has several
    (STS12-16), else Spearman (STS-B, SICK-R)."""
    return {name: float(metrics["spearman_all"] if "spearman_all" in metrics else metrics["spearman"])
            for name, metrics in ((name, entry["metrics"]) for name, entry in report["tasks"].items()
                                  if entry["family"] == "sts")}


def raw_encoder(model: str, variant: str, max_seq_length: int | None, device: str | None):
    """The backbone and pooling of the variant's Sentence-T5 encoder, without the (untrained) projection."""
    from sentforge.encoder import Encoder
    from sentforge.recipes.sentence_t5 import sentence_t5_encoder

    encoder = sentence_t5_encoder(model, pooling_option(variant), max_seq_length=max_seq_length)
    raw = Encoder(list(encoder)[:2], name=f"{model} ({variant}, raw)")
    return raw.to(device) if device else raw


def training_arguments(run: Run, args: argparse.Namespace, model_dir: Path) -> list[str]:
    arguments = ["train", "st5", "--model", args.model, "--output", str(model_dir),
                 "--batch-size", str(args.batch_size), "--seed", str(run.seed)]
    if pooling_option(run.variant):
        arguments += ["--pooling", pooling_option(run.variant)]
    stages = SETTINGS[run.setting]
    arguments += [part for stage in stages for part in ("--stage", stage)]
    for stage, paths in (("qa", args.qa_data), ("nli", args.nli_data)):
        if stage in stages:
            arguments += [part for path in paths for part in (f"--{stage}-data", path)]
    stage_steps = args.stage_steps
    if args.qa_steps is not None and "qa" in stages:  # per stage, in the run's order
        stage_steps = ",".join(str(args.qa_steps if stage == "qa" else args.stage_steps) for stage in stages)
    optional = {"--stage-steps": stage_steps, "--stage-epochs": args.stage_epochs,
                "--projection-dim": args.projection_dim, "--lr": args.lr, "--max-seq-length": args.max_seq_length,
                "--checkpoint-every": args.checkpoint_every, "--device": args.device}
    arguments += [part for option, value in optional.items() if value is not None for part in (option, str(value))]
    # A training interrupted earlier keeps its finished stages (and its checkpoints, with --checkpoint-every).
    arguments.append("--resume" if (model_dir / "training").is_dir() else "--overwrite")
    return arguments


def execute(run: Run, args: argparse.Namespace) -> dict:
    """Train (unless raw), evaluate and write the run's result.json; returns the result."""
    from sentforge.support.io import save_json
    from sentforge.recipes.sentence_t5 import variant_of

    run_dir = args.work_dir / run.name
    run_dir.mkdir(parents=True, exist_ok=True)
    tasks = [*args.sts_tasks, *args.transfer_tasks, GEOMETRY]
    result: dict = {"run": run.name, "variant": run.variant, "setting": run.setting, "seed": run.seed,
                    "model": args.model, "tasks": tasks}
    tick = time.perf_counter()
    if run.setting == "raw":
        encoder = raw_encoder(args.model, run.variant, args.max_seq_length, args.device)
        result.update({"pooling": variant_of(encoder), "dim": encoder.dim})
        report = evaluate_model(encoder, tasks, run_dir / "eval.json", args.data_dir, args.eval_batch_size,
                                args.device)
    else:
        model_dir = run_dir / "model"
        if not (model_dir / "train.json").exists():  # the CLI writes train.json last: a finished training
            logger.info("%s: training stages %s", run.name, " -> ".join(SETTINGS[run.setting]))
            run_sentforge(training_arguments(run, args, model_dir), run_dir / "train.log")
        result["train_seconds"] = round(time.perf_counter() - tick, 1)
        tick = time.perf_counter()
        report = evaluate_model(str(model_dir), tasks, run_dir / "eval.json", args.data_dir, args.eval_batch_size,
                                args.device)
        summary = keep_training_record(model_dir, run_dir, args.keep_models)
        result.update({"pooling": summary["pooling"], "dim": summary["dim"],
                       "stages": [{key: stage[key] for key in ("stage", "examples", "steps", "final_loss")}
                                  for stage in summary["stages"]]})
    result["eval_seconds"] = round(time.perf_counter() - tick, 1)
    sts = sts_scores(report)
    geometry = report["tasks"].get(GEOMETRY, {}).get("metrics", {})
    result.update({"scores": scores_of(report),
                   "families": {name: entry["family"] for name, entry in report["tasks"].items()},
                   "sts": sts, "sts_avg": statistics.fmean(sts.values()) if sts else None,
                   "transfer_avg": family_mean(report, "transfer"),
                   "alignment": geometry.get("alignment"), "uniformity": geometry.get("uniformity"),
                   "skipped": report["skipped"]})
    save_json(run_dir / RESULT_FILE, result)
    return result


def describe(result: dict) -> str:
    parts = [f"{label} {result[key]:.{digits}f}" for label, key, digits in (
        ("STS average", "sts_avg", 2), ("transfer average", "transfer_avg", 2), ("alignment", "alignment", 3),
        ("uniformity", "uniformity", 3)) if result.get(key) is not None]
    return ", ".join(parts) or "no scores"


def resolved(paths: Sequence[str], data_dir: Path) -> list[str]:
    return [str(Path(p) if Path(p).is_absolute() else (data_dir / p).resolve()) for p in paths]


def command_run(args: argparse.Namespace) -> int:
    if Path(args.model).exists():  # a directory: stored absolute, so that config.json compares reliably
        args.model = str(Path(args.model).resolve())
    args.qa_data, args.nli_data = resolved(args.qa_data, args.data_dir), resolved(args.nli_data, args.data_dir)
    settings = {"model": args.model, "qa_data": args.qa_data, "nli_data": args.nli_data,
                "stage_steps": args.stage_steps, "stage_epochs": args.stage_epochs, "batch_size": args.batch_size,
                **({"qa_steps": args.qa_steps} if args.qa_steps is not None else {}),
                "projection_dim": args.projection_dim, "lr": args.lr, "max_seq_length": args.max_seq_length,
                "sts_tasks": list(args.sts_tasks), "transfer_tasks": list(args.transfer_tasks)}
    check_config(args.work_dir, settings)
    variants = args.variants or default_variants(args.model)
    runs = plan(variants, args.settings, args.seeds)
    logger.info("%s: %d runs (%s; %s)", args.model, len(runs), ", ".join(variants), ", ".join(args.settings))
    return run_pending(args.work_dir, [run.name for run in runs], lambda index: execute(runs[index], args), describe)


# --- report --------------------------------------------------------------------------------------


def grouped(results: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """Results by (variant, setting): variants in VARIANTS order, each raw, NLI, QA -> NLI, seeds ascending."""
    order = {name: i for i, name in enumerate(VARIANTS)}
    settings = list(SETTINGS)
    groups: dict[tuple[str, str], list[dict]] = {}
    for result in sorted(results, key=lambda r: (order.get(r["variant"], len(order)), r["variant"],
                                                 settings.index(r["setting"]), r["seed"] or 0)):
        groups.setdefault((result["variant"], result["setting"]), []).append(result)
    return groups


def encoder_label(variant: str, rows: list[dict]) -> str:
    return f"{OWN} ({rows[0]['pooling']})" if variant == OWN else variant


def stage_budget_text(config: dict) -> str:
    if config.get("qa_steps") is not None:
        return f"{config['qa_steps']} steps in the QA stage, {config['stage_steps']} in the NLI stage"
    if config["stage_steps"] is not None:
        return f"{config['stage_steps']} steps per stage"
    epochs = config["stage_epochs"] or 1
    return f"{epochs} epoch{'s' if epochs != 1 else ''} per stage"


def tasks_count(tasks: list[str]) -> str:
    return f"{len(tasks)} task{'s' if len(tasks) != 1 else ''}"


def pivot_table(groups: dict, key: str, title: str) -> list[str]:
    """One row per encoder, one column per training setting: the mean (± std) of `key`."""
    settings = [s for s in SETTINGS if any(setting == s for _, setting in groups)]
    lines = [f"**{title}**", "", "| encoder | " + " | ".join(SETTING_NAMES[s] for s in settings) + " |",
             "|---|" + "---:|" * len(settings)]
    for variant in dict.fromkeys(variant for variant, _ in groups):
        rows = [row for s in settings for row in groups.get((variant, s), [])]
        cells = [format_mean_std([r[key] for r in groups.get((variant, s), []) if r.get(key) is not None])
                 for s in settings]
        lines.append(f"| {encoder_label(variant, rows)} | " + " | ".join(cells) + " |")
    return lines


def score_table(groups: dict, tasks: list[str], values_of: str, average_key: str, title: str) -> list[str]:
    """One row per (encoder, setting) with scores: mean ± std per task (from result[values_of]) and average."""
    lines = [f"**{title}**", "", "| encoder | training | seeds | "
             + " | ".join(TASK_LABELS.get(task, task) for task in tasks) + " | average |",
             "|---|---|---:|" + "---:|" * (len(tasks) + 1)]
    for (variant, setting), results in groups.items():
        rows = [r for r in results if r.get(average_key) is not None]
        if not rows:
            continue
        cells = [format_mean_std([r[values_of][t] for r in rows if t in r[values_of]]) for t in tasks]
        lines.append(f"| {encoder_label(variant, rows)} | {SETTING_NAMES[setting]} | {len(rows)} | "
                     + " | ".join(cells) + f" | {format_mean_std([r[average_key] for r in rows])} |")
    return lines


def geometry_table(groups: dict) -> list[str]:
    lines = ["**Alignment and uniformity on STS-B test (lower is better for both)**", "",
             "| encoder | training | seeds | alignment | uniformity |", "|---|---|---:|---:|---:|"]
    for (variant, setting), results in groups.items():
        rows = [r for r in results if r.get("alignment") is not None]
        if rows:
            lines.append(f"| {encoder_label(variant, rows)} | {SETTING_NAMES[setting]} | {len(rows)} | "
                         f"{format_mean_std([r['alignment'] for r in rows], 3)} | "
                         f"{format_mean_std([r['uniformity'] for r in rows], 3)} |")
    return lines


def last_logged(metrics_file: Path) -> dict | None:
    """The last logged training window of a stage (its loss, in-batch accuracy and candidate count)."""
    if not metrics_file.exists():
        return None
    windows = [entry for entry in map(json.loads, metrics_file.read_text().splitlines()) if "loss" in entry]
    return windows[-1] if windows else None


def training_table(groups: dict, work_dir: Path) -> list[str]:
    """Per trained encoder and stage: the loss and in-batch accuracy of the last logging window, next to
    ln(candidates) -- the loss of an encoder that scores every candidate alike (a collapsed one)."""
    lines = ["**Training: last logged window of each stage (loss; ln N = loss when all N candidates score "
             "alike; in-batch accuracy)**", "", "| encoder | training | seeds | stage | loss | ln N | accuracy |",
             "|---|---|---:|---|---:|---:|---:|"]
    for (variant, setting), results in groups.items():
        for index, stage in enumerate(SETTINGS[setting]):
            # the stage names recorded from train.json, as keep_training_record named the copied logs
            windows = [last_logged(work_dir / r["run"] / f"metrics-{r['stages'][index]['stage']}.jsonl")
                       for r in results if len(r.get("stages", ())) > index]
            windows = [w for w in windows if w is not None]
            if not windows:
                continue
            candidates = statistics.fmean(w["candidates"] for w in windows)
            lines.append(f"| {encoder_label(variant, results)} | {SETTING_NAMES[setting]} | {len(windows)} | "
                         f"{stage.upper()} | {format_mean_std([w['loss'] for w in windows])} | "
                         f"{math.log(candidates):.2f} | "
                         f"{format_mean_std([100 * w['accuracy'] for w in windows], 1)} % |")
    return lines if len(lines) > 4 else []


def section(work_dir: Path) -> list[str]:
    config, results = read_experiment(work_dir)
    projection = config["projection_dim"] or "the hidden size"
    lines = [f"## Start model `{shown_path(config['model'])}`", "",
             (f"Training: {stage_budget_text(config)}, batch size {config['batch_size']}, projection to "
              f"{projection}, learning rate {config['lr'] or 'of the recipe'}; QA data "
              + ", ".join(f"`{Path(p).name}`" for p in config["qa_data"]) + "; NLI data "
              + ", ".join(f"`{Path(p).name}`" for p in config["nli_data"])
              + f". {len(results)} finished runs in `{work_dir}`."), ""]
    if not results:
        return lines
    groups = grouped(results)
    sts_tasks = list(dict.fromkeys(task for r in results for task in r["sts"]))
    transfer_tasks = tasks_of(results, "transfer")
    lines += pivot_table(groups, "sts_avg", f"STS average ({tasks_count(sts_tasks)})") + [""]
    if transfer_tasks:
        lines += pivot_table(groups, "transfer_avg", f"Transfer average ({tasks_count(transfer_tasks)})") + [""]
    lines += score_table(groups, sts_tasks, "sts", "sts_avg", "STS tasks (Spearman; STS12-16: all)") + [""]
    if transfer_tasks:
        lines += score_table(groups, transfer_tasks, "scores", "transfer_avg",
                             "SentEval transfer tasks (accuracy)") + [""]
    lines += geometry_table(groups) + [""]
    training = training_table(groups, work_dir)
    return lines + (training + [""] if training else [])


markdown = markdown_of("Sentence-T5: raw encoders, NLI training and QA → NLI training", section, intro=(
    "STS: Spearman × 100 of cosine similarity, SentEval's \"all\" setting for STS12-16 (one correlation "
    "over the concatenated subsets) as in Sentence-T5; transfer: SentEval accuracy; alignment and "
    "uniformity as in Wang & Isola (2020). Mean ± sample standard deviation over seeds."))


MARKERS = {"raw": "x", "nli": "o", "qa-nli": "s"}


def plot(work_dirs: Sequence[Path], path: Path) -> None:
    """Uniformity (x) against alignment (y), one labelled point per encoder (mean over seeds), a colour per
    start model and a marker per training setting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from sentforge.harness.report_files import save_figure

    fig, ax = plt.subplots(figsize=(7, 5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    legend = []
    experiments = [read_experiment(work_dir) for work_dir in work_dirs]
    models = [Path(config["model"]).name for config, _ in experiments]
    for number, (work_dir, (_, results), model) in enumerate(zip(work_dirs, experiments, models)):
        colour = colours[number % len(colours)]
        label = f"{model} ({work_dir.name})" if models.count(model) > 1 else model  # same start, other budget
        legend.append(Line2D([], [], color=colour, marker="o", ls="", label=label))
        for (variant, setting), group in grouped(results).items():
            rows = [r for r in group if r.get("alignment") is not None]
            if not rows:
                continue
            x, y = mean_std([r["uniformity"] for r in rows])[0], mean_std([r["alignment"] for r in rows])[0]
            ax.scatter(x, y, color=colour, marker=MARKERS[setting], s=40)
            ax.annotate(encoder_label(variant, rows), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    legend += [Line2D([], [], color="grey", marker=marker, ls="", label=SETTING_NAMES[setting])
               for setting, marker in MARKERS.items()]
    ax.legend(handles=legend, fontsize=8)
    ax.set_xlabel("uniformity (lower is better)")
    ax.set_ylabel("alignment (lower is better)")
    ax.set_title("Sentence-T5 encoders on STS-B test", fontsize=10)
    ax.grid(alpha=0.3)
    save_figure(plt, fig, path, FIGURE_DPI)  # laid out, written atomically, closed


def main(argv: Sequence[str] | None = None) -> int:
    parser, run = driver_parser(__doc__, "Markdown tables and a PNG alignment-uniformity plot", plot=True,
                                model_help="start model: a T5 checkpoint, or a BERT-like / sentence-transformers "
                                           "directory")
    run.add_argument("--variants", type=parse_names, default=None,
                     help=f"encoders, comma-separated, of {', '.join(VARIANTS)} (default: {','.join(T5_VARIANTS)} "
                          f"for T5, {OWN} otherwise)")
    run.add_argument("--settings", type=parse_names, default=tuple(SETTINGS),
                     help=f"training settings, comma-separated, of {', '.join(SETTINGS)}")
    budget = run.add_mutually_exclusive_group()
    budget.add_argument("--stage-steps", type=int, default=None, help="optimizer steps of every stage "
                                                                      "(default: one epoch per stage)")
    budget.add_argument("--stage-epochs", type=int, default=None, help="epochs of every stage")
    run.add_argument("--qa-steps", type=int, default=None,
                     help="optimizer steps of the QA stage instead (with --stage-steps for the NLI stage)")
    run.add_argument("--batch-size", type=int, default=64, help="examples per step (paper: 2048)")
    run.add_argument("--projection-dim", type=int, default=None, help="default: the hidden size")
    run.add_argument("--lr", type=float, default=None, help="default: the recipe's (T5 1e-3, BERT-like 2e-5)")
    run.add_argument("--max-seq-length", type=int, default=None)
    run.add_argument("--seeds", type=parse_ints, default=(0,), help="seeds of the trained runs, comma-separated")
    run.add_argument("--qa-data", nargs="+", default=list(QA_DATA), help="stage qa data (relative: to --data-dir)")
    run.add_argument("--nli-data", nargs="+", default=list(NLI_DATA), help="stage nli data (relative: to --data-dir)")
    run.add_argument("--sts-tasks", type=parse_names, default=STS_TASKS)
    run.add_argument("--transfer-tasks", type=parse_names, default=TRANSFER_TASKS,
                     help="SentEval transfer tasks or 'transfer' for all (default); '' for none")
    run.add_argument("--data-dir", type=Path, default=DATA)
    run.add_argument("--checkpoint-every", type=int, default=None,
                     help="training checkpoints every N steps, so that an interrupted stage resumes mid-way")
    args = parser.parse_args(argv)
    configure_logging()
    if args.command == "run":
        if unknown := [v for v in args.variants or () if v not in VARIANTS]:
            parser.error(f"--variants: unknown {unknown}; choose from {', '.join(VARIANTS)}")
        if unknown := [s for s in args.settings if s not in SETTINGS]:
            parser.error(f"--settings: unknown {unknown}; choose from {', '.join(SETTINGS)}")
        if args.qa_steps is not None and args.stage_steps is None:
            parser.error("--qa-steps needs --stage-steps (the NLI stage's steps)")
        for option in ("stage_steps", "stage_epochs", "qa_steps", "batch_size", "projection_dim", "max_seq_length"):
            if getattr(args, option) is not None and getattr(args, option) < 1:
                parser.error(f"--{option.replace('_', '-')} must be >= 1")
        if not args.seeds:
            parser.error("--seeds: give at least one seed")
        return command_run(args)
    return write_report(args, markdown, plot)


if __name__ == "__main__":
    sys.exit(main())
