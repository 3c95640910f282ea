"""What a candidate costs to run: its encode speed on the user's texts on this machine, its parameters, its
vector dimension and how many encoders it runs (a meta-embedding runs all its members).

Every candidate encodes the same seeded sample of the dev and unlabelled texts (SPEED_SAMPLE), on the
device of the run, after a warm-up batch; the faster of two timed passes counts (the slower one holds
more of what else the machine was doing). Candidates of one architecture (the same parameters, vector
dimension and encoders: a start model and the candidates trained from it) run the same computation, so
the first of them is timed and the others take its speed: timed apart, they would differ by the
machine's load alone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from sentforge.errors import ConfigError

logger = logging.getLogger(__name__)

SPEED_SAMPLE = 512  # texts every candidate encodes to measure its speed
TIMED_PASSES = 2
WARM_UP_TEXTS = 32
COST_KEYS = ("encoders", "parameters", "dim")


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


def parameters(model: Any) -> int | None:
    """Parameters the model runs to encode (a meta-embedding: its members' and its method's); None when
    a member does not expose them (an external encoder)."""
    import torch

    from sentforge.meta.meta_encoder import MetaEncoder

    if isinstance(model, MetaEncoder):
        members = [parameters(member) for member in model.members]
        if None in members:
            return None
        return sum(members) + sum(int(np.asarray(a).size) for a in model.method.parameters().values())
    if isinstance(model, torch.nn.Module):
        return sum(p.numel() for p in model.parameters())
    return None


def encoders(model: Any) -> int:
    """How many encoders run to encode a text."""
    from sentforge.meta.meta_encoder import MetaEncoder

    return sum(encoders(member) for member in model.members) if isinstance(model, MetaEncoder) else 1


def measure(model: Any, texts: list[str], measured: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """{texts_per_second, parameters, dim, encoders} of a loaded model on `texts`; a model of the same
    architecture as one timed in `measured` (name: record) takes its speed, and `same_as` its name."""
    record = {"parameters": parameters(model), "dim": int(model.dim), "encoders": encoders(model)}
    twin = next((name for name, other in measured.items() if "same_as" not in other and same_cost(record, other)),
                None)
    if twin is not None:
        return {"texts_per_second": measured[twin]["texts_per_second"], **record, "same_as": twin}
    return {"texts_per_second": round(encode_rate(model, texts), 1), **record}


def same_cost(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """The same encoders, parameters and dimension: the same architecture, the same cost to run."""
    return (a is not None and b is not None and a["parameters"] is not None
            and all(a[key] == b[key] for key in COST_KEYS))


def check_speed_bound(models: Sequence[str], texts: list[str], bound: float | None, device: str | None) -> None:
    """Refuse a --min-texts-per-second that no start model reaches here: every candidate runs one of them
    (or several, for a meta-embedding), so none would be eligible."""
    from sentforge.loading import load

    if bound is None:
        return
    if not bound > 0:
        raise ConfigError(f"--min-texts-per-second must be positive, got {bound}")
    rates = {}
    for spec in models:
        rates[spec] = encode_rate(load(spec, device=device), texts)
        if rates[spec] >= bound:
            return
    measured = ", ".join(f"{spec}: {rate:.1f}" for spec, rate in rates.items())
    raise ConfigError(f"--min-texts-per-second {bound:g}: no start model encodes that fast on this machine "
                      f"(texts per second on {len(texts)} of your texts: {measured}); lower the bound or add a "
                      "faster --model")
