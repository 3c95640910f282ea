"""Choosing the model: the selection rules (the front is front.py's; OUTPUT/model, handover.py's).

Only candidates that encode at least `min_texts_per_second` texts per second on the run's texts and
device are eligible (all of them without a bound); the best eligible start model is the reference. Two
rules:

"labels-first" (the default) is "simplest" with evidence before simplicity: among the candidates whose dev score
the leader's does not significantly exceed (the paired interval of leader − candidate contains 0), one that learnt
from the user's labelled pairs or class-labelled texts (mnrl, tsdae+mnrl, pause, setfit, tsdae+setfit, a
meta-embedding or distillation with such a member, a continuation of one) is preferred to one that learnt from
unlabelled text alone (tsdae, simcse, ct); between candidates of the same kind of signal, simplest's preferences
apply. Why: 43 dev questions cannot tell these candidates apart, so the tie-break decides, and in every recorded run
on held-out data the candidates trained on the labels held up better than the unsupervised ones (docs/adapt.md,
"Selection"), where the number of training stages says nothing about new data.

Under every rule but "best", a candidate that racing stopped as significantly below another candidate is never
chosen in that one's place through an earlier checkpoint's dev score: it stays out of the tie-break.

"simplest" is "significant" with one more way to be simpler: between candidates that cost the same
to run (one architecture), the one made in fewer training stages (`mnrl` against `tsdae+mnrl`, the leader against
its continuation) replaces the leader when the leader's advantage over it is not significant, as a cheaper one
does. A candidate made in more stages was chosen among more checkpoints (every rung of the TSDAE ladder, every
evaluation of each), so its best dev score is the more optimistic one; preferring the simpler model within the
noise of the best is the one-standard-error rule.

"significant". The gate: a candidate is considered only when the lower bound of the 95 %
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

A continuation (the leader trained on with the time left, planning.py) passes the gate only when its paired dev
gain over the candidate it continues lies above 0 too: it costs the same to run and has one more schedule of
checkpoints to be chosen among, so without that a tie on dev would go to it by noise.

"best": the highest dev score, never below the reference start model's (a start model wins ties).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sentforge.adaptation.result import CandidateResult, TrainedResult, best_start
from sentforge.adaptation.speed import COST_KEYS, SpeedRecord, same_cost
from sentforge.support.errors import ConfigError
from sentforge.evaluation.paired import ItemScores, PairedInterval
from sentforge.harness.dev_scores import CONFIDENCE, paired_gain

Rule = Literal["labels-first", "simplest", "significant", "cross-fitted", "best"]
RULES: tuple[Rule, ...] = ("labels-first", "simplest", "significant", "cross-fitted", "best")
DEFAULT_RULE: Rule = "labels-first"
LABELS_REASON = "learnt from the labelled pairs"
# Timings on a shared machine move by some per cent between passes: between models that differ in more
# than one way (more parameters but smaller vectors), a faster encode counts only from this ratio on.
SPEED_MARGIN = 1.2


@dataclass(frozen=True)
class Comparison:
    """The leader's paired dev advantage over a gated candidate (leader − candidate), and why that candidate
    costs less (None when it does not: to run, or with the same cost to run, in training stages) and whether
    the two cost the same to run."""

    candidate: str
    interval: PairedInterval
    cheaper: str | None
    same_cost: bool

    def to_json(self) -> dict[str, Any]:
        return {"candidate": self.candidate, "difference": self.interval.difference, "low": self.interval.low,
                "high": self.interval.high, "cheaper": self.cheaper, "same_cost": self.same_cost}


@dataclass(frozen=True)
class Selection:
    """The chosen candidate, the sentence that says why, the reference start model (`base`), every finished
    candidate's dev gain over it, the leader and its paired comparisons with the other gated candidates,
    and the candidates too slow for the bound (name: texts per second); with the rule and the bound, as
    report.json's "selection" holds them."""

    chosen: str
    why: str
    base: str
    gains: dict[str, PairedInterval]
    leader: str | None = None
    comparisons: list[Comparison] = field(default_factory=list)
    too_slow: dict[str, float] = field(default_factory=dict)
    rule: Rule = "best"
    min_texts_per_second: float | None = None
    continuations: dict[str, PairedInterval] = field(default_factory=dict)  # each one's gain over what it continues

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "why": self.why, "base": self.base, "leader": self.leader,
                "comparisons": [c.to_json() for c in self.comparisons],
                "min_texts_per_second": self.min_texts_per_second, "too_slow": self.too_slow,
                **({"continuations": {name: gain.to_json() for name, gain in self.continuations.items()}}
                   if self.continuations else {})}



