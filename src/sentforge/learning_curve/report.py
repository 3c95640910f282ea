"""The labels report: report.json (everything), report.md (the answer and the tables) and
learning-curve.png (the dev score per run and per size with its spread, the fitted curve, the start model
as a line; skipped with a logged message when matplotlib, the `plots` extra, is absent)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.errors import ConfigError
from sentforge.io import atomic_file, save_json
from sentforge.learning_curve.answer import answer, holdout
from sentforge.learning_curve.curve import fit_curve, saturating

logger = logging.getLogger(__name__)

REPORT_JSON, REPORT_MD, CURVE_PNG = "report.json", "report.md", "learning-curve.png"


def size_table(runs: dict[str, dict[str, Any]], gains: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per size: its finished runs' dev mean and spread (sample standard deviation), the mean gain over the
    start model, and how many runs' paired 95 % intervals lie above 0."""
    table = []
    for size in sorted({r["size"] for r in runs.values()}):
        names = [name for name, r in runs.items() if r["size"] == size and r["status"] == "done"]
        scores = np.array([runs[name]["dev"] for name in names])
        table.append({"labels": size, "runs": len(names),
                      "skipped": sum(r["size"] == size and r["status"] != "done" for r in runs.values()),
                      "mean": float(scores.mean()) if len(names) else None,
                      "spread": float(scores.std(ddof=1)) if len(names) > 1 else None,
                      "gain": float(np.mean([gains[n]["difference"] for n in names])) if names else None,
                      "above_zero": sum(gains[n]["low"] > 0 for n in names)})
    return table


def build_report(state: Any, names: list[str], gains: dict[str, dict[str, Any]], metric: str, dev_name: str,
                 target: float | None, flat_points: float, budget: Any) -> dict[str, Any]:
    runs = {name: dict(state.results[name]) for name in names}
    for name, gain in gains.items():
        runs[name]["dev_gain"] = gain
    sizes = size_table(runs, gains)
    points = [(r["size"], r["dev"]) for r in runs.values() if r["status"] == "done"]
    means = {row["labels"]: row["mean"] for row in sizes if row["mean"] is not None}
    report: dict[str, Any] = {
        "metric": metric, "dev": dev_name, "method": state.settings["method"], "start": state.results["start"]["dev"],
        "labelled_units": max(state.settings["sizes"]), "sizes": sizes, "runs": runs,
        "skipped": [name for name in names if runs[name]["status"] != "done"],
        "sizes_without_runs": [row["labels"] for row in sizes if row["runs"] == 0],
        "budget_minutes": state.settings["budget_minutes"], "wall_s": round(budget.total_s - budget.remaining(), 2),
        "settings": state.settings, "fit": None, "answer": None}
    try:
        fit = fit_curve([n for n, _ in points], [y for _, y in points])
    except (ConfigError, RuntimeError) as err:  # too few sizes, or a fit that does not converge
        report["fit_error"] = str(err)
    else:
        report["fit"] = fit.to_json()
        report["answer"] = answer(fit, means, target, flat_points)
    report["holdout"] = holdout(points, means) if means else {"status": "no runs"}
    return report


def write_report(output: Path, report: dict[str, Any]) -> None:
    save_json(output / REPORT_JSON, report)
    with atomic_file(output / REPORT_MD, "w") as handle:
        handle.write(markdown(report))
    plot(output / CURVE_PNG, report)


