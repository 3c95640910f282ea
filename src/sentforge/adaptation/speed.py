"""What a candidate costs to run: its encode speed on the user's texts on this machine, its parameters, its
vector dimension and how many encoders it runs (a meta-embedding runs all its members).

The models are timed together, interleaved: after a warm-up batch each, every round times one pass of each
model over the same texts (the order reversed every other round: A B C, C B A, ...), ROUNDS rounds, so that
what else the machine does falls on all of them alike rather than on whichever model was timed during it
(timed one after the other on a busy machine, a start model gave 110.6 texts/s and the same model plus a Dense
layer 36.7). A model's speed is the median of its rounds, with the interquartile range and the range beside
it. Two speeds whose interquartile ranges overlap are not told apart (`told_apart`): the front and the speed
bound say so rather than rank them by noise.

The measurement has a time of its own, planned within the budget (planning.py): the passes hold as many of the
sample's texts (SPEED_SAMPLE, a seeded sample of the dev and unlabelled texts) as ROUNDS rounds fit in it, at
the cost per text each model's warm-up took, at least MIN_PASS_TEXTS; rounds past MIN_ROUNDS stop when the next
would not fit. Candidates of one architecture (the same parameters, vector dimension and encoders: a start model
and the candidates trained from it) run the same computation, so the first of them is timed and the others take
its speed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError

logger = logging.getLogger(__name__)

SPEED_SAMPLE = 512  # the most texts a timed pass encodes
ROUNDS = 5  # interleaved rounds: every model encodes the pass's texts once in each
MIN_ROUNDS = 3  # rounds run whatever the time left: a median and a spread need them
MIN_PASS_TEXTS = 8  # the fewest texts of a timed pass, so that a starved machine still ends in time
TIMED_PASSES = 2  # check_speed_bound: the faster of two passes
WARM_UP_TEXTS = 16
COST_KEYS = ("encoders", "parameters", "dim")


@dataclass(frozen=True)
class ModelCost:
    """What a model runs to encode a text: its parameters (None when a member does not expose them), its vector
    dimension and its encoders."""

    parameters: int | None
    dim: int
    encoders: int


@dataclass(frozen=True)
class SpeedRecord(ModelCost):
    """A candidate's cost to run (`measure`): texts per second (the median of its rounds, with their
    interquartile range and range, and how many), the texts of a pass, and `same_as`, the candidate of the same
    architecture whose timing it takes. An earlier version recorded the speed and the cost alone."""

    texts_per_second: float
    texts_per_second_iqr: list[float] | None = None
    texts_per_second_range: list[float] | None = None
    rounds: int | None = None
    texts: int | None = None
    same_as: str | None = None

    def to_json(self) -> dict[str, Any]:
        values = {key: getattr(self, key) for key in _SPEED_JSON}
        return {key: value for key, value in values.items() if value is not None or key == "parameters"}

    @classmethod
    def from_json(cls, saved: dict[str, Any]) -> SpeedRecord:
        return cls(**saved)


# report.json's key order of a speed record.
_SPEED_JSON = ("texts_per_second", "texts_per_second_iqr", "texts_per_second_range", "rounds", "texts",
               *(f.name for f in fields(ModelCost)), "same_as")


def speed_sample(dev_texts: Sequence[str], unlabelled: Sequence[str], seed: int) -> list[str]:
    """A seeded sample of SPEED_SAMPLE distinct dev and unlabelled texts (all of them when there are fewer)."""
    texts = list(dict.fromkeys([*dev_texts, *unlabelled]))
    if len(texts) <= SPEED_SAMPLE:
        return texts
    keep = np.sort(np.random.default_rng(seed).choice(len(texts), SPEED_SAMPLE, replace=False))
    return [texts[i] for i in keep]


def encode_rate(model: Any, texts: list[str]) -> float:
    """Texts per second of `model.encode` on `texts`: the faster of TIMED_PASSES passes after a warm-up batch."""
    model.encode(texts[:WARM_UP_TEXTS])
    fastest = float("inf")
    for _ in range(TIMED_PASSES):
        started = time.perf_counter()
        model.encode(texts)
        fastest = min(fastest, time.perf_counter() - started)
    return len(texts) / fastest


def pass_size(seconds: float, per_text_s: Iterable[float], available: int, rounds: int = ROUNDS) -> int:
    """Texts per timed pass: as many as `rounds` rounds of every model fit in `seconds` at its cost per text, at
    least MIN_PASS_TEXTS, at most the `available` texts."""
    round_cost = sum(per_text_s)
    fitting = int(seconds / (rounds * round_cost)) if round_cost > 0 else available
    return max(min(fitting, available), min(MIN_PASS_TEXTS, available))


def pass_texts(texts: Sequence[str], size: int) -> list[str]:
    """`size` of the sample's texts, spread over it (the sample lists the dev texts before the unlabelled ones)."""
    if size >= len(texts):
        return list(texts)
    return [texts[i] for i in np.linspace(0, len(texts) - 1, size).round().astype(int)]


