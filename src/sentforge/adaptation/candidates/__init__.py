"""The candidates `adapt` compares, declared one kind per file of this package (as MTEB declares its tasks):
`start.py` (the start model unchanged), `recipe.py` (a recipe trained from it), `ladder.py` (TSDAE then MNRL),
`meta.py` (meta-embeddings), `regression.py` (a recipe regressing the 0/1 labels of the labelled pairs, when
named), `augsbert.py` (a recipe trained on the labelled pairs and silver pairs a cross-encoder scored, from
the start model or the TSDAE candidate's model),
`marginmse.py` (a recipe learning a cross-encoder's score margins around the labelled pairs, from the start
model or the mnrl or TSDAE candidate's model, when named),
`distil.py` (the leading meta-embedding distilled), `static.py` (a static model distilled from the leading
encoder, when named), `pipeline.py` (the leading candidate with the --cross-encoder re-ranking its top K),
`continuation.py` (the leader trained on with the time left).
Each kind is a class (base.CandidateKind) with its result type, what the plan and the run ask of it, and its
`run`; each file declares its methods (`METHODS`, method.Method rows).

This collector gathers them: `KINDS` (every kind class) and `METHODS` (every method, in the default order, the
order of priority when the budget cannot fit them all: the start model (always), TSDAE, supervised MNRL, SetFit,
TSDAE then MNRL, TSDAE then SetFit, PAUSE, SimCSE, CT, label regression (when named), AugSBERT (by default with a
--cross-encoder; from TSDAE's model when named), MarginMSE from the start model, MNRL's and TSDAE's (when named,
with a --cross-encoder), then the
meta-embeddings of the best candidates, the re-ranking pipeline (by default with a --cross-encoder), the
distillation of the leading one, and the static model, which runs only when named).
With pairs (or no labels) the default candidates are those that do not
train on class-labelled texts; with class-labelled texts, the start model, SetFit and TSDAE then SetFit (with the
TSDAE it starts from). A new kind is a new file here.
"""

from __future__ import annotations

import importlib
import pkgutil

from sentforge.adaptation.candidates.base import CandidateKind
from sentforge.adaptation.method import Candidate, Method, continuation_of, model_keys
from sentforge.adaptation.result import CandidateResult
from sentforge.adaptation.runner import RunContext
from sentforge.support.errors import ConfigError

__all__ = ["KINDS", "METHODS", "Candidate", "CandidateKind", "Method", "check_methods", "continuation_of", "kind_of",
           "plan_candidates", "run_candidate"]


def _collect() -> tuple[tuple[type[CandidateKind], ...], dict[str, Method]]:
    """(the kind classes of this package's modules, their methods by name in priority order)."""
    kinds: list[type[CandidateKind]] = []
    methods: list[Method] = []
    for found in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{found.name}")
        kinds += [value for value in vars(module).values() if isinstance(value, type)
                  and issubclass(value, CandidateKind) and value is not CandidateKind
                  and value.__module__ == module.__name__]
        methods += getattr(module, "METHODS", ())
    named = {method.name: method for method in sorted(methods, key=lambda method: method.priority)}
    if len(named) != len(methods) or len({method.priority for method in methods}) != len(methods):
        raise RuntimeError("two candidate methods share a name or a priority")  # a declaration error, not input
    return tuple(kinds), named


KINDS, METHODS = _collect()


def kind_of(candidate: Candidate) -> CandidateKind:
    """The kind that runs the candidate."""
    return candidate.method.kind(candidate)


def run_candidate(context: RunContext, candidate: Candidate) -> CandidateResult:
    """The candidate's result; a SentforgeError (a recipe that cannot train on this data) fails it alone, but
    stops the run for a start model (a bad --model): every choice is measured against it."""
    return kind_of(candidate).run_or_fail(context)


def check_methods(names: list[str] | None, classes: bool = False, teacher: bool = False) -> list[str]:
    """The chosen method names in priority order (the default ones when None, for class-labelled --labelled texts
    when `classes`; with a --cross-encoder, when `teacher`, those that need one too); "start" is always among
    them."""
    if names is None:
        if not classes:
            return [name for name, method in METHODS.items() if method.data != "classes" and (
                method.kind.by_default or (teacher and method.data in ("silver", "teacher") and not method.after))]
        names = [name for name, method in METHODS.items() if method.data == "classes"]
        names += [METHODS[name].after for name in names if METHODS[name].after]
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
                    has_classes: bool = False, has_teacher: bool = False, has_negatives: bool = False
                    ) -> tuple[list[Candidate], list[tuple[Candidate, str]]]:
    """(the candidates to run, in order; (candidate, why it is left out) for the data-less ones and, without a
    --cross-encoder (`has_teacher`), those that need one). `has_negatives`: label-0 pairs beside the positives."""
    keys = model_keys(models)
    available = {"positives": has_positives, "partial": has_partial, "classes": has_classes, "unlabelled": True,
                 "scored": has_positives and has_negatives, "silver": has_positives and has_teacher,
                 "margins": has_positives and has_teacher,
                 "teacher": has_teacher, None: True}
    why = {"positives": "no labelled positive pairs (--labelled)", "partial": "no partially labelled pairs "
           "(--labelled with some labels empty)", "classes": "no class-labelled texts (--labelled with text and "
           "label columns)", "scored": "no pairs labelled 1 and 0 (--labelled with a 0/1 label column)",
           "silver": "no labelled positive pairs (--labelled)" if has_teacher else "no trained cross-encoder "
           "(--cross-encoder) to score its silver pairs",
           "margins": "no labelled positive pairs (--labelled)" if has_teacher else "no trained cross-encoder "
           "(--cross-encoder) to score its margins", "teacher": "no trained cross-encoder (--cross-encoder) to "
           "re-rank with"}
    planned, left_out = [], []
    for name in methods:
        method = METHODS[name]
        if not method.kind.per_model:
            candidate = Candidate(name, method, None, None)
            if available[method.data]:
                planned.append(candidate)
            else:
                left_out.append((candidate, why[method.data]))
            continue
        for model, key in zip(models, keys):
            candidate = Candidate(f"{key}.{name}", method, model, key)
            if available[method.data]:
                planned.append(candidate)
            else:
                left_out.append((candidate, why[method.data]))
    return planned, left_out
