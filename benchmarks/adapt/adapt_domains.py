"""Domain adaptation with `sentforge.adapt` on three real domains, from the files that
`benchmarks/data/prepare_domain_data.py` writes (DOMAIN_DATA below), and the tables of the results.

    python benchmarks/data/prepare_domain_data.py --data-dir ../shared/data --output domain-data
    python benchmarks/adapt/adapt_domains.py run --domain-data domain-data --work-dir runs/adapt      # every experiment
    python benchmarks/adapt/adapt_domains.py run --domain-data domain-data --work-dir runs/adapt \\
        --experiments qatarliving-l3
    python benchmarks/adapt/adapt_domains.py report --work-dir runs/adapt

Experiments (each one `sentforge.adapt` call into WORK/NAME, 60 minutes of budget by default):
- qatarliving-l6, qatarliving-l3: SemEval-2016 Task 3 subtask B question-question re-ranking from
  all-MiniLM-L6-v2 and from paraphrase-MiniLM-L3-v2; unlabelled = the 2015 and 2016 train part 1
  questions, labelled = TRAIN-BASE pairs (0/1 labels: the Irrelevant related questions are hard
  negatives), dev = VAL-BASE (MAP); no test file is used;
- wikiqa (from paraphrase-MiniLM-L3-v2), wikiqa-l6 (from all-MiniLM-L6-v2): labelled = the train
  (question, candidate) pairs (0/1 labels: the wrong candidates are hard negatives), unlabelled = the
  distinct texts of the correct pairs, dev = the dev split, test = the test split (reported);
- twitterpara: unlabelled = TURL train tweets only; dev = PIT-2015 dev; test = PIT + TURL test (AP);
- twitterpara-pause: the same with the TURL train pairs, 10% of their labels kept (PAUSE).
`compare-pause` then trains PAUSE with every TURL train label (`labelled-all.jsonl`) with the same settings
and planned schedule as the 10%-labels PAUSE candidate, stopped after as many steps as that candidate ran,
and prints both (the few-labels claim).
`twitterpara-tests` scores every TwitterPara candidate on the PIT and TURL test sets apart and prints their
mean, the TwitterPara task's main metric (adapt's own test column is the AP of the two together).
`compare-pretraining` trains again, to the other's step count, whichever of MNRL alone and TSDAE then MNRL
the time limit stopped earlier (same settings and schedule), so the two are compared at equal steps.
A rerun of `run` resumes every unfinished experiment where it stopped (adapt's own resume).
`test-intervals` scores every finished candidate of one or more adapt outputs on a test file, per query
or pair, and prints its test gain over the start model with a paired bootstrap interval (the seeds of one
domain: is the selected candidate's test gain resolved on the test set at all?).
`split-labelled` makes a dev file of a fraction of a labels file's sentence1 groups (and the labels file
without them); `hidden-labels` writes a dev file of the pairs whose labels a few-labels file hid; `other-dev`
applies each selection rule to finished runs as if they had been given another dev file (does a dev set
from another source choose what the test prefers?).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

L6, L3 = "all-MiniLM-L6-v2", "../shared/models/paraphrase-MiniLM-L3-v2"


@dataclass(frozen=True)
class Experiment:
    model: str
    unlabelled: str | None  # paths relative to the domain data folder; None: made from the labelled pairs
    dev: str
    labelled: str | None = None
    test: str | None = None
    eval_every: int = 50  # steps between dev evaluations; larger where the dev set is slow to encode


EXPERIMENTS = {
    "qatarliving-l6": Experiment(L6, "qatarliving/unlabelled.txt", "qatarliving/dev.jsonl",
                                 "qatarliving/labelled.jsonl"),
    "qatarliving-l3": Experiment(L3, "qatarliving/unlabelled.txt", "qatarliving/dev.jsonl",
                                 "qatarliving/labelled.jsonl"),
    "wikiqa": Experiment(L3, None, "wikiqa/dev.jsonl", "wikiqa/labelled.jsonl", "wikiqa/test.jsonl"),
    "wikiqa-l6": Experiment(L6, None, "wikiqa/dev.jsonl", "wikiqa/labelled.jsonl", "wikiqa/test.jsonl"),
    "twitterpara": Experiment(L3, "twitterpara/unlabelled.txt", "twitterpara/dev.jsonl", test="twitterpara/test.jsonl",
                              eval_every=200),
    "twitterpara-pause": Experiment(L3, "twitterpara/unlabelled.txt", "twitterpara/dev.jsonl",
                                    "twitterpara/labelled-10pct.jsonl", "twitterpara/test.jsonl", eval_every=200),
}


def unlabelled_from_pairs(pairs: Path, output: Path) -> Path:
    """WikiQA has no unlabelled corpus: the distinct questions and answers of its train pairs, written
    beside (not inside) the experiment's output directory."""
    path = output.with_name(f"{output.name}-unlabelled.txt")
    if not path.is_file():
        rows = [json.loads(line) for line in pairs.read_text(encoding="utf-8").splitlines() if line]
        # the texts of the positive pairs (label 1, or no label): the corpus of the documented WikiQA runs
        texts = dict.fromkeys(text for row in rows if row.get("label", 1) == 1
                              for text in (row["sentence1"], row["sentence2"]))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{t}\n" for t in texts), encoding="utf-8")
    return path