def _n(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def answer_lines(report: dict[str, Any]) -> list[str]:
    """The answer in sentences."""
    metric, result, fit = report["metric"], report["answer"], report["fit"]
    if result is None:
        return [f"No curve was fitted: {report.get('fit_error', 'no finished runs')}."]
    lines = [f"Fit: dev {metric} ≈ a − b·n^(−c) with a = {fit['a']:.2f} ± {_n(fit['a_err'])}, "
             f"b = {fit['b']:.3g} ± {_n(fit['b_err'], 3)}, c = {fit['c']:.3f} ± {_n(fit['c_err'], 3)} "
             f"(standard errors from the fit's covariance; {fit['points']} runs over {len(fit['sizes'])} sizes).", ""]
    lines.append(f"With {result['labels']} labels the measured mean is {result['measured']:.2f}.")
    for multiple in (2, 5):
        p = result[f"at_{multiple}x"]
        lines.append(f"- {multiple}× the labels ({p['labels']}): expected dev {metric} {p['score']:.2f} "
                     f"[95 % interval {_n(p['low'])}, {_n(p['high'])}].")
    ceiling = result["ceiling"]
    if not result["rising"]:
        lines.append(f"- The fitted curve does not rise with the labels (b ≤ 0): within the measured sizes more labels "
                     f"did not raise the dev score; the fit levels off at {ceiling['score']:.2f} ± "
                     f"{_n(ceiling['error'])}.")
    elif result["log_linear"]:
        lines.append(f"- No saturation within the measured sizes: the fit's c is at its lower bound, where "
                     f"a − b·n^(−c) is a straight line in log n; its ceiling a ({ceiling['score']:.2f}) means "
                     f"nothing. The score grows by about {result['per_doubling']:+.2f} points per doubling of the "
                     "labels, and the predictions extrapolate that line.")
    else:
        lines.append(f"- The fitted ceiling is {ceiling['score']:.2f} ± {_n(ceiling['error'])}; doubling the labels "
                     f"adds {result['per_doubling']:+.2f} points.")
    if result["flattened"]:
        lines.append(f"- The curve has flattened: 5× the labels add {result['gain_5x']:+.2f} points (less than "
                     f"{result['flat_points']:g}).")
    else:
        lines.append(f"- The curve has not flattened: 5× the labels add {result['gain_5x']:+.2f} points (at least "
                     f"{result['flat_points']:g}).")
    target = result.get("target")
    if target is not None:
        if target["status"] == "reached":
            lines.append(f"- Target {target['score']:g}: reached with {target['measured_labels']} labels (measured).")
        elif target["status"] == "predicted":
            lines.append(f"- Target {target['score']:g}: about {target['fitted_labels']:.0f} labels by the fitted "
                         "curve" + (" (far beyond the measured sizes: an extrapolation)"
                                    if target["fitted_labels"] > 5 * result["labels"] else "") + ".")
        else:
            lines.append(f"- Target {target['score']:g}: not reached by any number of labels; it lies above the "
                         f"fitted ceiling {ceiling['score']:.2f}.")
    return lines


def holdout_lines(check: dict[str, Any], metric: str) -> list[str]:
    if check["status"] != "done":
        return [f"Holdout check not made: {check.get('reason', check['status'])}."]
    p = check["predicted"]
    return [f"Holdout check: fitted on the sizes below {check['labels']} only, the curve predicts dev {metric} "
            f"{p['score']:.2f} [95 % interval {_n(p['low'])}, {_n(p['high'])}] at {check['labels']} labels; measured "
            f"{check['measured']:.2f}: a prediction error of {check['error']:+.2f} points"
            + ("" if check["within_interval"] is None else
               f" ({'inside' if check['within_interval'] else 'outside'} the interval)") + "."]


def markdown(report: dict[str, Any]) -> str:
    metric = report["metric"]
    settings = report["settings"]
    steps = f"{settings['steps']} steps" if settings["steps"] else f"{settings['epochs']} epoch(s) of the subset"
    lines = ["# sentforge labels", "",
             f"Learning curve of `{settings['model']}` trained with {report['method']} on nested subsets of "
             f"{report['labelled_units']} labelled units ({settings['repeats']} seeded repeats; {steps} per run), "
             f"scored on `{report['dev']}` ({metric}).", "",
             f"Start model: dev {metric} {report['start']:.2f}.",
             f"Budget: {report['budget_minutes']:g} min; used {report['wall_s'] / 60:.1f} min of wall time.", "",
             "## Answer", "", *answer_lines(report), "", *holdout_lines(report["holdout"], metric), "",
             "## Per size", "",
             "Spread: the standard deviation over the repeats. Gain: the mean dev gain over the start model; "
             "above 0: the runs whose 95 % paired bootstrap interval (resampling the dev units) lies above 0.", "",
             f"| labels | runs | dev {metric} mean | spread | gain | above 0 | skipped |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for row in report["sizes"]:
        gain = "-" if row["gain"] is None else f"{row['gain']:+.2f}"
        lines.append(f"| {row['labels']} | {row['runs']} | {_n(row['mean'])} | {_n(row['spread'])} | {gain} | "
                     f"{row['above_zero']} of {row['runs']} | {row['skipped']} |")
    lines += ["", "## Runs", "", f"| run | labels | repeat | dev {metric} | gain [95 % interval] | steps | wall s |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in report["runs"].items():
        if r["status"] != "done":
            lines.append(f"| {name} | {r['size']} | {r['repeat']} | {r['status']}: {r.get('reason', '')} | | | |")
            continue
        g = r["dev_gain"]
        steps = f"{r['steps']}" + (f" of {r['planned_steps']}" if r["steps"] < r["planned_steps"] else "")
        lines.append(f"| {name} | {r['size']} | {r['repeat']} | {r['dev']:.2f} | {g['difference']:+.2f} "
                     f"[{g['low']:+.2f}, {g['high']:+.2f}] | {steps} | {r['wall_s']:.0f} |")
    cut = [name for name, r in report["runs"].items() if r["status"] == "done" and r["steps"] < r["planned_steps"]]
    if cut:
        lines += ["", f"**Cut by the budget's time limit** (fewer steps than planned, so their scores are lower "
                      f"than a full run's): {', '.join(cut)}."]
    if report["skipped"]:
        lines += ["", f"Skipped or failed: {', '.join(report['skipped'])}" + (
            f"; sizes without any run: {', '.join(map(str, report['sizes_without_runs']))}"
            if report["sizes_without_runs"] else "") + "."]
    lines += ["", "Each run's `command` in report.json retrains it with `sentforge train`.", ""]
    return "\n".join(lines)


def plot(path: Path, report: dict[str, Any]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.info("matplotlib is not installed (the `plots` extra): %s not drawn", path.name)
        return
    figure, axes = plt.subplots(figsize=(9.5, 4.5))
    done = [r for r in report["runs"].values() if r["status"] == "done"]
    axes.scatter([r["size"] for r in done], [r["dev"] for r in done], s=12, color="C0", alpha=0.4, label="runs")
    rows = [row for row in report["sizes"] if row["mean"] is not None]
    axes.errorbar([row["labels"] for row in rows], [row["mean"] for row in rows],
                  yerr=[row["spread"] or 0.0 for row in rows], fmt="o", color="C0", capsize=4,
                  label="mean ± spread over repeats")
    axes.axhline(report["start"], color="grey", linestyle="--", linewidth=1, label="start model")
    largest = max((row["labels"] for row in rows), default=None)
    if report["fit"] is not None and largest is not None:
        fit = report["fit"]
        grid = np.geomspace(min(row["labels"] for row in rows), 5 * largest, 200)
        axes.plot(grid, saturating(grid, fit["a"], fit["b"], fit["c"]), color="C1",
                  label=f"fit {fit['a']:.1f} − {fit['b']:.3g}·n^(−{fit['c']:.3g})")
        for multiple in (2, 5):
            p = report["answer"][f"at_{multiple}x"]
            error = None if p["low"] is None else [[p["score"] - p["low"]], [p["high"] - p["score"]]]
            axes.errorbar([p["labels"]], [p["score"]], yerr=error, fmt="s", color="C1", capsize=4, mfc="white",
                          label="expected with 2× and 5× the labels (95 % interval)" if multiple == 2 else None)
    check = report["holdout"]
    if check["status"] == "done":
        fit = check["fit"]
        grid = np.geomspace(min(row["labels"] for row in rows), largest, 200)
        axes.plot(grid, saturating(grid, fit["a"], fit["b"], fit["c"]), color="C2", linestyle=":",
                  label=f"fit without {check['labels']} (predicts {check['predicted']['score']:.1f})")
    if rows:  # (without a finished run only the start model is drawn)
        axes.set_xscale("log")
    axes.ticklabel_format(axis="y", useOffset=False)
    axes.set_xlabel("labelled units (log scale)")
    axes.set_ylabel(f"dev {report['metric']}")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the plot, off the points
    figure.tight_layout()
    with atomic_file(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=110)
    plt.close(figure)
