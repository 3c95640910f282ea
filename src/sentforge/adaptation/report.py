"""The adapt report: report.json (everything), report.md (the tables) and dev-curve.png (dev score
against training steps; skipped with a logged message when matplotlib, the `plots` extra, is absent)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from sentforge.adaptation.racing import racing_lines
from sentforge.disk import human_size
from sentforge.io import atomic_file, save_json

logger = logging.getLogger(__name__)

REPORT_JSON, REPORT_MD, CURVE_PNG = "report.json", "report.md", "dev-curve.png"


def write_report(output: Path, report: dict[str, Any]) -> None:
    save_json(output / REPORT_JSON, report)
    with atomic_file(output / REPORT_MD, "w") as handle:
        handle.write(markdown(report))
    plot_curves(output / CURVE_PNG, report)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _gain(gain: dict[str, Any] | None) -> str:
    return "-" if gain is None else f"{gain['difference']:+.2f} [{gain['low']:+.2f}, {gain['high']:+.2f}]"


def _hygiene_lines(hygiene: dict[str, Any]) -> list[str]:
    counted = [(kind, hygiene[kind]) for kind in ("unlabelled", "positives", "negatives", "partial") if kind in hygiene]
    overlap = "; ".join(f"{c['near_duplicates']} of {c['read']} {kind}{'' if kind == 'unlabelled' else ' pairs'}"
                        for kind, c in counted)
    if hygiene["applied"]:
        return [f"Dev hygiene: dropped before training, as dev or test texts or near copies of one "
                f"({hygiene['heldout_texts']} held-out texts): {overlap}."]
    return [f"**Warning**: trained with the dev and test texts kept (--keep-dev-texts): {overlap} are dev or test "
            "texts or near copies, so the dev scores of the candidates trained on them are optimistic."]


def _step_costs(candidates: dict[str, dict[str, Any]]) -> list[str]:
    costs = [f"{name} {r['seconds_per_step']:.3g}" for name, r in candidates.items() if "seconds_per_step" in r]
    return ["Seconds per training step, timed in the first steps of each run, from which the time limits were "
            "planned (tsdae+mnrl: its start model's mnrl's, else the mean): " + ", ".join(costs) + "."] if costs else []


def _why(report: dict[str, Any]) -> str:
    """The selection's reason, unless no candidate beside the start models ran: then that is the reason."""
    others = {name: r for name, r in report["candidates"].items() if r["kind"] != "start"}
    if not others or any(r["status"] == "done" for r in others.values()):
        return report["selection"]["why"]
    skipped = sum(r["status"] == "skipped" for r in others.values())
    if not skipped:
        return "no candidate beside the start model could run (see Not run below): the start model is kept"
    return (f"no candidate finished: {skipped} of {len(others)} were skipped (the budget left too little, or what "
            "they build on did not run) and the others were not applicable or failed (see Not run below); with "
            "nothing to compare, the start model is kept")


def markdown(report: dict[str, Any]) -> str:
    metric, test_metric = report["metric"], report.get("test_metric")
    selected = report["candidates"][report["selected"]]
    selection = report["selection"]
    lines = ["# sentforge adapt", "",
             f"Selected: **{report['selected']}** (dev {metric} {selected['dev']:.2f}), saved in `model/`.", "",
             f"Rule `{selection['rule']}`: {_why(report)}."]
    if selected["kind"] == "meta":
        lines += ["", "The selected model is a sentforge MetaEncoder directory: load it with `sentforge.load` or "
                      "`sentforge.meta.MetaEncoder.load`; sentence-transformers cannot load it."]
    lines += ["", f"Dev: `{report['dev']}` ({metric}); test: " + (f"`{report['test']}` ({test_metric}), reported "
              "only, never used for a choice." if report.get("test") else "none."),
              f"Budget: {report['budget_minutes']:g} min; used {report['wall_s'] / 60:.1f} min of wall time.",
              *_step_costs(report["candidates"]), "", *racing_lines(report), "",
              *_hygiene_lines(report["hygiene"]), "",
              f"Dev gain: the candidate's dev {metric} minus {selection['base']}'s, with the 95 % paired bootstrap "
              "interval (resampling the dev queries or pairs).", "",
              f"| candidate | method | dev {metric} | dev gain [95 % interval] | best step | steps | "
              f"test{f' {test_metric}' if test_metric else ''} | wall s |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in report["candidates"].items():
        if r["status"] != "done":
            continue
        mark = " (selected)" if name == report["selected"] else ""
        steps = r.get("steps", "-")
        if r.get("stopped"):
            steps = f"{steps} ({r['stopped']})"
        lines.append(f"| {name}{mark} | {r['method']} | {r['dev']:.2f} | {_gain(r.get('dev_gain'))} | "
                     f"{r.get('best_step', '-')} | {steps} | {_number(r.get('test'))} | {r['wall_s']:.0f} |")
    skipped = {name: r for name, r in report["candidates"].items() if r["status"] != "done"}
    if skipped:
        lines += ["", "Not run:", ""] + [f"- {name}: {r['status']}: {r['reason']}" for name, r in skipped.items()]
    lines += ["", f"Output: {human_size(report['output_bytes'])} on disk (" + (
        "the candidates' training checkpoints kept" if report["keep_checkpoints"] else
        "each candidate keeps its model and metrics; the training checkpoints were removed") + ")."]
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
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.info("matplotlib is not installed (the `plots` extra): %s not drawn", path.name)
        return
    figure, (axes, gains) = plt.subplots(1, 2, figsize=(11, 4.5), width_ratios=(3, 2))
    shown = [(name, r) for name, r in report["candidates"].items() if r.get("status") == "done"]
    for index, (name, r) in enumerate(shown):
        color = f"C{index % 10}"
        if r["kind"] == "train" and r.get("evaluations"):
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
    figure.tight_layout()
    with atomic_file(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=120)
    plt.close(figure)