def run(args: argparse.Namespace) -> None:
    import sentforge

    for name in args.experiments:
        spec = EXPERIMENTS[name]
        data = args.domain_data
        corpus = spec.unlabelled
        if corpus == "qatarliving/unlabelled.txt" and args.without_dev_texts:
            corpus = "qatarliving/unlabelled-without-dev.txt"
        unlabelled = data / corpus if corpus else unlabelled_from_pairs(data / spec.labelled, args.work_dir / name)
        logging.getLogger("adapt_domains").info("%s: adapting %s", name, args.model or spec.model)
        sentforge.adapt(args.model or spec.model, unlabelled, data / spec.dev, args.work_dir / name,
                        labelled=None if spec.labelled is None else data / spec.labelled,
                        test=None if spec.test is None else data / spec.test, budget_minutes=args.budget_minutes,
                        eval_every=args.eval_every or spec.eval_every, max_epochs=args.max_epochs, seed=args.seed,
                        candidates=args.candidates, overrides=json.loads(args.overrides) if args.overrides else None,
                        select_rule=args.select, keep_dev_texts=args.keep_dev_texts)
    report(args)


def report(args: argparse.Namespace) -> None:
    for name in EXPERIMENTS:
        path = args.work_dir / name / "report.json"
        if not path.is_file():
            continue
        result = json.loads(path.read_text(encoding="utf-8"))
        metric, test_metric = result["metric"], result.get("test_metric")
        print(f"\n## {name} (dev {result['dev']}; budget {result['budget_minutes']:g} min, "
              f"wall {result['wall_s'] / 60:.1f} min)\n")
        hygiene = result["hygiene"]
        print("dev hygiene " + ("applied" if hygiene["applied"] else "NOT applied (--keep-dev-texts)") + ": " +
              "; ".join(f"{hygiene[k]['near_duplicates']} of {hygiene[k]['read']} {k}"
                        for k in ("unlabelled", "positives", "partial") if k in hygiene))
        print(f"selection ({result['selection']['rule']}): {result['selection']['why']}\n")
        print(f"| candidate | dev {metric} | dev gain [95 % interval] | best step / steps | "
              f"test{f' {test_metric}' if test_metric else ''} | wall s |")
        print("|---|---:|---:|---:|---:|---:|")
        for candidate, r in result["candidates"].items():
            if r["status"] != "done":
                print(f"| {candidate} | {r['status']}: {r['reason']} | | | | |")
                continue
            steps = f"{r['best_step']} / {r['steps']}" if "steps" in r else "-"
            test = "-" if r.get("test") is None else f"{r['test']:.2f}"
            mark = " **(selected)**" if candidate == result["selected"] else ""
            gain = r["dev_gain"]
            interval = f"{gain['difference']:+.2f} [{gain['low']:+.2f}, {gain['high']:+.2f}]"
            print(f"| {candidate}{mark} | {r['dev']:.2f} | {interval} | {steps} | {test} | {r['wall_s']:.0f} |")


