"""The candidates `adapt` compares, declared once: what each trains on, with which recipe, from what.

Every trained candidate is a recipe of `sentforge.recipes` run on the start model (or, for
`tsdae+mnrl`, on the TSDAE candidate's model). The default order is the order of priority when the
budget cannot fit them all: the start model (always), TSDAE, supervised MNRL, TSDAE then MNRL, PAUSE,
SimCSE, CT, then the meta-embeddings of the best candidates, and the distillation of the leading one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from sentforge.support.errors import ConfigError

Kind = Literal["start", "train", "meta", "distil"]


@dataclass(frozen=True)
class Method:
    """One kind of candidate.

    kind: "start" (the model unchanged), "train" (a recipe), "meta" (a meta-embedding) or "distil" (the
    leading meta-embedding distilled into its best member).
    recipe: the training recipe; data: what it trains on ("unlabelled", "positives" or "partial");
    after: the method whose candidate model it starts from (None: the start model).
    meta: the meta-embedding method of sentforge.meta.
    """

    name: str
    kind: Kind
    help: str
    recipe: str | None = None
    data: str | None = None
    after: str | None = None
    meta: str | None = None


METHODS = {m.name: m for m in (
    Method("start", "start", "the start model unchanged (always a candidate: adapt never returns a worse model)"),
    Method("tsdae", "train", "TSDAE (deletion 0.6, tied decoder, lr 3e-5, batch 8) on the unlabelled texts",
           recipe="tsdae", data="unlabelled"),
    Method("mnrl", "train", "supervised multiple-negatives ranking on the labelled positive pairs (hard negatives "
                            "when given)", recipe="mnrl", data="positives"),
    Method("tsdae+mnrl", "train", "MNRL on the labelled positives from the TSDAE candidate (TSDAE as domain "
                                  "pre-training)", recipe="mnrl", data="positives", after="tsdae"),
    Method("pause", "train", "PAUSE on the partially labelled pairs", recipe="pause", data="partial"),
    Method("simcse", "train", "unsupervised SimCSE on the unlabelled texts", recipe="simcse", data="unlabelled"),
    Method("ct", "train", "Contrastive Tension on the unlabelled texts", recipe="ct", data="unlabelled"),
    Method("meta-concat", "meta", "concatenation of the best candidates' vectors (and the --member encoders)",
           meta="concat"),
    Method("meta-gcca", "meta", "GCCA of the best candidates (and the --member encoders), fitted on the unlabelled "
                                "texts", meta="gcca"),
    Method("distil", "distil", "when a meta-embedding leads on dev: its best member plus a Dense layer trained by MSE "
                               "to the meta vectors on the unlabelled texts (one sentence-transformers model)",
           recipe="distil", data="unlabelled"),
)}


@dataclass(frozen=True)
class Candidate:
    name: str  # unique, also the folder of its run under OUTPUT/runs/
    method: Method
    model: str | None  # the start model's spec (None for meta-embeddings)
    model_key: str | None  # the start model's short name in candidate names

    @property
    def after(self) -> str | None:
        """The name of the candidate this one starts from."""
        return None if self.method.after is None else f"{self.model_key}.{self.method.after}"


CONTINUED = "continued"  # the suffix of a continuation's name


def continuation_of(candidate: Candidate) -> Candidate:
    """The candidate trained on from `candidate`'s kept model with the time left (planning.py, step 7): the same
    recipe, data and settings (its method's overrides), starting from that model instead of a start model."""
    return Candidate(f"{candidate.name}.{CONTINUED}", replace(candidate.method, after=None), candidate.model,
                     candidate.model_key)


def check_methods(names: list[str] | None) -> list[str]:
    """The chosen method names in priority order (all when None); "start" is always among them."""
    if names is None:
        return list(METHODS)
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise ConfigError(f"--candidates: unknown candidate(s) {', '.join(unknown)}; choose from {', '.join(METHODS)}")
    chosen = {"start", *names}
    for name in chosen:
        after = METHODS[name].after
        if after and after not in chosen:
            raise ConfigError(f"--candidates: {name} starts from the {after} candidate; add {after}")
    return [name for name in METHODS if name in chosen]


def plan_candidates(models: list[str], methods: list[str], has_positives: bool, has_partial: bool,
                    ) -> tuple[list[Candidate], dict[str, str]]:
    """(the candidates to run, in order; {candidate name: why it is left out} for the data-less ones)."""
    keys = model_keys(models)
    available = {"positives": has_positives, "partial": has_partial, "unlabelled": True, None: True}
    why = {"positives": "no labelled positive pairs (--labelled)", "partial": "no partially labelled pairs "
           "(--labelled with some labels empty)"}
    planned, left_out = [], {}
    for name in methods:
        method = METHODS[name]
        if method.kind in ("meta", "distil"):
            planned.append(Candidate(name, method, None, None))
            continue
        for model, key in zip(models, keys):
            candidate = Candidate(f"{key}.{name}", method, model, key)
            if available[method.data]:
                planned.append(candidate)
            else:
                left_out[candidate.name] = why[method.data]
    return planned, left_out


def model_keys(models: list[str]) -> list[str]:
    """A short, file-name-safe name per start model (its last path part), numbered when two collide."""
    from sentforge.interface.model_card import display_name

    keys = ["".join(c if c.isalnum() or c in "-_" else "-" for c in display_name(str(m))) for m in models]
    return [f"{key}-{i + 1}" if keys.count(key) > 1 else key for i, key in enumerate(keys)]