def check_rule(rule: str) -> str:
    if rule not in RULES:
        raise ConfigError(f"--select: unknown rule {rule!r}; choose from {', '.join(RULES)}")
    return rule


def select(results: Mapping[str, CandidateResult], start: list[str], rule: Rule = "best",
           items: Mapping[str, ItemScores] | None = None, seed: int = 0,
           min_texts_per_second: float | None = None) -> Selection:
    """Choose among the finished candidates of `results` (in run order) by `rule`; `items` holds each one's
    per-unit dev scores (for the intervals; without them, "best" alone applies and no gains are given),
    and each result its "speed" (speed.measure) when `min_texts_per_second` is set."""
    done = {name: r for name, r in results.items() if r.done}
    too_slow = {name: r.speed.texts_per_second for name, r in done.items()
                if min_texts_per_second is not None and r.speed.texts_per_second < min_texts_per_second}
    eligible = [name for name in done if name not in too_slow]
    starts = [name for name in start if name in done]
    fast_starts = [name for name in starts if name in eligible]
    base = (best_start(done, fast_starts) if fast_starts
            else max(starts, key=lambda name: done[name].speed.texts_per_second))
    # No start model meets the bound but a candidate does (a static model): the reference stays, too slow to keep.
    outrun = [name for name in eligible if not fast_starts]
    bound = _bound_sentence(too_slow, min_texts_per_second, base, bool(fast_starts), bool(outrun))
    gains = {name: paired_gain(items[base], items[name], seed) for name in done} if items is not None else {}
    if rule == "best":
        chosen = outrun[0] if outrun else base
        for name in eligible:  # in run order: an earlier candidate wins a tie between two others
            if done[name].dev > done[chosen].dev:
                chosen = name
        return Selection(chosen, bound + ("the highest dev score" if chosen != base else
                                          f"no candidate scored above {base} on dev"), base, gains, too_slow=too_slow,
                         rule=rule, min_texts_per_second=min_texts_per_second)
    # The dev score that ranks: the kept checkpoint's, or cross-fitted, the score of the items given.
    dev = {name: items[name].score() if rule == "cross-fitted" else r.dev for name, r in done.items()}
    continuations = {name: paired_gain(items[r.continues], items[name], seed) for name, r in done.items()
                     if isinstance(r, TrainedResult) and r.continues in items}
    gated = [name for name in eligible if name != base and gains[name].above_zero
             and (name not in continuations or continuations[name].above_zero)]
    if not gated and outrun:
        chosen = max(outrun, key=lambda name: dev[name])  # the first in run order on a tie
        score = "cross-fitted dev score" if rule == "cross-fitted" else "dev score"
        return Selection(chosen, bound + f"no candidate's {100 * CONFIDENCE:g} % interval of its dev gain over {base} "
                                         f"lies above 0, and {base} is too slow: {chosen} has the highest {score} "
                                         "of the candidates fast enough", base, gains, too_slow=too_slow,
                         rule=rule, min_texts_per_second=min_texts_per_second, continuations=continuations)
    if not gated:
        return Selection(base, bound + f"no candidate's {100 * CONFIDENCE:g} % interval of its dev gain over {base} "
                                       "lies above 0: the start model is kept", base, gains, too_slow=too_slow,
                         rule=rule, min_texts_per_second=min_texts_per_second, continuations=continuations)
    # Racing's verdicts stand: a candidate it stopped as significantly below another gated one is not chosen.
    raced_out = {name for name in gated if any(_raced_below(done[name], other) for other in gated if other != name)}
    leader = max([name for name in gated if name not in raced_out] or gated,
                 key=lambda name: dev[name])  # the first in run order on a tie
    costs_less = _preferred(done, rule)
    comparisons = [_compare(leader, name, done, items, seed, costs_less) for name in gated if name != leader]
    close = [c for c in comparisons if c.cheaper and not c.interval.above_zero and c.candidate not in raced_out]
    chosen = leader
    if close:
        # The ones no other close candidate undercuts (all of them should measured speeds make that circular).
        cheapest = [c for c in close if not any(costs_less(o.candidate, c.candidate) for o in close)] or close
        chosen = max(cheapest, key=lambda c: dev[c.candidate]).candidate
    score = "cross-fitted dev score" if rule == "cross-fitted" else "dev score"
    why = (f"{bound}{_decided(chosen, leader, costs_less)}; {len(gated)} candidate(s) gain significantly over "
           f"{base} (the lower bound of the {100 * CONFIDENCE:g} % interval above 0); the highest {score} among "
           f"them is {leader}'s ({dev[leader]:.2f})")
    if comparisons:
        why += "; paired with the others: " + "; ".join(_verdict(leader, c, chosen, costs_less, score, raced_out)
                                                        for c in comparisons)
    return Selection(chosen, why, base, gains, leader, comparisons, too_slow, rule, min_texts_per_second,
                     continuations)