def compare_pause(args: argparse.Namespace) -> None:
    """PAUSE with all TURL train labels for as many steps as the 10%-labels candidate of twitterpara-pause."""
    from sentforge.adaptation.inputs import READING
    from sentforge.evaluation import load_dataset
    from sentforge.harness.dev_scores import main_score
    from sentforge.recipes import get_recipe
    from sentforge.recipes.api import run_recipe

    report_path = args.work_dir / "twitterpara-pause" / "report.json"
    if not report_path.is_file():
        sys.exit(f"error: {report_path} does not exist; run the twitterpara-pause experiment first")
    result = json.loads(report_path.read_text(encoding="utf-8"))
    few = next(r for r in result["candidates"].values() if r.get("method") == "pause")
    if few["status"] != "done":
        sys.exit(f"error: the PAUSE candidate of {report_path} did not run ({few['status']})")
    spec, data = EXPERIMENTS["twitterpara-pause"], args.domain_data
    settings = result["settings"]
    dev = load_dataset(data / spec.dev, name=f"dev:{Path(spec.dev).name}")
    output = args.work_dir / "twitterpara-pause-all"
    labelled = data / "twitterpara/labelled-all.jsonl"
    # adapt's rule for the batch (the paper's, no larger than the data), then the run's own overrides.
    batch = min(get_recipe("pause").training["batch_size"], few["examples"])
    # The same planned schedule, stopped where the time limit stopped the candidate.
    values = {"batch_size": batch, **settings["overrides"].get("pause", {}), "steps": few["planned_steps"]}

    def stop_with_candidate(state) -> None:
        state.should_stop = state.should_stop or state.step >= few["steps"]

    if not (output / "train.json").is_file():
        run_recipe("pause", few["model"], labelled, output, reading=READING,
                   evaluator=dev, eval_every=settings["eval_every"], select=result["metric"],
                   checkpoint_every=settings["eval_every"], keep_last=1, resume=(output / "training").is_dir(),
                   seed=settings["seed"], pooling="keep", callbacks=[stop_with_candidate], **values)
    summary = json.loads((output / "train.json").read_text(encoding="utf-8"))
    from sentforge.adaptation.result import load_candidate
    from sentforge.encoder import Encoder

    tests = {part: load_dataset(data / f"twitterpara/test-{part}.jsonl", name=f"test-{part}")
             for part in ("pit", "turl")}
    rows = {"10%": (few["dev"], few["best_step"], few["test"], load_candidate(few)),
            "all": (summary["best"]["value"], summary["best"]["step"], None, Encoder.load(output))}
    print(f"\n## PAUSE: 10% of the TURL train labels vs all of them ({few['steps']} steps each)\n")
    print(f"| labels | dev {result['metric']} | best step | test {result['test_metric']} | PIT test ap "
          "| TURL test ap | mean |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for labels, (dev_score, step, test, model) in rows.items():
        test = main_score(load_dataset(data / spec.test, name="test"), model)[0] if test is None else test
        pit, turl = (tests[part].evaluate(model)["ap"] for part in ("pit", "turl"))
        print(f"| {labels} | {dev_score:.2f} | {step} | {test:.2f} | {pit:.2f} | {turl:.2f} | {(pit + turl) / 2:.2f} |")


def compare_pretraining(args: argparse.Namespace) -> None:
    """MNRL alone vs TSDAE then MNRL at equal steps, for each chosen experiment with both candidates."""
    for name in args.experiments:
        result = json.loads((args.work_dir / name / "report.json").read_text(encoding="utf-8"))
        done = {r.get("method"): (key, r) for key, r in result["candidates"].items() if r["status"] == "done"}
        if not {"mnrl", "tsdae+mnrl"} <= done.keys():
            continue
        (short_name, short), (long_name, long) = sorted((done["mnrl"], done["tsdae+mnrl"]),
                                                        key=lambda item: item[1]["steps"])
        output = args.work_dir / f"{name}-{short_name}-{long['steps']}-steps"
        score = train_to_steps(result, done, short_name, long["steps"], output)
        print(f"\n## {name}: MNRL alone vs TSDAE then MNRL, both at {long['steps']} steps (dev {result['metric']})\n")
        print(f"| candidate | dev at {short['steps']} steps (adapt) | dev at {long['steps']} steps |")
        print("|---|---:|---:|")
        print(f"| {short_name} | {short['dev']:.2f} | {score:.2f} |")
        print(f"| {long_name} | - | {long['dev']:.2f} |")


def train_to_steps(result: dict, done: dict, name: str, target: int, output: Path) -> float:
    """Train candidate `name` of an adapt report again with adapt's settings and schedule, stopped after
    `target` steps; its dev score (kept in OUTPUT/dev-score.json, so a rerun only prints)."""
    from sentforge.adaptation.candidates import METHODS, Candidate
    from sentforge.adaptation.inputs import READING, read_inputs
    from sentforge.adaptation.trained import (
        TrainSettings,
        recipe_settings,
        training_data,
    )
    from sentforge.harness.dev_scores import main_score
    from sentforge.recipes.api import run_recipe

    score_file = output / "dev-score.json"
    if score_file.is_file():
        return json.loads(score_file.read_text(encoding="utf-8"))["dev"]
    settings, record = result["settings"], result["candidates"][name]
    inputs = read_inputs(settings["unlabelled"]["path"], settings["dev"]["path"], settings["labelled"]["path"])
    method = METHODS[record["method"]]
    candidate = Candidate(name, method, record["model"], name.rsplit(".", 1)[0])
    start = record["model"] if method.after is None else done[method.after][1]["model_path"]
    data, examples = training_data(candidate, inputs)
    train = TrainSettings(settings["eval_every"], settings["max_epochs"], settings["seed"], None, None,
                          settings["overrides"])

    def stop_at_target(state) -> None:
        state.should_stop = state.should_stop or state.step >= target

    encoder = run_recipe(method.recipe, start, data, output, reading=READING, seed=settings["seed"],
                         callbacks=[stop_at_target], **recipe_settings(candidate, examples, train))[0]
    score, _ = main_score(inputs.dev, encoder)
    score_file.write_text(json.dumps({"dev": score}), encoding="utf-8")
    return score


def twitterpara_tests(args: argparse.Namespace) -> None:
    """PIT and TURL test AP of every finished TwitterPara candidate, and their mean."""
    from sentforge.adaptation.result import load_candidate
    from sentforge.evaluation import load_dataset

    parts = {part: load_dataset(args.domain_data / f"twitterpara/test-{part}.jsonl", name=f"test-{part}")
             for part in ("pit", "turl")}
    for name in ("twitterpara", "twitterpara-pause"):
        path = args.work_dir / name / "report.json"
        if not path.is_file():
            continue
        scores_path = args.work_dir / name / "test-parts.json"  # a rerun prints without scoring again
        scores = json.loads(scores_path.read_text(encoding="utf-8")) if scores_path.is_file() else {}
        result = json.loads(path.read_text(encoding="utf-8"))
        for candidate, r in result["candidates"].items():
            if r["status"] == "done" and candidate not in scores:
                model = load_candidate(r)
                scores[candidate] = {part: task.evaluate(model)["ap"] for part, task in parts.items()}
                scores_path.write_text(json.dumps(scores, indent=1), encoding="utf-8")
        print(f"\n## {name}: test AP of PIT-2015 and TURL apart, and their mean (dev AP for reference)\n")
        print(f"| candidate | dev {result['metric']} | PIT test ap | TURL test ap | mean |")
        print("|---|---:|---:|---:|---:|")
        for candidate, s in scores.items():
            mark = " **(selected)**" if candidate == result["selected"] else ""
            print(f"| {candidate}{mark} | {result['candidates'][candidate]['dev']:.2f} | {s['pit']:.2f} | "
                  f"{s['turl']:.2f} | {(s['pit'] + s['turl']) / 2:.2f} |")


def test_intervals(args: argparse.Namespace) -> None:
    """Every finished candidate's test score and its test gain over the start model, paired on the test units
    (with --pooled-only, only the models the pooled lines need); for several runs (seeds) on one test file, the
    mean gain over them of the model each rule selects and of mnrl, paired on the test units too."""
    from sentforge.adaptation.result import load_candidate
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.paired import paired_bootstrap

    test = load_dataset(args.test, name="test")
    rules = args.rules or ["the run's own rule"]
    pooled: dict[str, list] = {}  # {"start" | rule | "mnrl": each run's test scores of that model}
    for run_dir in args.runs:
        result = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
        done = {name: found_from(run_dir, result, r) for name, r in result["candidates"].items()
                if r["status"] == "done"}
        start = next(name for name, r in done.items() if r["kind"] == "start")
        results = candidate_results(result)
        chosen = ({rule: rule_choice(run_dir, result, results, rule) for rule in rules} if args.rules
                  else {rules[0]: result["selected"]})
        mnrl = [name for name, r in done.items() if r["method"] == "mnrl"]
        needed = {start, *chosen.values(), *mnrl} if args.pooled_only else set(done)
        items = {name: test.item_scores(load_candidate(done[name])) for name in done if name in needed}
        for key, name in [("start", start), *chosen.items(), *(("mnrl", name) for name in mnrl)]:
            pooled.setdefault(key, []).append(items[name])
        print(f"\n## {run_dir.name}: test {result['test_metric']} on {len(items[start])} units, gain over {start}\n")
        print(f"| candidate | dev {result['metric']} | test | test gain [95 %] |")
        print("|---|---:|---:|---|")
        for name, scores in items.items():
            gain = paired_bootstrap(items[start], scores, seed=args.seed)
            mark = "".join(f" **(selected: {rule})**" for rule, chose in chosen.items() if chose == name)
            print(f"| {name}{mark} | {done[name]['dev']:.2f} | {scores.score():.2f} | "
                  f"{gain.difference:+.2f} [{gain.low:+.2f}, {gain.high:+.2f}] |")
    if len(args.runs) > 1:  # the same test units in every run: one resample draws them for all the runs at once
        print(f"\n## Pooled over the {len(args.runs)} runs: the mean test gain over the start [95 %]\n")
        for key in [*rules, "mnrl"]:
            if len(pooled.get(key, [])) == len(args.runs):
                gain = paired_bootstrap(pooled["start"], pooled[key], seed=args.seed)
                label = f"selected ({key})" if key != "mnrl" else "mnrl"
                print(f"- {label}: {gain.difference:+.2f} [{gain.low:+.2f}, {gain.high:+.2f}]")


def found_from(run_dir: Path, saved: dict, candidate: dict) -> dict:
    """The candidate's report.json entry with its model path found from here: the run wrote it relative to the
    folder it was started in, which is the run's folder less the output path it was given."""
    output = Path(saved["model"]).parent  # OUTPUT/model, as the run was given OUTPUT
    path = candidate.get("model_path")
    if path is None or Path(path).is_absolute() or output.is_absolute() or Path(path).exists():
        return candidate
    found = run_dir.resolve().parents[len(output.parts) - 1] / path
    return {**candidate, "model_path": str(found)} if found.exists() else candidate  # else a short name


def candidate_results(saved: dict) -> dict:
    """The candidates of a finished run's report.json (`saved`), as adapt records them."""
    from sentforge.adaptation.result import CandidateResult

    return {name: CandidateResult.from_json(r) for name, r in saved["candidates"].items()}


def rule_choice(run_dir: Path, saved: dict, results: dict, rule: str) -> str:
    """What `rule` chooses among a finished run's candidates (report.json `saved`, read into `results`), from its
    saved dev scores."""
    from sentforge.adaptation.intervals import selection_items
    from sentforge.adaptation.select import select

    done = {name: r for name, r in results.items() if r.done}
    starts = [name for name, r in done.items() if r.kind == "start"]
    seed = saved["settings"]["seed"]
    items = selection_items(run_dir, done, rule, seed)
    return select(results, starts, rule, items, seed, saved["selection"]["min_texts_per_second"]).chosen


def regret_rows(runs: list[Path], rules: list[str], choose) -> list[dict]:
    """For each finished run and rule, what `choose(run_dir, saved, results, rule)` selects, that model's test
    score, the start's, mnrl's, the best candidate's and the selection regret (the best candidate's test score
    minus the selected one's). Test scores come from report.json; nothing here is chosen with them."""
    rows = []
    for run_dir in runs:
        saved = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
        results = candidate_results(saved)
        done = {name: r for name, r in results.items() if r.done}
        made = {name: r.test for name, r in done.items() if r.kind != "start" and r.test is not None}
        best = max(made, key=made.__getitem__)
        mnrl = next((r.test for r in done.values() if r.method == "mnrl"), None)
        start = next(r.test for r in done.values() if r.kind == "start")
        domain = Path(saved["settings"]["dev"]["path"]).parent.name
        for rule in rules:
            chosen = choose(run_dir, saved, results, rule)
            test = done[chosen].test
            rows.append({"run": run_dir.name, "domain": domain, "rule": rule, "chosen": chosen, "test": test,
                         "start": start, "best": best, "best_test": made[best], "mnrl": mnrl,
                         "regret": max(made[best] - test, 0.0)})
    return rows


def regret_table(runs: list[Path], rules: list[str], choose, leave_one_domain_out: bool = False) -> None:
    """The rows of `regret_rows` as a table, then each rule's mean regret, how often it selected a model below
    the start on test and how often at least mnrl's test score; with `leave_one_domain_out`, also the rule
    chosen on the other domains' runs (the lowest mean regret there) judged on each domain's."""
    rows = regret_rows(runs, rules, choose)
    print("| run | rule | selected | its test | minus the start's | best candidate (test) | regret | mnrl's test | "
          "selected >= mnrl |")
    print("|---|---|---|---:|---:|---|---:|---:|---|")
    for row in rows:
        mnrl = row["mnrl"]
        versus = "–" if mnrl is None else "yes" if row["test"] >= mnrl else "no"
        print(f"| {row['run']} | {row['rule']} | {row['chosen']} | {row['test']:.2f} | "
              f"{row['test'] - row['start']:+.2f} | {row['best']} ({row['best_test']:.2f}) | {row['regret']:.2f} | "
              f"{'–' if mnrl is None else f'{mnrl:.2f}'} | {versus} |")
    for rule in rules:
        print(f"\n{rule}: {summary([row for row in rows if row['rule'] == rule])}")
    if leave_one_domain_out:
        held_out_table(rows, rules)


def held_out_table(rows: list[dict], rules: list[str]) -> None:
    """For each domain, the rule of least mean regret on the other domains' rows, judged on that domain's."""
    print("\n| held-out domain | rule chosen on the other domains (their mean regret) | its runs here | "
          "mean regret here |")
    print("|---|---|---:|---:|")
    held_out_rows = []
    for domain in dict.fromkeys(row["domain"] for row in rows):
        others = [row for row in rows if row["domain"] != domain]
        if not others:
            continue
        fitted = {rule: mean([row["regret"] for row in others if row["rule"] == rule]) for rule in rules}
        rule = min(rules, key=fitted.__getitem__)  # the first in --rules order on a tie
        here = [row for row in rows if row["domain"] == domain and row["rule"] == rule]
        held_out_rows += here
        print(f"| {domain} | {rule} ({fitted[rule]:.2f}) | {len(here)} | {mean([row['regret'] for row in here]):.2f} |")
    if held_out_rows:
        print(f"\nleave-one-domain-out: {summary(held_out_rows)}")


def summary(rows: list[dict]) -> str:
    below = sum(row["test"] < row["start"] for row in rows)
    at_least_mnrl = sum(row["mnrl"] is not None and row["test"] >= row["mnrl"] for row in rows)
    return (f"mean regret {mean([row['regret'] for row in rows]):.2f} over {len(rows)} run(s); selected below the "
            f"start on test in {below}, at least mnrl's test score in {at_least_mnrl}")


def selection_rules(args: argparse.Namespace) -> None:
    """Each selection rule applied to finished runs (their saved per-unit dev scores)."""
    regret_table(args.runs, args.rules, rule_choice, args.leave_one_domain_out)


def pair_rows(path: Path, option: str) -> list[dict]:
    """The rows of a pairs .jsonl file (sentence1, sentence2, an optional 0/1 or null label), in file order;
    a missing file, a malformed line or a row without its texts or with another label names the file and line."""
    from sentforge.data.pairs import file_rows
    from sentforge.support.errors import InputFileError

    if not path.is_file():
        raise InputFileError(f"{option} {path}: no such file")
    rows = []
    for where, row in file_rows(path):  # the library's reader: decoding and malformed lines name file:line
        if not all(isinstance(row.get(key), str) for key in ("sentence1", "sentence2")):
            raise InputFileError(f"{where}: needs text fields sentence1 and sentence2")
        if row.get("label") not in (None, 0, 1):
            raise InputFileError(f"{where}: label {row['label']!r}: give 0, 1 or null")
        rows.append(row)
    if not rows:
        raise InputFileError(f"{option} {path}: holds no pairs")
    return rows


def refuse_outputs(outputs: dict[str, Path], inputs: dict[str, Path]) -> None:
    """Before any work: an output that is, holds or lies in an input, names an existing file (a .jsonl output
    carries no mark of what wrote it, so none is replaced) or is another output, is refused."""
    from sentforge.support.errors import ConfigError, OutputExistsError
    from sentforge.support.output_guard import refuse_inputs_around

    for option, output in outputs.items():
        refuse_inputs_around(output, inputs.items(), option)
        if output.exists():
            raise OutputExistsError(f"{option} {output} exists; remove it or choose another path")
    if len({output.resolve() for output in outputs.values()}) < len(outputs):
        raise ConfigError(f"{' and '.join(outputs)} name the same file; give one file each")


def write_jsonl(path: Path, rows: list[dict]) -> None:
    from sentforge.support.io import atomic_file

    with atomic_file(path, "w", overwrite=False) as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)