def interleaved_rates(models: dict[str, Any], texts: Sequence[str], seconds: float,
                      clock: Callable[[], float] = time.perf_counter) -> tuple[dict[str, list[float]], int]:
    """({name: texts per second of each round}, the texts of a pass): `models` timed in interleaved rounds within
    about `seconds` (MIN_ROUNDS rounds whatever it takes)."""
    deadline = clock() + seconds
    per_text = {}
    for name, model in models.items():  # the warm-up, timed: what a text costs, which sizes the passes
        warm = list(texts[:WARM_UP_TEXTS])
        started = clock()
        model.encode(warm)
        per_text[name] = (clock() - started) / max(len(warm), 1)
    size = pass_size(deadline - clock(), per_text.values(), len(texts))
    chosen = pass_texts(texts, size)
    rates: dict[str, list[float]] = {name: [] for name in models}
    order = list(models)
    last_round = 0.0
    for index in range(ROUNDS):
        if index >= MIN_ROUNDS and clock() + last_round > deadline:
            break
        round_started = clock()
        for name in order if index % 2 == 0 else reversed(order):
            started = clock()
            models[name].encode(chosen)
            rates[name].append(size / max(clock() - started, 1e-9))
        last_round = clock() - round_started
    return rates, size


def summary(rates: Sequence[float]) -> dict[str, Any]:
    """The median texts per second of the rounds, their interquartile range and range, and how many."""
    q1, median, q3 = np.percentile(rates, [25, 50, 75])
    return {"texts_per_second": round(float(median), 1), "texts_per_second_iqr": [round(float(q1), 1),
                                                                               round(float(q3), 1)],
            "texts_per_second_range": [round(min(rates), 1), round(max(rates), 1)], "rounds": len(rates)}


def parameters(model: Any) -> int | None:
    """Parameters the model runs to encode (a meta-embedding: its members' and its method's; a pipeline
    (`cost_parts`): its models'); None when a member does not expose them (an external encoder)."""
    import torch

    from sentforge.meta.meta_encoder import MetaEncoder

    parts = model.members if isinstance(model, MetaEncoder) else getattr(model, "cost_parts", None)
    if parts is not None:
        members = [parameters(part) for part in parts]
        if None in members:
            return None
        own = model.method.parameters().values() if isinstance(model, MetaEncoder) else ()
        return sum(members) + sum(int(np.asarray(a).size) for a in own)
    if isinstance(model, torch.nn.Module):
        return sum(p.numel() for p in model.parameters())
    return None


def encoders(model: Any) -> int:
    """How many encoders run to encode a text (a meta-embedding's members, a pipeline's `cost_parts`)."""
    from sentforge.meta.meta_encoder import MetaEncoder

    parts = model.members if isinstance(model, MetaEncoder) else getattr(model, "cost_parts", None)
    return 1 if parts is None else sum(encoders(part) for part in parts)


