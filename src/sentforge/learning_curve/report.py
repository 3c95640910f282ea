"""The labels report: report.json (everything), report.md (the answer and the tables) and
learning-curve.png (the dev score per run and per size with its spread, the fitted curve, the start model
as a line; skipped with a logged message when matplotlib, the `plots` extra, is absent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sentforge.support.disk import human_size
from sentforge.support.errors import ConfigError
from sentforge.harness.report_files import on_the_cluster, pyplot, save_figure, write_report_files
from sentforge.learning_curve.answer import MIN_LEARNING_STEPS, answer, holdout, short_runs
from sentforge.learning_curve.curve import curve_values, formula
from sentforge.learning_curve.run_record import LabelsRun

CURVE_PNG = "learning-curve.png"


def size_table(runs: dict[str, LabelsRun], gains: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per size: its finished runs' dev mean and spread (sample standard deviation), the mean gain over the
    start model, and how many runs' paired 95 % intervals lie above 0."""
    table = []
    for size in sorted({r.size for r in runs.values()}):
        names = [name for name, r in runs.items() if r.size == size and r.done]
        scores = np.array([runs[name].dev for name in names])
        table.append({"labels": size, "runs": len(names),
                      "skipped": sum(r.size == size and not r.done for r in runs.values()),
                      "mean": float(scores.mean()) if len(names) else None,
                      "spread": float(scores.std(ddof=1)) if len(names) > 1 else None,
                      "gain": float(np.mean([gains[n]["difference"] for n in names])) if names else None,
                      "above_zero": sum(gains[n]["low"] > 0 for n in names)})
    return table


def build_report(state: Any, names: list[str], gains: dict[str, dict[str, Any]], metric: str, dev_name: str,
                 target: float | None, flat_points: float, budget: Any, size_gain: dict[str, Any] | None = None,
                 unseen: list[dict[str, Any]] = (), unit: str = "labels", notes: list[str] = ()) -> dict[str, Any]:
    """size_gain: the paired gain of the largest size over the smallest (the rising test); unseen: the sizes
    whose runs train on fewer rows than the subset holds; unit: what a size counts ("labels", or "examples per
    class"); notes: what the report says about the subsets (data.py)."""
    runs = {name: state.results[name].update(dev_gain=gains.get(name)) for name in names}
    sizes = size_table(runs, gains)
    finished = [r for r in runs.values() if r.done]
    points = [(r.size, r.dev) for r in finished]
    means = {row["labels"]: row["mean"] for row in sizes if row["mean"] is not None}
    report: dict[str, Any] = {
        "metric": metric, "dev": dev_name, "method": state.settings["method"], "start": state.results["start"].dev,
        "labelled_units": max(state.settings["sizes"]), "unit": unit, "notes": list(notes), "sizes": sizes,
        "runs": {name: r.to_json() for name, r in runs.items()},
        "skipped": [name for name in names if not runs[name].done],
        "sizes_without_runs": [row["labels"] for row in sizes if row["runs"] == 0],
        "budget_minutes": state.settings["budget_minutes"], "wall_s": round(budget.total_s - budget.remaining(), 2),
        "settings": state.settings, "unseen": list(unseen), "fit": None, "answer": None}
    report["short_runs"] = short_runs([(r.size, r.steps) for r in finished])
    try:
        result = answer(points, means, size_gain, target, flat_points, report["short_runs"])
    except (ConfigError, RuntimeError) as err:  # too few sizes, or a fit that does not converge
        report["fit_error"] = str(err)
        report["holdout"] = {"status": "no curve", "reason": str(err)} if means else {"status": "no runs"}
    else:
        report["answer"] = result
        report["fit"] = result["fits"][result["model"]]
        report["holdout"] = holdout(points, means, result["model"])
    return report


def report_runs(report: dict[str, Any]) -> dict[str, LabelsRun]:
    """The runs of a report (as report.json holds them) as records."""
    return {name: LabelsRun.from_json(r) for name, r in report["runs"].items()}


def write_report(output: Path, report: dict[str, Any]) -> None:
    write_report_files(output, report, markdown(report))
    plot(output / CURVE_PNG, report)