def split_labelled(args: argparse.Namespace) -> None:
    """A dev file from a labels file's own pairs: a random --fraction of its sentence1 groups that hold a label
    become dev (their labelled pairs), and the other groups, all their rows, the labels file to train on (no
    text of a dev group stays in it), so that dev comes from the same source as the labels."""
    import random

    from sentforge.support.errors import ConfigError

    if not 0 < args.fraction < 1:
        raise ConfigError(f"--fraction {args.fraction}: give a number between 0 and 1")
    refuse_outputs({"--dev-output": args.dev_output, "--labelled-output": args.labelled_output},
                   {"--given": args.given})
    rows = pair_rows(args.given, "--given")
    groups = sorted({r["sentence1"] for r in rows if r.get("label") is not None})
    held = set(random.Random(args.seed).sample(groups, round(args.fraction * len(groups))))
    dev = [r for r in rows if r["sentence1"] in held and r.get("label") is not None]
    kept = [r for r in rows if r["sentence1"] not in held]
    write_jsonl(args.dev_output, dev)
    write_jsonl(args.labelled_output, kept)
    print(f"{args.dev_output}: {len(dev)} labelled pairs of {len(held)} groups ({sum(r['label'] for r in dev)} "
          f"labelled 1); {args.labelled_output}: {len(kept)} of {len(rows)} rows, "
          f"{sum(r.get('label') is not None for r in kept)} with a label")


