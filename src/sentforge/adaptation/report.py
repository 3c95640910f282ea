"""The adapt report: report.json (everything), report.md (the tables), dev-curve.png (dev score against
training steps) and front.png (dev score against encode speed, the speed–quality front highlighted); the
figures are skipped with a logged message when matplotlib, the `plots` extra, is absent."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from sentforge.adaptation.hygiene import Hygiene, data_noun
from sentforge.adaptation.result import (CandidateResult, MetaResult, PipelineResult, StartResult, StaticResult,
                                         TrainedResult, finished_type)
from sentforge.adaptation.select import Selection
from sentforge.adaptation.state_records import Leftover
from sentforge.support.disk import human_size
from sentforge.harness.figure_labels import place_labels
from sentforge.harness.report_files import on_the_cluster, pyplot, save_figure, write_report_files

CURVE_PNG, FRONT_PNG = "dev-curve.png", "front.png"


@dataclass(frozen=True, eq=False)  # compared as a mapping: equal to report.json's dict
class AdaptReport(Mapping):
    """What `sentforge.adapt` returns and report.json holds: the selected candidate and why (`selection`), the
    speed–quality front, dev hygiene, the data and metrics, the settings, every candidate's result, the
    test regret, the cross-fitted dev scores, the output's size, the run's wall time and what the time left once
    every schedule had ended was spent on. It reads as
    report.json's mapping too (`report["selected"]`). `cluster` (--engine ray: its address, the resources of a
    run and the slots) is in report.json only when the candidates ran on one."""

    selected: str
    selection: Selection
    front: list[str]
    off_front_within_noise: dict[str, list[str]]
    selected_off_front: list[str]  # the candidates better on dev and faster than the selected one
    speed_bound_within_noise: dict[str, list[float]]
    speed_texts: int
    hygiene: Hygiene
    model: str
    metric: str
    test_metric: str | None
    dev: str
    test: str | None
    budget_minutes: float
    settings: dict[str, Any]
    candidates: dict[str, CandidateResult]
    keep_checkpoints: bool
    keep: str
    test_regret: dict[str, Any] | None
    dev_cross_fitted: dict[str, float]
    output_bytes_all: int
    output_bytes: int
    wall_s: float
    leftover: Leftover | None = None  # the time left once every schedule had ended (planning.py, step 7)
    cluster: dict[str, Any] | None = None
    class_items: dict[str, int] | None = None  # class-labelled data: the dev (and test) texts scored

    def to_json(self) -> dict[str, Any]:
        return dict(self._json)

    @cached_property
    def _json(self) -> dict[str, Any]:
        values = {name: getattr(self, name) for name in self.__dataclass_fields__
                  if name not in ("cluster", "class_items") or getattr(self, name) is not None}
        return {**values, "selection": self.selection.to_json(), "hygiene": self.hygiene.to_json(),
                "candidates": {name: r.to_json() for name, r in self.candidates.items()},
                "leftover": None if self.leftover is None else self.leftover.to_json()}

    def __getitem__(self, key: str) -> Any:
        return self._json[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._json)

    def __len__(self) -> int:
        return len(self._json)


LEFTOVER_SHOWN_S = 30.0  # less than this left at the end is the budget spent, not a decision worth a line


def write_report(output: Path, report: Mapping[str, Any]) -> None:
    """report.json, report.md and the figures of a report (an AdaptReport, or report.json's mapping)."""
    report = dict(report)
    write_report_files(output, report, markdown(report))
    plot_curves(output / CURVE_PNG, report)
    plot_front(output / FRONT_PNG, report)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _gain(gain: dict[str, Any] | None) -> str:
    return "-" if gain is None else f"{gain['difference']:+.2f} [{gain['low']:+.2f}, {gain['high']:+.2f}]"


def _classes_lines(report: dict[str, Any]) -> list[str]:
    """report.md's lines on class-labelled data: each candidate's accuracy with its 95 % Wilson interval and its
    macro-F1, on dev and test."""
    items = report.get("class_items")
    if not items:
        return []
    splits = [split for split in ("dev", "test") if split in items]
    lines = ["", "Class-labelled data: every candidate is scored by a logistic-regression head fitted on its vectors "
             "of the labelled texts, and the dev gain resamples the dev texts; model/ is the selected encoder with "
             "that head (`sentforge predict model texts.txt -o predictions.json`, "
             "`sentforge.SentenceClassifier.load`). Accuracy with its 95 % Wilson interval ("
             + ", ".join(f"{items[split]} {split} texts" for split in splits) + ") and macro-F1:", "",
             "| candidate | " + " | ".join(f"{split} accuracy [95 % interval] | {split} macro-F1" for split in splits)
             + " |", "|---|" + "---:|---:|" * len(splits)]
    for name, r in report["candidates"].items():
        if r["status"] != "done":
            continue
        cells = []
        for split in splits:
            accuracy = r.get(split)
            low, high = wilson(accuracy / 100, items[split]) if accuracy is not None else (None, None)
            cells += ["-" if accuracy is None else f"{accuracy:.2f} [{100 * low:.2f}, {100 * high:.2f}]",
                      _number((r.get("macro_f1") or {}).get(split))]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def wilson(share: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion `share` of `n` trials (95 % for the default z)."""
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def _hygiene_lines(hygiene: dict[str, Any]) -> list[str]:
    counted = [(kind, hygiene[kind]) for kind in ("unlabelled", "positives", "negatives", "partial", "classes")
               if kind in hygiene]
    overlap = "; ".join(f"{c['near_duplicates']} of {c['read']} {data_noun(kind)}" for kind, c in counted)
    if hygiene["applied"]:
        return [f"Dev hygiene: dropped before training, as dev or test texts or near copies of one "
                f"({hygiene['heldout_texts']} held-out texts): {overlap}.",
                *(f"\n**Warning**: {warning}." for warning in hygiene.get("warnings", []))]
    return [f"**Warning**: trained with the dev and test texts kept (--keep-dev-texts): {overlap} are dev or test "
            "texts or near copies, so the dev scores of the candidates trained on them are optimistic."]


def _step_costs(candidates: dict[str, dict[str, Any]]) -> list[str]:
    costs = [f"{name} {r['seconds_per_step']:.3g}" for name, r in candidates.items() if "seconds_per_step" in r]
    return ["Seconds per training step, timed in the first steps of each run, from which the time limits were "
            "planned (tsdae+mnrl: its start model's mnrl's, else the mean): " + ", ".join(costs) + "."] if costs else []


def _leftover_lines(report: dict[str, Any]) -> list[str]:
    """What the minutes left once every schedule had ended went to (planning.py, step 7); nothing when the
    budget ended the schedules."""
    leftover = report.get("leftover")
    if not leftover or leftover["seconds"] < LEFTOVER_SHOWN_S:
        return []
    minutes = f"{leftover['seconds'] / 60:.1f} min were left once every schedule had ended"
    if leftover["continued"] is None:
        return [f"{minutes}; the run ended early: {leftover['why']}."]
    name = next((n for n, r in report["candidates"].items() if r.get("continues") == leftover["continued"]), None)
    gain = report["selection"].get("continuations", {}).get(name)
    judged = (f" Its dev gain over {leftover['continued']}: {gain['difference']:+.2f} [{gain['low']:+.2f}, "
              f"{gain['high']:+.2f}] (95 % paired interval); it can be selected only when that lies above 0."
              if gain else "")
    return [f"{minutes}: {leftover['continued']}, whose best dev evaluation was its last, was trained on from its "
            f"kept model for one more schedule ({name}).{judged}"]


def _why(report: dict[str, Any]) -> str:
    """The selection's reason, unless no candidate beside the start models ran: then that is the reason."""
    others = {name: r for name, r in report["candidates"].items() if finished_type(r["kind"]) is not StartResult}
    if not others or any(r["status"] == "done" for r in others.values()):
        return report["selection"]["why"]
    skipped = sum(r["status"] == "skipped" for r in others.values())
    if not skipped:
        return "no candidate beside the start model could run (see Not run below): the start model is kept"
    return (f"no candidate finished: {skipped} of {len(others)} were skipped (the budget left too little, or what "
            "they build on did not run) and the others were not applicable or failed (see Not run below); with "
            "nothing to compare, the start model is kept")


def _speed(result: dict[str, Any]) -> str:
    speed = result.get("speed")
    if speed is None:
        return "- | - | -"
    parameters = "-" if speed["parameters"] is None else f"{speed['parameters'] / 1e6:.1f}"
    iqr = speed.get("texts_per_second_iqr")
    rate = f"{speed['texts_per_second']:.1f}" + ("" if iqr is None else f" [{iqr[0]:.1f}–{iqr[1]:.1f}]")
    return f"{rate} | {parameters} | {speed['dim']}"


def _speed_noise_lines(report: dict[str, Any]) -> list[str]:
    """What the speed measurement does not tell apart: candidates off the front only by speeds within the
    noise, and candidates on both sides of the speed bound."""
    lines = [f"{name} is off the front only by an encode speed the timed rounds do not tell apart from "
             f"{', '.join(others)}'s (their interquartile ranges overlap): read them as equally fast."
             for name, others in report.get("off_front_within_noise", {}).items()]
    unclear = report.get("speed_bound_within_noise") or {}
    if unclear:
        bound = report["selection"]["min_texts_per_second"]
        lines.append("The speed bound does not separate these candidates from the noise (their interquartile ranges "
                     f"include {bound:g} texts/s; eligible or not by their median): "
                     + ", ".join(f"{name} ({low:.1f}–{high:.1f})" for name, (low, high) in unclear.items()) + ".")
    return ["", *lines] if lines else []


def _off_front_lines(report: dict[str, Any]) -> list[str]:
    """Why the selected model can lie off the speed–quality front: the rule, not the front, decides."""
    others = report.get("selected_off_front") or []
    if not others:
        return []
    candidates, metric = report["candidates"], report["metric"]
    named = ", ".join(f"{name} (dev {candidates[name]['dev']:.2f}, {candidates[name]['speed']['texts_per_second']:.1f} "
                      "texts/s)" for name in others)
    selected = candidates[report["selected"]]
    return ["", f"{report['selected']} (dev {metric} {selected['dev']:.2f}, "
                f"{selected['speed']['texts_per_second']:.1f} texts/s) is off the speed–quality front of front.png: "
                f"{named} is no worse on dev score and encode speed and better on one. The rule above chose "
                "it, for the reason given there; the front does not choose. To require a speed, set "
                "--min-texts-per-second; to use another candidate, run with --keep all and take its directory under "
                "runs/."]


def _comparison_lines(selection: dict[str, Any]) -> list[str]:
    if not selection.get("comparisons"):
        return []
    leader = selection["leader"]
    lines = ["", f"Paired on the dev units, the leader {leader} against the other candidates that pass the gate:", "",
             f"| candidate | {leader} − candidate [95 % interval] | costs less (to run, or in training stages) |",
             "|---|---:|---|"]
    for c in selection["comparisons"]:
        cost = c["cheaper"] or ("no: the same architecture" if c["same_cost"] else "no")
        lines.append(f"| {c['candidate']} | {_gain(c)} | {cost} |")
    return lines


def racing_lines(report: dict[str, Any]) -> list[str]:
    """report.md's lines on racing: which candidates it stopped, when and why, and the time each trained
    candidate was given and used."""
    candidates = report["candidates"]
    stopped = []
    for name, result in candidates.items():
        races = [(f"{name} (after {rung['after_steps']} TSDAE steps)", rung.get("race"))
                 for rung in result.get("ladder") or []] or [(name, result.get("race"))]
        for label, race in races:
            if race:
                gain = race["gain"]
                stopped.append(f"- {label}: stopped at step {race['step']} (minute {race['candidate_minutes']:.1f} "
                               f"of its training, {race['adapt_minutes']:.1f} of the run), {race['reason']} "
                               f"{race['against']}: {gain['difference']:+.2f} [{gain['low']:+.2f}, "
                               f"{gain['high']:+.2f}] ({100 * gain['confidence']:g} % paired interval)")
    if not report["settings"].get("race", True):
        lines = ["Racing: off (--no-race)."]
    elif stopped:
        lines = ["Racing stopped these candidates at a dev evaluation (more than a point below the start model, or "
                 "below the leader by more than a point and no longer improving); their time went to the others:",
                 "", *stopped]
    else:
        lines = ["Racing stopped no candidate."]
    given = [f"{name} {result['share_s'] / 60:.1f} given, {result['wall_s'] / 60:.1f} used"
             for name, result in candidates.items() if "share_s" in result]
    if given:
        lines += ["", "Minutes of the trained candidates (share of the budget given, wall time used): "
                  + ", ".join(given) + "."]
    return lines


def _static_lines(report: dict[str, Any]) -> list[str]:
    """What a finished static model costs in quality for its speed: its speed as a multiple of the reference start
    model's, and its dev gain over it with the interval."""
    base = report["candidates"][report["selection"]["base"]]
    lines = []
    for name, r in report["candidates"].items():
        if r["status"] != "done" or finished_type(r["kind"]) is not StaticResult:
            continue
        fitted = f", fitted to its vectors of {r['fitted_texts']} unlabelled texts" if r["fitted_texts"] else ""
        line = f"{name}: a static model (one vector per token) distilled from {r['distilled_from']}{fitted}"
        if r.get("speed") and base.get("speed") and r.get("dev_gain"):
            line += (f"; it encodes {r['speed']['texts_per_second'] / base['speed']['texts_per_second']:.1f} times as "
                     f"many texts per second here as {report['selection']['base']}, at a dev gain of "
                     f"{_gain(r['dev_gain'])} (95 % paired interval) over it")
        lines.append(line + ".")
    return lines


def _pipeline_lines(report: dict[str, Any]) -> list[str]:
    """What each finished pipeline re-ranks, the weight dev chose and what it costs per query."""
    lines = []
    for name, r in report["candidates"].items():
        if r["status"] != "done" or finished_type(r["kind"]) is not PipelineResult:
            continue
        grid = ", ".join(f"{w['weight']:g}: {w['dev']:.2f}" for w in r["weights"])
        per_query = (f"the top {r['top_k']} of each query" if r["pairs_per_query"] > 1 else "each pair")
        line = (f"{name}: {r['first_stage']} with the cross-encoder {r['cross_encoder']} re-scoring {per_query}, its "
                f"score weighing {r['weight']:g} against the first stage's cosine (chosen on dev among {grid})")
        if r.get("pairs_per_second"):
            line += f"; the cross-encoder scored {r['pairs_per_second']:.1f} pairs per second on dev"
        if r.get("speed"):
            line += (f"; its texts/s is queries per second: a query through {r['first_stage']} and "
                     f"{r['pairs_per_query']} pair(s) through the cross-encoder")
        lines.append(line + ".")
    return lines


def _pipeline_use_lines(report: dict[str, Any], selected: dict[str, Any]) -> list[str]:
    """How to run the selected pipeline: model/ ranks, reranker/ re-scores."""
    if finished_type(selected["kind"]) is not PipelineResult:
        return []
    top_k, weight = selected["top_k"], selected["weight"]
    output = Path(report["model"]).parent
    return ["", f"The selected model is a pipeline: `model/` (the bi-encoder {selected['first_stage']}) ranks, and "
                f"`reranker/` (the cross-encoder) re-scores each query's top {top_k}, its score weighing {weight:g} "
                "against the cosine (reranker/pipeline.json). Evaluate with both:", "",
            "```bash", f"sentforge eval --model {output / 'model'} --reranker {output / 'reranker'} "
                       f"--rerank-top {top_k} --rerank-weight {weight:g} --dataset YOUR-DATA.jsonl "
                       "--output results.json", "```", "",
            f"In Python: `Reranked(sentforge.load(\"{output / 'model'}\"), sentforge.load_cross_encoder("
            f"\"{output / 'reranker'}\"), top_k={top_k}, weight={weight:g})` (sentforge.evaluation.reranker) scores "
            "ranked lists and labelled pairs as every task does."]


def worker_lines(report: dict[str, Any]) -> list[str]:
    """report.md's lines on the workers that probed and trained the candidates (--engine ray)."""
    ran = [f"{name} on {r['worker']['host']} ({r['worker']['node']}, {r['worker']['seconds']:.0f} s)"
           for name, r in report["candidates"].items() if r.get("worker")]
    if not ran:
        return []
    cluster = report.get("cluster")
    how = f", {on_the_cluster(cluster)}" if cluster else ""
    return ["", f"The trained candidates were probed and trained side by side on a Ray cluster{how}; each trained "
                f"on (host, node address, seconds of its last attempt there): {', '.join(ran)}."]


def unresolved(report: dict[str, Any]) -> list[str]:
    """The candidates past the gate that the dev set does not tell from the selected model (paired interval
    around 0)."""
    selection, chosen = report["selection"], report["selected"]
    rivals = [c["candidate"] for c in selection.get("comparisons") or [] if c["low"] <= 0 and c["candidate"] != chosen]
    if selection.get("leader") not in (None, chosen):
        rivals.insert(0, selection["leader"])
    return rivals


def _resolution_lines(report: dict[str, Any]) -> list[str]:
    rivals, chosen = unresolved(report), report["selected"]
    if not rivals:
        return []
    units = report["candidates"][chosen].get("dev_gain", {}).get("units")
    one = len(rivals) == 1
    return ["", f"**Dev does not resolve this choice**: on the {'' if units is None else f'{units} '}dev units, the "
                f"paired interval{'' if one else 's'} between {chosen} and {', '.join(rivals)} "
                f"include{'s' if one else ''} 0, so on new data "
                f"{'either' if one else 'any of them'} may score higher. The selected model's dev "
                "score is the best of the checkpoints and candidates compared on this dev set, so it overstates what "
                "to expect: judge it on a test set kept apart (--test). An interval narrows about as 1/√units: four "
                "times as many dev units halve its width."]


def test_regret(candidates: dict[str, dict[str, Any]], selected: str) -> dict[str, Any] | None:
    """What the choice cost on the test set: the best test score of the candidates adapt made (the start models
    aside) minus the selected model's; None without test scores. Reported only, never used for a choice."""
    tested = {name: r["test"] for name, r in candidates.items()
              if r.get("status") == "done" and r.get("test") is not None
              and finished_type(r["kind"]) is not StartResult}
    chosen = candidates[selected].get("test")
    if not tested or chosen is None:
        return None
    best = max(tested, key=tested.__getitem__)
    return {"best": best, "best_test": tested[best], "selected_test": chosen,
            "regret": round(max(tested[best] - chosen, 0.0), 4)}


def _regret_lines(report: dict[str, Any]) -> list[str]:
    regret = report.get("test_regret")
    if regret is None:
        return []
    if regret["regret"] == 0:
        return [f"On test the selected model scores {regret['selected_test']:.2f}, the highest of the candidates "
                "(selection regret 0)."]
    return [f"On test the selected model scores {regret['selected_test']:.2f}; the highest candidate, "
            f"{regret['best']}, scores {regret['best_test']:.2f}: selection regret {regret['regret']:.2f} points "
            "(test scores are reported only: no choice can use them)."]


def _cross_fitted_lines(report: dict[str, Any]) -> list[str]:
    fitted = report.get("dev_cross_fitted") or {}
    if not fitted:
        return []
    return ["Dev scores corrected for the choice among checkpoints (cross-fitted: each dev unit scored by the "
            "checkpoint chosen on the other half of the units; the kept checkpoint's in brackets): "
            + ", ".join(f"{name} {score:.2f} ({report['candidates'][name]['dev']:.2f})"
                        for name, score in fitted.items()) + "."]


def markdown(report: dict[str, Any]) -> str:
    metric, test_metric = report["metric"], report.get("test_metric")
    selected = report["candidates"][report["selected"]]
    selection = report["selection"]
    lines = ["# sentforge adapt", "",
             f"Selected: **{report['selected']}** (dev {metric} {selected['dev']:.2f}), saved in `model/`.", "",
             f"Rule `{selection['rule']}`: {_why(report)}.", *_off_front_lines(report), *_comparison_lines(selection),
             *_resolution_lines(report)]
    if finished_type(selected["kind"]) is MetaResult:
        lines += ["", "The selected model is a sentforge MetaEncoder directory: load it with `sentforge.load` or "
                      "`sentforge.meta.MetaEncoder.load`; sentence-transformers cannot load it."]
    lines += _pipeline_use_lines(report, selected)
    lines += ["", f"Dev: `{report['dev']}` ({metric}); test: " + (f"`{report['test']}` ({test_metric}), reported "
              "only, never used for a choice." if report.get("test") else "none."), *_regret_lines(report),
              *_cross_fitted_lines(report),
              f"Budget: {report['budget_minutes']:g} min; used {report['wall_s'] / 60:.1f} min of wall time.",
              *_leftover_lines(report), *_static_lines(report), *_pipeline_lines(report),
              *_step_costs(report["candidates"]), "",
              *racing_lines(report),
              *worker_lines(report), "",
              *_hygiene_lines(report["hygiene"]), "",
              f"Dev gain: the candidate's dev {metric} minus {selection['base']}'s, with the 95 % paired bootstrap "
              "interval (resampling the dev queries or pairs). Texts/s: encode speed on the same "
              f"{report['speed_texts']} of your dev and unlabelled texts on this machine, after a warm-up (a "
              "meta-embedding runs all its members): the median of passes timed in interleaved rounds, with the "
              "interquartile range; parameters in millions; dim: the vector dimension. On the "
              "speed–quality front (front.png), no other candidate is both faster and better on dev: "
              + ", ".join(report["front"]) + ". Faster means here: the interquartile ranges of the two timings "
              "lie apart.", *_speed_noise_lines(report), "",
              f"| candidate | method | dev {metric} | dev gain [95 % interval] | texts/s | params M | dim | best step "
              f"| steps | test{f' {test_metric}' if test_metric else ''} | wall s |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in report["candidates"].items():
        if r["status"] != "done":
            continue
        mark = (" (selected)" if name == report["selected"] else
                " (too slow)" if name in selection.get("too_slow", {}) else "")
        steps = r.get("steps", "-")
        if r.get("stopped"):
            steps = f"{steps} ({r['stopped']})"
        lines.append(f"| {name}{mark} | {r['method']} | {r['dev']:.2f} | {_gain(r.get('dev_gain'))} | {_speed(r)} | "
                     f"{r.get('best_step', '-')} | {steps} | {_number(r.get('test'))} | {r['wall_s']:.0f} |")
    lines += _classes_lines(report)
    skipped = {name: r for name, r in report["candidates"].items() if r["status"] != "done"}
    if skipped:
        lines += ["", "Not run:", ""] + [f"- {name}: {r['status']}: {r['reason']}" for name, r in skipped.items()]
    lines += ["", f"Output: {human_size(report['output_bytes'])} on disk (" + (
        f"--keep selected: only model/ and the report kept, of {human_size(report['output_bytes_all'])}; to keep "
        "every candidate's model under runs/ too, run the command with --keep all and a new --output"
        if report.get("keep") == "selected" else
        "--keep all: every candidate's model and metrics kept under runs/; the training checkpoints were removed "
        "(--keep-checkpoints keeps them)" if not report["keep_checkpoints"] else
        "--keep all --keep-checkpoints: every candidate's model, metrics and training checkpoints kept") + ")."]
    lines += ["", "## Dev score of every evaluated checkpoint", ""]
    for name, r in report["candidates"].items():
        if r.get("evaluations"):
            lines.append(f"- {name}: " + ", ".join(f"step {e['step']}: {e['score']:.2f}" for e in r["evaluations"]))
    lines += ["", "## Commands that reproduce each candidate", ""]
    for name, r in report["candidates"].items():
        if r.get("commands"):
            lines += [f"{name}:", "", "```bash", *r["commands"], "```", ""]
    return "\n".join(lines) + "\n"


def plot_curves(path: Path, report: dict[str, Any]) -> None:
    plt = pyplot(path)
    if plt is None:
        return
    figure, (axes, gains) = plt.subplots(1, 2, figsize=(11, 4.5), width_ratios=(3, 2))
    shown = [(name, r) for name, r in report["candidates"].items() if r.get("status") == "done"]
    for index, (name, r) in enumerate(shown):
        color = f"C{index % 10}"
        if finished_type(r["kind"]) is TrainedResult and r.get("evaluations"):
            axes.plot([e["step"] for e in r["evaluations"]], [e["score"] for e in r["evaluations"]], marker="o",
                      color=color, label=name)
        else:
            axes.axhline(r["dev"], linestyle="--", linewidth=1, color=color, label=f"{name} (no training steps)")
        gain = r.get("dev_gain")
        if gain is not None:
            gains.errorbar([gain["difference"]], [index], xerr=[[gain["difference"] - gain["low"]],
                                                                [gain["high"] - gain["difference"]]],
                           fmt="o", color=color, capsize=3)
    axes.set_xlabel("training step")
    axes.set_ylabel(f"dev {report['metric']}")
    axes.legend(fontsize=7)
    gains.axvline(0, color="grey", linewidth=1)
    gains.set_yticks(range(len(shown)), [name for name, _ in shown], fontsize=7)
    gains.invert_yaxis()
    gains.set_xlabel(f"dev gain over {report['selection']['base']} (95 % interval)")
    save_figure(plt, figure, path, dpi=120)


def plot_front(path: Path, report: dict[str, Any]) -> None:
    """Dev score against encode speed, one point per candidate with its intervals (dev: the 95 % interval of its
    gain over the reference start model, drawn at its score; speed: the interquartile range of its timed rounds);
    the front joined by a line, the selected candidate ringed, the names placed clear of each other (plots.py),
    the --min-texts-per-second bound dashed with the ineligible side shaded."""
    plt = pyplot(path)
    if plt is None:
        return
    shown = {name: r for name, r in report["candidates"].items() if r.get("status") == "done" and r.get("speed")}
    figure, axes = plt.subplots(figsize=(7, 4.5))
    front = report["front"]
    bars = []  # the intervals, kept clear of the names
    for name, r in shown.items():
        on_front, rate = name in front, r["speed"]["texts_per_second"]
        color = "C0" if on_front else "grey"
        low, high = r["speed"].get("texts_per_second_iqr") or (rate, rate)
        gain = r.get("dev_gain") or {}
        below, above = gain.get("difference", 0.0) - gain.get("low", 0.0), gain.get("high", 0.0) - gain.get(
            "difference", 0.0)
        axes.errorbar(rate, r["dev"], xerr=[[rate - low], [high - rate]], yerr=[[below], [above]], fmt="none",
                      ecolor=color, elinewidth=0.8, capsize=2, alpha=0.6, zorder=2)
        bars += [(rate, r["dev"] - below, rate, r["dev"] + above), (low, r["dev"], high, r["dev"])]
        axes.scatter(rate, r["dev"], s=40 if on_front else 25, zorder=3, color=color)
    axes.plot([shown[n]["speed"]["texts_per_second"] for n in front], [shown[n]["dev"] for n in front],
              color="C0", linewidth=1.2, drawstyle="steps-post", label="speed–quality front")
    chosen = shown.get(report["selected"])
    if chosen is not None:
        axes.scatter(chosen["speed"]["texts_per_second"], chosen["dev"], s=180, facecolors="none",
                     edgecolors="C3", linewidths=1.5, zorder=4,
                      label=f"selected: {report['selected']}" + (
                          " (off the front: report.md says why)" if report.get("selected_off_front") else ""))
    rounds = max((r["speed"].get("rounds", 1) for r in shown.values()), default=1)
    axes.set_xlabel(f"texts per second (median of {rounds} interleaved passes over {report['speed_texts']} of your "
                    "texts here; bars: interquartile range)" if rounds > 1 else
                    f"texts per second (encoding {report['speed_texts']} of your texts on this machine)", fontsize=8)
    axes.set_ylabel(f"dev {report['metric']} (bars: 95 % interval of the gain over {report['selection']['base']})",
                    fontsize=8)
    axes.margins(x=0.15, y=0.1)  # room for the names beside the points
    bound = report["selection"].get("min_texts_per_second")
    if bound is not None:
        left, right = axes.get_xlim()
        axes.axvspan(min(left, bound), bound, color="C3", alpha=0.08)  # the candidates not eligible
        axes.axvline(bound, color="C3", linestyle="--", linewidth=1, label=f"--min-texts-per-second {bound:g}")
        axes.set_xlim(min(left, bound), max(right, bound))
    axes.legend(fontsize=7, loc="best")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    # The names last, on the final layout: the fronts first, then the others, the better dev score first.
    names = sorted(shown, key=lambda n: (n not in front, -shown[n]["dev"]))
    place_labels(axes, [(shown[n]["speed"]["texts_per_second"], shown[n]["dev"]) for n in names], names,
                 ["black" if n in front else "dimgrey" for n in names], obstacles=bars)
    save_figure(plt, figure, path, dpi=120)