def _n(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def interval(estimate: dict[str, Any], basis: str, signed: bool = False) -> str:
    """"[95 % interval low, high]", or why there is none."""
    if estimate["low"] is None:
        return f"(interval not estimable from {basis})"
    form = "+.2f" if signed else ".2f"
    return f"[95 % interval {estimate['low']:{form}}, {estimate['high']:{form}}]"


def scored(estimate: dict[str, Any], basis: str) -> str:
    """A predicted score with its interval (the CLI's answer and the report's)."""
    return f"{estimate['score']:.2f} {interval(estimate, basis)}"


def _parameters(fit: dict[str, Any], names: str, basis: str) -> str:
    """"a = 1.00 ± 0.10, b = ...", or the values and why their standard errors are missing."""
    undetermined = any(fit[f"{name}_err"] is None for name in names)
    values = ", ".join(f"{name} = {fit[name]:.4g}" + ("" if undetermined else f" ± {fit[f'{name}_err']:.3g}")
                       for name in names)
    return values + (f" (standard errors not estimable from {basis})" if undetermined else "")


def _fit_lines(result: dict[str, Any], metric: str) -> list[str]:
    fits, chosen, basis = result["fits"], result["model"], result["basis"]
    line = _parameters(fits["log-linear"], "ab", basis)
    lines = [f"- straight line in log n: dev {metric} ≈ a + b·ln n with {line}"
             + (" (used)" if chosen == "log-linear" else "") + ";"]
    curve = fits["saturating"]
    if curve is None:
        lines.append("- saturating a − b·n^(−c): the fit did not converge.")
    else:
        lines.append(f"- saturating: dev {metric} ≈ a − b·n^(−c) with {_parameters(curve, 'abc', basis)}"
                     + (" (used)" if chosen == "saturating" else "") + ".")
    return lines


def _trend_line(result: dict[str, Any], unit: str) -> str:
    """The paired test's verdict; where the fitted slope's interval (per doubling) says otherwise, the line
    says so and gives the verdict of the one that lies off 0, never "flat" beside a slope shown not to be."""
    gain, paired, slope = result["size_gain"], result["trend"], result.get("slope")
    if gain is None:
        return "- Rising or flat: not tested (no dev scores of the smallest and largest sizes to pair)."
    test = (f"the paired gain of {gain['sizes'][1]} {unit} over {gain['sizes'][0]} on the dev units is "
            f"{gain['difference']:+.2f} [95 % bootstrap interval {gain['low']:+.2f}, {gain['high']:+.2f}]")
    moves = {"rising": "the score **rises** with the labels",
             "falling": "the score **falls** with the labels (more labels scored lower)"}
    if paired == "flat" and slope in moves:
        verdict = (f"it includes 0, so the pairing does not tell the largest size from the smallest; but the fitted "
                   f"change per doubling (next line) lies {'above' if slope == 'rising' else 'below'} 0: "
                   f"{moves[slope]}")
    elif paired == "flat":
        verdict = "it includes 0: within the measured sizes the curve is **not distinguishable from flat**"
    else:
        verdict = f"it lies {'above' if paired == 'rising' else 'below'} 0: {moves[paired]}"
        if slope not in (None, paired):
            verdict += f" (the fitted change per doubling, next line, is {slope}: the fit and the pairing differ)"
    return f"- Rising or flat: {test}; {verdict}."


def _shape_line(result: dict[str, Any]) -> str:
    shape = result["shape"]
    if not shape["tested"]:
        return (f"- Saturating or straight in log n: not testable ({shape['reason']}); the predictions use the "
                "**straight line in log n**, the simpler curve.")
    test = (f"the F-test of the saturating curve against the straight line gives F = {shape['f']:.2f} on "
            f"{shape['dof'][0]} and {shape['dof'][1]} degrees of freedom, p = {shape['p']:.3g}")
    if shape["kind"] == "saturating":
        ceiling = result["ceiling"]
        spread = "" if ceiling["error"] is None else f" ± {ceiling['error']:.2f}"
        return (f"- Saturating or straight in log n: {test}; the curve **saturates**, towards a ceiling of "
                f"{ceiling['score']:.2f}{spread}; the predictions use the saturating curve.")
    return (f"- Saturating or straight in log n: {test}; no evidence of saturation, so the predictions use the "
            "**straight line in log n** (no ceiling is estimated).")


def answer_lines(report: dict[str, Any]) -> list[str]:
    """The answer in sentences."""
    metric, result, unit = report["metric"], report["answer"], report.get("unit", "labels")
    if result is None:
        return [f"No curve was fitted: {report.get('fit_error', 'no finished runs')}."]
    basis = result["basis"]
    lines = [f"Fits to the dev score of every finished run ({basis}; standard errors from each fit's covariance, "
             "95 % intervals with Student's t at the fit's residual degrees of freedom):", "",
             *_fit_lines(result, metric), "", _trend_line(result, unit), _shape_line(result)]
    doubling = result["per_doubling"]
    slope = {"flat": ": its interval includes 0, flat by the fit", "rising": ": above 0, rising",
             "falling": ": below 0, falling (more labels scored lower)", None: ""}[result.get("slope")]
    lines.append(f"- Per doubling of the labels the fitted score changes by {doubling['score']:+.2f} points "
                 f"{interval(doubling, basis, signed=True)}{slope}.")
    lines += ["", f"With {result['labels']} {unit} the measured mean is {result['measured']:.2f}."]
    for multiple in (2, 5):
        p = result[f"at_{multiple}x"]
        lines.append(f"- {multiple}× the labels ({p['labels']} {unit}): expected dev {metric} {scored(p, basis)}.")
    gain, threshold = result["gain_5x"], result["flat_points"]
    worth = {"below": f"all of it below the --flat-points threshold of {threshold:g}: more labels are not worth it "
                      "by that threshold",
             "above": f"all of it at or above the --flat-points threshold of {threshold:g}",
             "undecided": f"not decided against the --flat-points threshold of {threshold:g}",
             "cannot tell": "cannot tell whether more labels are worth it: runs too short to learn from their labels "
                            "(see the warning above) show no gain whatever the labels hold"}[result["worth"]]
    lines.append(f"- 5× the labels add {gain['score']:+.2f} points {interval(gain, basis, signed=True)}: {worth}.")
    target = result.get("target")
    if target is not None:
        lines.append(_target_line(target, result, unit))
    return lines


def _target_line(target: dict[str, Any], result: dict[str, Any], unit: str = "labels") -> str:
    return f"- Target {target['score']:g}: {target_words(target, result, unit)}."


def target_words(target: dict[str, Any], result: dict[str, Any], unit: str) -> str:
    """How many `unit` reach the target, measured or fitted, or why the answer gives none (the report's line and
    the command's summary)."""
    if target["status"] == "reached":
        return f"reached with {target['measured_labels']} {unit} (measured)"
    if target["status"] == "not predicted":
        return (f"not reached by the measured sizes, and not predicted: the score is not shown to rise with "
                f"the labels (the curve is {result['trend'] or 'untested'})")
    if target["status"] == "beyond":
        return (f"more than {target['cap'] // result['labels']}× your labels (over {target['cap']}) by the "
                f"fitted {result['model']} curve: far beyond what the measured sizes can say")
    if target["status"] == "predicted":
        return (f"about {target['fitted_labels']:.0f} {unit} by the fitted {result['model']} curve"
                + (" (far beyond the measured sizes: an extrapolation)"
                   if target["fitted_labels"] > 5 * result["labels"] else ""))
    return f"not reached by any number of labels; it lies above the fitted ceiling {result['ceiling']['score']:.2f}"


def holdout_lines(check: dict[str, Any], metric: str, unit: str = "labels") -> list[str]:
    if check["status"] != "done":
        return [f"Holdout check not made: {check.get('reason', check['status'])}."]
    p = check["predicted"]
    return [f"Holdout check: fitted on the sizes below {check['labels']} only, the {check['fit']['kind']} curve "
            f"predicts dev {metric} {scored(p, check['basis'])} at {check['labels']} {unit}; measured "
            f"{check['measured']:.2f}: a prediction error of {check['error']:+.2f} points"
            + ("" if check["within_interval"] is None else
               f" ({'inside' if check['within_interval'] else 'outside'} the interval)") + "."]


def unseen_lines(unseen: list[dict[str, Any]]) -> list[str]:
    if not unseen:
        return []
    sizes = ", ".join(f"{u['labels']} ({u['seen']} of {u['examples']} rows)" for u in unseen)
    return [f"**Warning**: the runs of some sizes never see their whole subset (steps × batch size is smaller than "
            f"the subset): {sizes}. The rest of those subsets is never trained on, so the curve cannot show what it "
            "adds; give more --steps (or none: one epoch of each subset).", ""]


def short_lines(short: list[dict[str, Any]], unit: str = "labels") -> list[str]:
    """The warning on runs too short to learn (answer.MIN_LEARNING_STEPS)."""
    if not short:
        return []
    return [f"**Warning**: runs too short to learn: {short_warning(short, unit)}.", ""]


def short_warning(short: list[dict[str, Any]], unit: str = "labels") -> str:
    """What the runs too short to learn are and what to do (the log's warning before training and the report's)."""
    return (f"the runs of {short_sizes(short, unit)} take fewer than {MIN_LEARNING_STEPS} optimizer steps, too few to "
            "move the start model, so their dev scores cannot show what the labels add and a flat curve from them "
            f"says nothing about more labels; give more steps (--steps {MIN_LEARNING_STEPS} or more, more "
            "--epochs, or a smaller --batch-size)")


def short_sizes(short: list[dict[str, Any]], unit: str = "labels") -> str:
    """"4 labels (1 step), 8 labels (2 steps)": the sizes and the fewest steps of their runs."""
    return ", ".join(f"{s['labels']} {unit} ({s['steps']} step{'' if s['steps'] == 1 else 's'})" for s in short)


def start_name(report: dict[str, Any]) -> str:
    """What the start model's line is: the start model, or for classes the start model with a head."""
    if report.get("unit", "labels") == "labels":
        return "Start model"
    return f"Start model + head on the draw of {report['labelled_units']} {report['unit']} (repeat 0)"


def markdown(report: dict[str, Any]) -> str:
    metric, unit = report["metric"], report.get("unit", "labels")
    settings = report["settings"]
    steps = f"{settings['steps']} steps" if settings["steps"] else f"{settings['epochs']} epoch(s) of the subset"
    subsets = (f"{report['method']} on nested subsets of {report['labelled_units']} labelled units" if unit == "labels"
               else f"the setfit recipe on nested draws of {', '.join(map(str, settings['sizes']))} {unit}")
    lines = ["# sentforge labels", "",
             f"Learning curve of `{settings['model']}` trained with {subsets} ({settings['repeats']} seeded repeats; "
             f"{steps} per run), scored on `{report['dev']}` ({metric}).", "",
             f"{start_name(report)}: dev {metric} {report['start']:.2f}.",
             f"Budget: {report['budget_minutes']:g} min; used {report['wall_s'] / 60:.1f} min of wall time.", "",
             *unseen_lines(report["unseen"]), *short_lines(report.get("short_runs", []), unit),
             *(line for note in report.get("notes", []) for line in (f"**Note**: {note}.", "")), "## Answer", "",
             *answer_lines(report), "",
             *holdout_lines(report["holdout"], metric, unit), "",
             "## Per size", "",
             "Spread: the standard deviation over the repeats. Gain: the mean dev gain over the start model; "
             "above 0: the runs whose 95 % paired bootstrap interval (resampling the dev units) lies above 0.", "",
             f"| {unit} | runs | dev {metric} mean | spread | gain | above 0 | skipped |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for row in report["sizes"]:
        gain = "-" if row["gain"] is None else f"{row['gain']:+.2f}"
        lines.append(f"| {row['labels']} | {row['runs']} | {_n(row['mean'])} | {_n(row['spread'])} | {gain} | "
                     f"{row['above_zero']} of {row['runs']} | {row['skipped']} |")
    cluster = report.get("cluster")
    lines += ["", "## Runs", ""]
    if cluster:
        lines += [f"The runs trained side by side on a Ray cluster, {on_the_cluster(cluster)}; wall s: from a "
                  "run's start to its result, worker: the host (node address) that ran it.", ""]
    worker = " worker |" if cluster else ""
    lines += [f"| run | {unit} | repeat | dev {metric} | gain [95 % interval] | steps | wall s |{worker}",
              "|---|---:|---:|---:|---:|---:|---:|" + ("---|" if cluster else "")]
    runs = report_runs(report)
    for name, r in runs.items():
        ran_on = f" {r.worker['host']} ({r.worker['node']}) |" if r.worker else (" |" if cluster else "")
        if not r.done:
            lines.append(f"| {name} | {r.size} | {r.repeat} | {r.status}: {r.reason or ''} | | | |" + ran_on)
            continue
        g = r.dev_gain
        steps = f"{r.steps}" + (f" of {r.planned_steps}" if r.steps < r.planned_steps else "")
        lines.append(f"| {name} | {r.size} | {r.repeat} | {r.dev:.2f} | {g['difference']:+.2f} "
                     f"[{g['low']:+.2f}, {g['high']:+.2f}] | {steps} | {r.wall_s:.0f} |{ran_on}")
    cut = [name for name, r in runs.items() if r.done and r.steps < r.planned_steps]
    if cut:
        lines += ["", f"**Cut by the budget's time limit** (fewer steps than planned, so their scores are lower "
                      f"than a full run's): {', '.join(cut)}."]
    if report["skipped"]:
        lines += ["", f"Skipped or failed: {', '.join(report['skipped'])}" + (
            f"; sizes without any run: {', '.join(map(str, report['sizes_without_runs']))}"
            if report["sizes_without_runs"] else "") + "."]
    lines += ["", "Each run's `command` in report.json retrains it with `sentforge train`.", "",
              f"Output: {human_size(report['output_bytes'])} on disk ("
              + ("the runs' training checkpoints kept" if report["keep_checkpoints"] else
                 "each finished run keeps its model and metrics; its training checkpoints were removed") + ").", ""]
    return "\n".join(lines)


def plot(path: Path, report: dict[str, Any]) -> None:
    plt = pyplot(path)
    if plt is None:
        return
    figure, axes = plt.subplots(figsize=(9.5, 4.5))
    done = [r for r in report_runs(report).values() if r.done]
    axes.scatter([r.size for r in done], [r.dev for r in done], s=12, color="C0", alpha=0.4, label="runs")
    rows = [row for row in report["sizes"] if row["mean"] is not None]
    axes.errorbar([row["labels"] for row in rows], [row["mean"] for row in rows],
                  yerr=[row["spread"] or 0.0 for row in rows], fmt="o", color="C0", capsize=4,
                  label="mean ± spread over repeats")
    axes.axhline(report["start"], color="grey", linestyle="--", linewidth=1, label=start_name(report).lower())
    largest = max((row["labels"] for row in rows), default=None)
    if report["fit"] is not None and largest is not None:
        fit = report["fit"]
        grid = np.geomspace(min(row["labels"] for row in rows), 5 * largest, 200)
        axes.plot(grid, curve_values(fit, grid), color="C1", label=f"fit {formula(fit)}")
        for multiple in (2, 5):
            p = report["answer"][f"at_{multiple}x"]
            error = None if p["low"] is None else [[p["score"] - p["low"]], [p["high"] - p["score"]]]
            axes.errorbar([p["labels"]], [p["score"]], yerr=error, fmt="s", color="C1", capsize=4, mfc="white",
                          label="expected with 2× and 5× the labels (95 % interval)" if multiple == 2 else None)
    check = report["holdout"]
    if check["status"] == "done":
        fit = check["fit"]
        grid = np.geomspace(min(row["labels"] for row in rows), largest, 200)
        axes.plot(grid, curve_values(fit, grid), color="C2", linestyle=":",
                  label=f"fit without {check['labels']} (predicts {check['predicted']['score']:.1f})")
    if rows:  # (without a finished run only the start model is drawn)
        axes.set_xscale("log")
    axes.ticklabel_format(axis="y", useOffset=False)
    axes.set_xlabel(f"{'labelled units' if report.get('unit', 'labels') == 'labels' else report['unit']} "
                    "(log scale)")
    axes.set_ylabel(f"dev {report['metric']}")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the plot, off the points
    save_figure(plt, figure, path, dpi=110)