def hidden_labels(args: argparse.Namespace) -> None:
    """A dev file of pairs whose labels the few-labels file hid: the rows of --given with no label whose label
    --all has (the same rows, in the same order), a random --pairs of them; with --unlabelled-groups, only of
    the sentence1 groups with no label in --given. No candidate trained on these labels; every candidate that
    reads the unlabelled tweets or --given's texts has seen their texts."""
    import random

    from sentforge.support.errors import ConfigError

    refuse_outputs({"--output": args.output}, {"--given": args.given, "--all": args.all})
    given, labelled = pair_rows(args.given, "--given"), pair_rows(args.all, "--all")
    if len(given) != len(labelled) or any((g["sentence1"], g["sentence2"]) != (a["sentence1"], a["sentence2"])
                                          for g, a in zip(given, labelled)):
        raise ConfigError(f"{args.given} and {args.all} do not hold the same pairs in the same order")
    hidden = [a for g, a in zip(given, labelled) if g.get("label") is None and a.get("label") is not None]
    if args.unlabelled_groups:  # no pair of theirs trained a supervised candidate
        with_label = {g["sentence1"] for g in given if g.get("label") is not None}
        hidden = [a for a in hidden if a["sentence1"] not in with_label]
    chosen = random.Random(args.seed).sample(hidden, min(args.pairs, len(hidden)))
    write_jsonl(args.output, [{key: r[key] for key in ("sentence1", "sentence2", "label")} for r in chosen])
    print(f"{args.output}: {len(chosen)} of {len(hidden)} hidden-label pairs, {sum(r['label'] for r in chosen)} "
          "labelled 1")


