"""Choosing the model and writing it to OUTPUT/model with a model card that records the choice.

Only candidates that encode at least `min_texts_per_second` texts per second on the run's texts and
device are eligible (all of them without a bound); the best eligible start model is the reference. Two
rules:

"significant" (the default). The gate: a candidate is considered only when the lower bound of the 95 %
paired bootstrap interval of its dev gain over the reference start model is above 0 (none: the start
model is kept). The leader is the considered candidate with the highest dev score. A considered
candidate that costs less to run replaces the leader when the leader's advantage over it is not
significant: the paired interval of leader − candidate, on the same dev units, contains 0. Costing less
to run means no more encoders, parameters or vector dimensions and fewer of at least one; between
models that differ both ways, encoding at least SPEED_MARGIN times faster here. Among several such
candidates the cheapest wins (the highest dev score among equally cheap ones). Training steps play no
part: two models of the same architecture cost the same to run, and the higher dev score wins.

"cross-fitted": the same gate, leader and comparisons, on the cross-fitted per-unit dev scores of each
trained candidate (intervals.cross_fitted): its kept checkpoint is the best of all it evaluated (of every
rung of the TSDAE ladder too), and the best of many checkpoints on one dev set scores higher there than on
new data; cross-fitted, every unit is scored by a checkpoint chosen on the other half of the dev units, so
a candidate gains nothing from the number of checkpoints it was chosen among.

"best": the highest dev score, never below the reference start model's (a start model wins ties).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from sentforge.adaptation.result import CandidateResult
from sentforge.adaptation.speed import COST_KEYS, same_cost
from sentforge.support.errors import ConfigError
from sentforge.evaluation.paired import ItemScores
from sentforge.harness.dev_items import CONFIDENCE, paired_gain
from sentforge.support.io import atomic_dir
from sentforge.interface.model_card import display_name
from sentforge.support.output_guard import MARKER

MODEL_DIR = "model"
RULES = ("significant", "cross-fitted", "best")
# Timings on a shared machine move by some per cent between passes: between models that differ in more
# than one way (more parameters but smaller vectors), a faster encode counts only from this ratio on.
SPEED_MARGIN = 1.2


class Selection(NamedTuple):
    """The chosen candidate, the sentence that says why, the reference start model (`base`), every finished
    candidate's dev gain over it, the leader and its paired comparisons with the other gated candidates
    (leader − candidate), and the candidates too slow for the bound (name: texts per second)."""

    chosen: str
    why: str
    base: str
    gains: dict[str, dict[str, Any]]
    leader: str | None = None
    comparisons: list[dict[str, Any]] = []
    too_slow: dict[str, float] = {}

    def to_json(self, rule: str, min_texts_per_second: float | None) -> dict[str, Any]:
        return {"rule": rule, "why": self.why, "base": self.base, "leader": self.leader,
                "comparisons": self.comparisons, "min_texts_per_second": min_texts_per_second,
                "too_slow": self.too_slow}


def check_rule(rule: str) -> str:
    if rule not in RULES:
        raise ConfigError(f"--select: unknown rule {rule!r}; choose from {', '.join(RULES)}")
    return rule


def best_start(results: Mapping[str, CandidateResult], starts: list[str]) -> str:
    """The start model with the highest dev score (the first on a tie)."""
    return max(starts, key=lambda name: results[name].dev)


def select(results: Mapping[str, CandidateResult], start: list[str], rule: str = "best",
           items: Mapping[str, ItemScores] | None = None, seed: int = 0,
           min_texts_per_second: float | None = None) -> Selection:
    """Choose among the finished candidates of `results` (in run order) by `rule`; `items` holds each one's
    per-unit dev scores (for the intervals; without them, "best" alone applies and no gains are given),
    and each result its "speed" (speed.measure) when `min_texts_per_second` is set."""
    done = {name: r for name, r in results.items() if r.done}
    too_slow = {name: r.speed["texts_per_second"] for name, r in done.items()
                if min_texts_per_second is not None and r.speed["texts_per_second"] < min_texts_per_second}
    eligible = [name for name in done if name not in too_slow]
    starts = [name for name in start if name in done]
    fast_starts = [name for name in starts if name in eligible]
    base = (best_start(done, fast_starts) if fast_starts
            else max(starts, key=lambda name: done[name].speed["texts_per_second"]))
    bound = _bound_sentence(too_slow, min_texts_per_second, base, bool(fast_starts))
    gains = {name: paired_gain(items[base], items[name], seed) for name in done} if items is not None else {}
    if rule == "best":
        chosen = base
        for name in eligible:  # in run order: an earlier candidate wins a tie between two others
            if done[name].dev > done[chosen].dev:
                chosen = name
        return Selection(chosen, bound + ("the highest dev score" if chosen != base else
                                          f"no candidate scored above {base} on dev"), base, gains, too_slow=too_slow)
    # The dev score that ranks: the kept checkpoint's, or cross-fitted, the score of the items given.
    dev = {name: items[name].score() if rule == "cross-fitted" else r.dev for name, r in done.items()}
    gated = [name for name in eligible if name != base and gains[name]["low"] > 0]
    if not gated:
        return Selection(base, bound + f"no candidate's {100 * CONFIDENCE:g} % interval of its dev gain over {base} "
                                       "lies above 0: the start model is kept", base, gains, too_slow=too_slow)
    leader = max(gated, key=lambda name: dev[name])  # the first in run order on a tie
    comparisons = [_compare(leader, name, done, items, seed) for name in gated if name != leader]
    close = [c for c in comparisons if c["cheaper"] and c["low"] <= 0]
    chosen = leader
    if close:
        # The ones no other close candidate undercuts (all of them should measured speeds make that circular).
        cheapest = [c for c in close if not any(cheaper(done[o["candidate"]].speed, done[c["candidate"]].speed)
                                                for o in close)] or close
        chosen = max(cheapest, key=lambda c: dev[c["candidate"]])["candidate"]
    score = "cross-fitted dev score" if rule == "cross-fitted" else "dev score"
    why = (f"{bound}{len(gated)} candidate(s) gain significantly over {base} (the lower bound of the "
           f"{100 * CONFIDENCE:g} % interval above 0); the highest {score} among them is {leader}'s "
           f"({dev[leader]:.2f})")
    if comparisons:
        why += "; paired with the others: " + "; ".join(_verdict(leader, c, chosen, done, score) for c in comparisons)
    return Selection(chosen, why, base, gains, leader, comparisons, too_slow)


def _compare(leader: str, name: str, done: dict[str, CandidateResult], items: Mapping[str, ItemScores],
             seed: int) -> dict[str, Any]:
    """The leader's paired dev advantage over `name` and how their costs to run compare."""
    interval = paired_gain(items[name], items[leader], seed)
    speeds = done[name].speed, done[leader].speed
    return {"candidate": name, "difference": interval["difference"], "low": interval["low"],
            "high": interval["high"], "cheaper": cheaper(*speeds), "same_cost": same_cost(*speeds)}