def _decided(chosen: str, leader: str, preferred: Callable[[str, str], str | None]) -> str:
    """The one sentence that says what decided: the dev leader, or why a candidate within its noise replaced it."""
    if chosen == leader:
        return f"{chosen} is chosen: the highest dev score among the candidates that gain significantly"
    reason = preferred(chosen, leader)
    because = (f"{chosen} {reason} and {leader} did not" if reason == LABELS_REASON
               else f"{chosen} costs less ({reason})")
    return f"{chosen} is chosen over the dev leader {leader}, which is not significantly better: {because}"


def _preferred(done: dict[str, CandidateResult], rule: Rule) -> Callable[[str, str], str | None]:
    """Why candidate `a` is preferred to `b` within the noise of the dev scores, or None: under "labels-first",
    learning from the labels where `b` did not, else (and between candidates of the same signal) simplest's
    reasons; under "simplest", costing less to run or fewer training stages; otherwise costing less to run."""
    costs_less = _costs_less(done, by_stages=rule in ("simplest", "labels-first"))
    if rule != "labels-first":
        return costs_less

    def preferred(a: str, b: str) -> str | None:
        mine, theirs = learns_from_labels(done, a), learns_from_labels(done, b)
        if mine != theirs:
            return LABELS_REASON if mine else None
        return costs_less(a, b)
    return preferred


def learns_from_labels(results: Mapping[str, CandidateResult], name: str) -> bool:
    """Whether the candidate's model learnt from the labelled pairs: its method trains on them (silver pairs
    include them), or it combines, distils (into a transformer or a static model), continues or re-ranks (the first
    stage of a pipeline) a candidate that did."""
    from sentforge.adaptation.candidates import METHODS

    result = results[name]
    method = METHODS.get(result.method)
    if method is not None and method.data in ("positives", "partial", "classes", "scored", "silver", "margins"):
        return True
    linked = [*(getattr(result, "members", None) or ()), getattr(result, "member", None),
              getattr(result, "continues", None), getattr(result, "distilled_from", None),
              getattr(result, "first_stage", None)]
    return any(other in results and other != name and learns_from_labels(results, other) for other in linked)


def _raced_below(result: CandidateResult, other: str) -> bool:
    """Racing stopped the candidate as significantly below `other` (or below the candidate `other` continues)."""
    from sentforge.adaptation.method import CONTINUED

    race = getattr(result, "race", None)
    return (race is not None and race.reason == "below the leader"
            and other in (race.against, f"{race.against}.{CONTINUED}"))


def _costs_less(done: dict[str, CandidateResult], by_stages: bool) -> Callable[[str, str], str | None]:
    """Why candidate `a` costs less than `b`, or None: to run (cheaper), or with `by_stages` and the same cost to
    run, in fewer training stages."""
    def costs_less(a: str, b: str) -> str | None:
        reason = cheaper(done[a].speed, done[b].speed)
        if reason or not by_stages or not same_cost(done[a].speed, done[b].speed):
            return reason
        mine, theirs = training_stages(done, a), training_stages(done, b)
        return f"made in {mine} training stage{'s' if mine > 1 else ''} instead of {theirs}" if mine < theirs else None
    return costs_less


def training_stages(results: Mapping[str, CandidateResult], name: str) -> int:
    """How many training stages made the candidate: none for a start model or a meta-embedding (its members
    are other candidates), one per stage of its method (tsdae+mnrl: 2), a continuation's with the ones of
    the candidate it continues (its commands), distil's with the ones of the member it starts from. A stage is a
    command of the candidate's commands but those that resumed a run the time limit cut (`extensions`: the same
    run, from its checkpoint, to the same schedule's end)."""
    result = results[name]
    if not isinstance(result, TrainedResult):
        return 0
    if not result.commands:
        return len(result.method.split("+"))
    continued = results.get(result.continues) if result.continues else None
    resumed = (result.extensions or 0) + (getattr(continued, "extensions", None) or 0)
    own = len(result.commands) - resumed
    return own + (training_stages(results, result.member) if result.member in results else 0)