def other_dev(args: argparse.Namespace) -> None:
    """Each rule on finished runs as if they had been given --dev instead of their own dev file: every finished
    candidate scored on it per unit, then the rule applied to those scores (adapt's own select)."""
    from sentforge.adaptation.result import load_candidate
    from sentforge.adaptation.select import select
    from sentforge.evaluation import load_dataset
    from sentforge.support.errors import ConfigError

    if "cross-fitted" in args.rules:  # a run kept its checkpoints' scores on its own dev file only
        raise ConfigError("--rules: cross-fitted needs every checkpoint scored on the dev file; "
                          "choose from labels-first, simplest, significant, best")
    dev = load_dataset(args.dev, name="other-dev")
    scored: dict[Path, tuple[dict, dict]] = {}  # run folder: (rescored results, per-unit scores on --dev)

    def choose(run_dir: Path, saved: dict, results: dict, rule: str) -> str:
        if run_dir not in scored:
            items = {name: dev.item_scores(load_candidate(found_from(run_dir, saved, saved["candidates"][name])))
                     for name, r in results.items() if r.done}
            scored[run_dir] = ({name: r.update(dev=items[name].score()) if r.done else r
                                for name, r in results.items()}, items)
        rescored, items = scored[run_dir]
        starts = [name for name, r in rescored.items() if r.done and r.kind == "start"]
        selection = select(rescored, starts, rule, items, saved["settings"]["seed"],
                           saved["selection"]["min_texts_per_second"])
        reasons.append(f"- {run_dir.name}, {rule}: {selection.why}")
        return selection.chosen

    reasons: list[str] = []
    regret_table(args.runs, args.rules, choose)
    print("\n" + "\n".join(reasons))
    print(f"\n| run | candidate | {args.dev.name} | test |\n|---|---|---:|---:|")
    for run_dir, (rescored, _) in scored.items():
        for name, r in rescored.items():
            if r.done:
                print(f"| {run_dir.name} | {name} | {r.dev:.2f} | {'–' if r.test is None else f'{r.test:.2f}'} |")

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run (or resume) the experiments, then print the tables")
    run_parser.add_argument("--domain-data", type=Path, required=True, help="the folder prepare_domain_data.py wrote")
    run_parser.add_argument("--experiments", type=lambda s: s.split(","), default=list(EXPERIMENTS),
                            help=f"comma-separated, of {', '.join(EXPERIMENTS)} (default: all)")
    run_parser.add_argument("--model", help="start model of every chosen experiment (default: each one's own)")
    run_parser.add_argument("--budget-minutes", type=float, default=60.0)
    run_parser.add_argument("--eval-every", type=int, help="default: 50 steps (TwitterPara: 200)")
    run_parser.add_argument("--max-epochs", type=int, default=10)
    run_parser.add_argument("--candidates", type=lambda s: s.split(","), help="default: all that the data allows")
    run_parser.add_argument("--overrides", help='recipe settings per method as JSON, e.g. {"tsdae": {"steps": 20}}')
    run_parser.add_argument("--seed", type=int, default=0)
    run_parser.add_argument("--select", default="labels-first", help="adapt's selection rule (adapt --help)")
    run_parser.add_argument("--keep-dev-texts", action="store_true",
                            help="train on dev/test texts too (adapt's opt-out of dev hygiene)")
    run_parser.add_argument("--without-dev-texts", action="store_true",
                            help="Qatar Living: train on unlabelled-without-dev.txt (no near-duplicates of dev texts); "
                                 "use a new --work-dir")
    compare_parser = commands.add_parser("compare-pause", help="PAUSE with all labels vs the 10%% candidate")
    compare_parser.add_argument("--domain-data", type=Path, required=True)
    tests_parser = commands.add_parser("twitterpara-tests", help="PIT and TURL test AP of every TwitterPara candidate")
    tests_parser.add_argument("--domain-data", type=Path, required=True)
    pretraining_parser = commands.add_parser("compare-pretraining",
                                             help="MNRL alone vs TSDAE then MNRL at equal steps")
    pretraining_parser.add_argument("--experiments", type=lambda s: s.split(","), default=list(EXPERIMENTS))
    report_parser = commands.add_parser("report", help="print the tables of finished experiments")
    for sub in (run_parser, compare_parser, tests_parser, pretraining_parser, report_parser):
        sub.add_argument("--work-dir", type=Path, required=True)
    intervals_parser = commands.add_parser("test-intervals", help="test gains over the start with paired intervals")
    intervals_parser.add_argument("runs", type=Path, nargs="+", help="adapt output folders (report.json)")
    intervals_parser.add_argument("--test", type=Path, required=True, help="the test file the runs were given")
    intervals_parser.add_argument("--seed", type=int, default=0, help="of the bootstrap")
    intervals_parser.add_argument("--rules", type=lambda s: s.split(","),
                                  help="the models these selection rules choose (default: each run's own choice)")
    intervals_parser.add_argument("--pooled-only", action="store_true",
                                  help="score only the start model, the selected ones and mnrl")
    rules_parser = commands.add_parser("selection-rules", help="each selection rule on finished runs: regret on test")
    rules_parser.add_argument("runs", type=Path, nargs="+", help="adapt output folders (report.json, dev-items/)")
    rules_parser.add_argument("--rules", type=lambda s: s.split(","),
                              default=["labels-first", "simplest", "significant"])
    rules_parser.add_argument("--leave-one-domain-out", action="store_true",
                              help="also judge, for each domain, the rule of least mean regret on the other domains")
    hidden_parser = commands.add_parser("hidden-labels", help="a dev file of the pairs whose labels a file hid")
    hidden_parser.add_argument("--given", type=Path, required=True, help="the few-labels file the runs were given")
    hidden_parser.add_argument("--all", type=Path, required=True, help="the same pairs with every label")
    hidden_parser.add_argument("--pairs", type=int, default=4000, help="how many to draw")
    hidden_parser.add_argument("--unlabelled-groups", action="store_true",
                               help="only pairs whose sentence1 has no label in --given")
    hidden_parser.add_argument("--seed", type=int, default=0)
    hidden_parser.add_argument("--output", type=Path, required=True)
    split_parser = commands.add_parser("split-labelled", help="a dev file from a fraction of a labels file's groups")
    split_parser.add_argument("--given", type=Path, required=True, help="the labels file")
    split_parser.add_argument("--fraction", type=float, default=0.2, help="of its labelled sentence1 groups")
    split_parser.add_argument("--seed", type=int, default=0)
    split_parser.add_argument("--dev-output", type=Path, required=True)
    split_parser.add_argument("--labelled-output", type=Path, required=True)
    other_parser = commands.add_parser("other-dev", help="each selection rule on finished runs, given another dev file")
    other_parser.add_argument("runs", type=Path, nargs="+", help="adapt output folders (report.json)")
    other_parser.add_argument("--dev", type=Path, required=True, help="the dev file to score every candidate on")
    other_parser.add_argument("--rules", type=lambda s: s.split(","),
                              default=["labels-first", "simplest", "significant"])
    args = parser.parse_args()
    unknown = [name for name in getattr(args, "experiments", []) if name not in EXPERIMENTS]
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; choose from {', '.join(EXPERIMENTS)}")
    unfinished = [str(run_dir) for run_dir in getattr(args, "runs", []) if not (run_dir / "report.json").is_file()]
    if unfinished:
        parser.error(f"no report.json in {', '.join(unfinished)}: give the output folders of finished adapt runs")
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s", level=logging.WARNING)
    logging.getLogger("sentforge").setLevel(logging.INFO)
    logging.getLogger("adapt_domains").setLevel(logging.INFO)
    from sentforge.support.errors import SentforgeError

    try:
        {"run": run, "report": report, "compare-pause": compare_pause,
         "compare-pretraining": compare_pretraining, "twitterpara-tests": twitterpara_tests,
         "test-intervals": test_intervals, "selection-rules": selection_rules,
         "hidden-labels": hidden_labels, "split-labelled": split_labelled, "other-dev": other_dev}[args.command](args)
    except SentforgeError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
