"""The adapt report: report.json (everything), report.md (the tables; its layout is report.md.jinja), dev-curve.png
(dev score against training steps) and front.png (dev score against encode speed, the speed–quality front
highlighted); the figures are skipped with a logged message when matplotlib, the `plots` extra, is absent."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sentforge.adaptation.hygiene import Hygiene, data_noun
from sentforge.adaptation.result import (CandidateResult, MetaResult, PipelineResult, StartResult, StaticResult,
                                         TrainedResult, finished_type)
from sentforge.adaptation.select import Selection
from sentforge.adaptation.state_records import Leftover
from sentforge.support.disk import human_size
from sentforge.harness.figure_labels import place_labels
from sentforge.harness.report_files import on_the_cluster, pyplot, save_figure, write_report_files

if TYPE_CHECKING:
    import jinja2

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


def wilson(share: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion `share` of `n` trials (95 % for the default z)."""
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def unresolved(report: dict[str, Any]) -> list[str]:
    """The candidates past the gate that the dev set does not tell from the selected model (paired interval
    around 0)."""
    selection, chosen = report["selection"], report["selected"]
    rivals = [c["candidate"] for c in selection.get("comparisons") or [] if c["low"] <= 0 and c["candidate"] != chosen]
    if selection.get("leader") not in (None, chosen):
        rivals.insert(0, selection["leader"])
    return rivals


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


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _gain(gain: dict[str, Any] | None) -> str:
    return "-" if gain is None else f"{gain['difference']:+.2f} [{gain['low']:+.2f}, {gain['high']:+.2f}]"


def _is(result_type: type) -> Any:
    return lambda result: finished_type(result["kind"]) is result_type


@cache
def _template() -> jinja2.Template:
    """report.md.jinja beside this file: the report's layout, top to bottom (a template, as sentence-transformers'
    model cards are)."""
    import jinja2

    # StrictUndefined: a key the report lacks is an error, never an empty cell.
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent), trim_blocks=True,
                                     lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                                     autoescape=False)
    environment.filters.update(fmt=format, number=_number, gain=_gain)
    environment.tests.update(start_result=_is(StartResult), meta_result=_is(MetaResult),
                             pipeline_result=_is(PipelineResult), static_result=_is(StaticResult))
    environment.globals.update(wilson=wilson, human_size=human_size, data_noun=data_noun,
                               on_the_cluster=on_the_cluster, leftover_shown_s=LEFTOVER_SHOWN_S)
    return environment.get_template("report.md.jinja")


def markdown(report: dict[str, Any]) -> str:
    """report.md of report.json's mapping. Three values the template takes ready: the candidates dev does not
    tell from the selected one, the continuation of the leftover's leader, and every racing stop (a TSDAE
    ladder's rungs each)."""
    candidates, leftover = report["candidates"], report.get("leftover") or {}
    continuation = next((name for name, r in candidates.items()
                         if leftover.get("continued") is not None and r.get("continues") == leftover["continued"]),
                        None)
    stopped = [(label, race) for name, r in candidates.items()
               for label, race in ([(f"{name} (after {rung['after_steps']} TSDAE steps)", rung.get("race"))
                                    for rung in r.get("ladder") or []] or [(name, r.get("race"))]) if race]
    return _template().render(r=report, rivals=unresolved(report), continuation=continuation, stopped=stopped,
                              beside_model=lambda name: str(Path(report["model"]).parent / name))


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