def _compare(leader: str, name: str, done: dict[str, CandidateResult], items: Mapping[str, ItemScores],
             seed: int, costs_less: Callable[[str, str], str | None]) -> Comparison:
    """The leader's paired dev advantage over `name` and how their costs compare."""
    return Comparison(name, paired_gain(items[name], items[leader], seed), costs_less(name, leader),
                      same_cost(done[name].speed, done[leader].speed))


def _verdict(leader: str, comparison: Comparison, chosen: str, costs_less: Callable[[str, str], str | None],
             score: str = "dev score", raced_out: set[str] = frozenset()) -> str:
    name, interval = comparison.candidate, comparison.interval
    text = f"{leader}: {interval.difference:+.2f} [{interval.low:+.2f}, {interval.high:+.2f}] over {name}; "
    if comparison.cheaper:
        if comparison.cheaper == LABELS_REASON:
            cost = f"{name} {LABELS_REASON} and {leader} did not"
        else:
            cost = (f"{name} costs the same to run, {comparison.cheaper}" if comparison.same_cost
                    else f"{name} costs less to run ({comparison.cheaper})")
        if name in raced_out and not interval.above_zero:
            return text + cost + f", but racing stopped it as significantly below {leader}: it is not chosen"
        if interval.above_zero:
            return text + cost + f", but {leader} is significantly better"
        if name == chosen:
            return text + cost + " and the difference is within the interval: it is chosen"
        preferred = costs_less(chosen, name)
        why_not = (f"{chosen} {LABELS_REASON}" if preferred == LABELS_REASON
                   else f"{chosen} costs less still" if preferred else f"{chosen}, as cheap, has the higher {score}")
        return text + cost + f" and the difference is within the interval, but {why_not}"
    if costs_less(leader, name) == LABELS_REASON:
        return text + f"{name} learnt from unlabelled text alone, {leader} {LABELS_REASON}"
    if comparison.same_cost:
        return text + f"same cost to run, higher {score}"
    return text + f"{name} does not cost less to run, lower {score}"


def cheaper(a: SpeedRecord | None, b: SpeedRecord | None) -> str | None:
    """Why model `a` costs less to run than model `b` (speed.measure's records), or None when it does not."""
    if a is None or b is None or same_cost(a, b):
        return None
    mine, theirs = ({key: getattr(record, key) for key in COST_KEYS} for record in (a, b))
    known = [key for key in COST_KEYS if mine[key] is not None and theirs[key] is not None]
    if len(known) == len(COST_KEYS):
        if all(mine[key] <= theirs[key] for key in known):
            return ", ".join(_fewer(key, mine[key], theirs[key]) for key in known if mine[key] < theirs[key])
        if all(mine[key] >= theirs[key] for key in known):
            return None
    ratio = a.texts_per_second / b.texts_per_second
    return f"encodes {ratio:.1f}x faster here" if ratio >= SPEED_MARGIN else None


def _fewer(key: str, mine: int, theirs: int) -> str:
    if key == "encoders":
        return f"{mine} encoder{'s' if mine > 1 else ''} instead of {theirs}"
    if key == "parameters":
        return f"fewer parameters: {mine / 1e6:.1f}M vs {theirs / 1e6:.1f}M"
    return f"smaller vectors: {mine} vs {theirs} dimensions"


def _bound_sentence(too_slow: dict[str, float], bound: float | None, base: str, fast_start: bool,
                    outrun: bool) -> str:
    """What the speed bound decided; `outrun`: no start model meets it, but a candidate does."""
    if not too_slow:
        return ""
    slow = ", ".join(f"{name} ({rate:.1f})" for name, rate in too_slow.items())
    text = f"not eligible, encoding fewer than {bound:g} texts per second here: {slow}; "
    if outrun:
        text += f"no start model is that fast: {base}, the fastest, is the reference; the choice is among the rest; "
    elif not fast_start:
        text += f"no start model is that fast: {base}, the fastest, is the reference and kept if nothing beats it; "
    return text