def _verdict(leader: str, comparison: dict[str, Any], chosen: str, done: dict[str, CandidateResult],
             score: str = "dev score") -> str:
    name = comparison["candidate"]
    text = (f"{leader}: {comparison['difference']:+.2f} [{comparison['low']:+.2f}, {comparison['high']:+.2f}] "
            f"over {name}; ")
    if comparison["cheaper"]:
        cost = f"{name} costs less to run ({comparison['cheaper']})"
        if comparison["low"] > 0:
            return text + cost + f", but {leader} is significantly better"
        if name == chosen:
            return text + cost + " and the difference is within the interval: it is chosen"
        why_not = (f"{chosen} costs less still" if cheaper(done[chosen].speed, done[name].speed)
                   else f"{chosen}, as cheap, has the higher {score}")
        return text + cost + f" and the difference is within the interval, but {why_not}"
    if comparison["same_cost"]:
        return text + f"same cost to run, higher {score}"
    return text + f"{name} does not cost less to run, lower {score}"


def cheaper(a: dict[str, Any] | None, b: dict[str, Any] | None) -> str | None:
    """Why model `a` costs less to run than model `b` (speed.measure's records), or None when it does not."""
    if a is None or b is None or same_cost(a, b):
        return None
    known = [key for key in COST_KEYS if a[key] is not None and b[key] is not None]
    if len(known) == len(COST_KEYS):
        if all(a[key] <= b[key] for key in known):
            return ", ".join(_fewer(key, a[key], b[key]) for key in known if a[key] < b[key])
        if all(a[key] >= b[key] for key in known):
            return None
    ratio = a["texts_per_second"] / b["texts_per_second"]
    return f"encodes {ratio:.1f}x faster here" if ratio >= SPEED_MARGIN else None