def cost_record(model: Any) -> ModelCost:
    """The cost to run of a loaded model."""
    return ModelCost(parameters(model), int(model.dim), encoders(model))


def measure(load: Callable[[str], Any], names: Sequence[str], texts: Sequence[str], seconds: float,
            clock: Callable[[], float] = time.perf_counter) -> dict[str, SpeedRecord]:
    """{name: speed record} of the candidates `names`, `load(name)` giving each model: one model of each
    architecture timed (interleaved_rates, within about `seconds` from now, the loading included), the others
    taking its speed (`same_as`)."""
    deadline = clock() + seconds
    costs: dict[str, ModelCost] = {}
    twins: dict[str, str] = {}
    timed: dict[str, Any] = {}
    for name in names:
        model = load(name)
        costs[name] = cost_record(model)
        twin = next((other for other in timed if same_cost(costs[name], costs[other])), None)
        if twin is None:
            timed[name] = model
        else:
            twins[name] = twin
        del model
    rates, size = interleaved_rates(timed, texts, deadline - clock(), clock)
    measured = {name: {**summary(rates[name]), "texts": size} for name in timed}
    return {name: SpeedRecord(**vars(costs[name]), **measured[twins.get(name, name)], same_as=twins.get(name))
            for name in names}


def same_cost(a: ModelCost | None, b: ModelCost | None) -> bool:
    """The same encoders, parameters and dimension: the same architecture, the same cost to run."""
    return (a is not None and b is not None and a.parameters is not None
            and all(getattr(a, key) == getattr(b, key) for key in COST_KEYS))


def spread(speed: SpeedRecord) -> tuple[float, float]:
    """The interquartile range of a speed record's rounds (a record without rounds: its one value)."""
    low, high = speed.texts_per_second_iqr or (speed.texts_per_second,) * 2
    return float(low), float(high)


def told_apart(a: SpeedRecord, b: SpeedRecord) -> int:
    """1 when speed `a` is above `b` beyond the noise of the rounds (their interquartile ranges apart), -1 when
    below, 0 when they overlap: the measurement does not tell the two apart."""
    (a_low, a_high), (b_low, b_high) = spread(a), spread(b)
    if a_low > b_high:
        return 1
    if a_high < b_low:
        return -1
    return 0


def within_noise_of_bound(speeds: dict[str, SpeedRecord], bound: float | None) -> dict[str, list[float]]:
    """{name: interquartile range} of the candidates whose rounds put them on both sides of the speed bound:
    eligible or not by their median, which the noise of the measurement could have turned."""
    if bound is None:
        return {}
    return {name: list(spread(speed)) for name, speed in speeds.items()
            if spread(speed)[0] <= bound <= spread(speed)[1] and spread(speed)[0] < spread(speed)[1]}


def check_speed_bound(models: Sequence[str], texts: list[str], bound: float | None, device: str | None,
                      outrun: bool = False) -> None:
    """Refuse a --min-texts-per-second that no start model reaches here: every candidate runs one of them
    (or several, for a meta-embedding), so none would be eligible; unless `outrun`: a chosen candidate (the
    static model) may encode faster than any start model."""
    from sentforge.loading import load

    if bound is None:
        return
    if not bound > 0:
        raise ConfigError(f"--min-texts-per-second must be positive, got {bound}")
    if outrun:
        return
    rates = {}
    for spec in models:
        rates[spec] = encode_rate(load(spec, device=device), texts)
        if rates[spec] >= bound:
            return
    measured = ", ".join(f"{spec}: {rate:.1f}" for spec, rate in rates.items())
    raise ConfigError(f"--min-texts-per-second {bound:g}: no start model encodes that fast on this machine "
                      f"(texts per second on {len(texts)} of your texts: {measured}); lower the bound or add a "
                      "faster --model")