def _fewer(key: str, mine: int, theirs: int) -> str:
    if key == "encoders":
        return f"{mine} encoder{'s' if mine > 1 else ''} instead of {theirs}"
    if key == "parameters":
        return f"fewer parameters: {mine / 1e6:.1f}M vs {theirs / 1e6:.1f}M"
    return f"smaller vectors: {mine} vs {theirs} dimensions"


def _bound_sentence(too_slow: dict[str, float], bound: float | None, base: str, fast_start: bool) -> str:
    if not too_slow:
        return ""
    slow = ", ".join(f"{name} ({rate:.1f})" for name, rate in too_slow.items())
    text = f"not eligible, encoding fewer than {bound:g} texts per second here: {slow}; "
    if not fast_start:
        text += f"no start model is that fast: {base}, the fastest, is the reference and kept if nothing beats it; "
    return text


def load_candidate(result: CandidateResult | Mapping[str, Any], device: str | None = None) -> Any:
    """The model of a finished candidate: its result, or its entry in report.json."""
    from sentforge.loading import load
    from sentforge.meta import MetaEncoder

    if isinstance(result, Mapping):
        result = CandidateResult.from_json(result)
    if result.kind == "meta":
        return MetaEncoder.load(result.model_path, device=device)
    return load(result.model_path, device=device)


def write_selected(output: Path, name: str, result: CandidateResult, start_result: CandidateResult, metric: str,
                   dev_name: str, test_name: str | None, candidates: int) -> Path:
    """Save the chosen model as OUTPUT/model; an encoder's card records the selection and the scores
    (a meta-embedding directory has no card: report.md says what it is)."""
    target = output / MODEL_DIR
    if result.kind == "meta":
        # Without the run directory's output marker: OUTPUT/model is adapt's output, not a `meta fit` one.
        with atomic_dir(target, overwrite=True) as tmp:
            shutil.copytree(result.model_path, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(MARKER))
        return target
    encoder = load_candidate(result)
    card = encoder.card
    card.base_model = card.base_model or display_name(str(start_result.model))
    card.description = (f"Selected by `sentforge adapt` among {candidates} candidates by {metric} on the dev set "
                        f"{dev_name}: {name} (dev {metric} {result.dev:.2f}; the start model "
                        f"{start_result.dev:.2f}).")
    card.add_dataset(dev_name, role="adapt selection (dev)")
    tasks = {dev_name: {"main_metric": metric, "main_score": result.dev, "family": "own"}}
    if test_name is not None and result.test is not None:
        card.add_dataset(test_name, role="adapt test (reported, not used for selection)")
        tasks[test_name] = {"main_metric": result.test_metric or metric, "main_score": result.test, "family": "own"}
    card.add_evaluation({"tasks": tasks})
    encoder.save(target, overwrite=True)
    return target
