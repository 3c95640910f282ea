"""What a training recipe is: the values that recipes/methods.py, pause.py, distillation.py and setfit.py declare and
that recipes/registry.py collects.

A recipe says what a method trains on (`data`), which pooling its paper uses, the TrainingConfig
values of its paper (`training`), its own options (a dataclass whose defaults are the paper's), and
how it turns a start encoder and the examples into an objective (`build`). The engine that runs it
is training/; the run directory it writes is recipes/run_dir.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from sentforge.support.errors import ConfigError

# What a recipe's examples are; recipes/data.py reads each kind from files or takes it from memory.
DATA_KINDS = {
    "sentences": "unlabelled texts",
    "pairs": "(sentence1, sentence2[, hard negative]) tuples",
    "scored pairs": "(sentence1, sentence2, score) tuples",
    "labelled pairs": "(sentence1, sentence2, label or None) tuples",
    "classes": "(text, class) tuples",
    "margin triples": "(query, positive, negative, teacher's margin) tuples",
}
# The command-line option that names the data files of each kind, and its help.
DATA_OPTIONS = {
    "sentences": ("corpus", "Sentences: .txt, .jsonl, NLTK .zip, a folder of those; other files: one sentence per "
                            "line. Repeat for several."),
    "pairs": ("corpus", "A .tsv/.csv/.jsonl pair file (sentence1, sentence2[, negative])."),
    "scored pairs": ("corpus", "A .tsv/.csv/.jsonl pair file (sentence1, sentence2, score)."),
    "labelled pairs": ("pairs", "Pair data, repeat for several: .csv/.tsv/.jsonl (sentence1, sentence2, label or "
                                "empty), a SentEval SNLI directory, SICK_*.txt, GLUE RTE/QNLI .tsv, or a .txt "
                                "positive-only list (sentence1<TAB>sentence2)."),
    "classes": ("corpus", "A .tsv/.csv/.jsonl file of class-labelled texts (text or sentence, label)."),
    "margin triples": ("corpus", "A .jsonl/.tsv/.csv file of (query, positive, negative, margin) rows: the margin "
                                 "is a teacher's score of (query, positive) minus its score of (query, negative)."),
}


@dataclass
class Plan:
    """What a recipe's `build` returns: the objective the Trainer optimises and what it trains on.

    examples: the Trainer's data (usually the examples read; BERT-flow: their vectors).
    batch_sampler: fixed batches instead of random ones (see training/batch_order.py).
    training: TrainingConfig values the data decides (e.g. a schedule that depends on the rate).
    result: the trained encoder once the Trainer is done (default: the encoder given to `build`).
    summary: entries this method adds to the run summary.
    """

    objective: Any
    examples: Sequence[Any]
    batch_sampler: Any = None
    training: dict[str, Any] = field(default_factory=dict)
    result: Callable[[], Any] | None = None
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BuildContext:
    """What `build` may need beyond the encoder and the examples."""

    model: str  # the start model's spec (a directory, short name or hub id)
    seed: int
    training: Mapping[str, Any]  # the TrainingConfig values of this run (steps or epochs, batch_size, lr, ...)


@dataclass(frozen=True)
class Recipe:
    name: str
    help: str
    data: str  # a key of DATA_KINDS
    pooling: str  # the paper's pooling (cls, mean, max), or "keep" (the start model's own)
    training: Mapping[str, Any]  # TrainingConfig values of the paper
    options: type  # a dataclass: the method's own settings, paper defaults
    build: Callable[[Any, list, Any, BuildContext], Plan]  # (encoder, examples, options, context) -> Plan

    def __post_init__(self) -> None:
        if self.data not in DATA_KINDS:
            raise ConfigError(f"recipe {self.name}: unknown data kind {self.data!r}; choose {', '.join(DATA_KINDS)}")
        if not is_dataclass(self.options):
            raise ConfigError(f"recipe {self.name}: options must be a dataclass")

    def option_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self.options))

    def training_defaults(self) -> dict[str, Any]:
        """The TrainingConfig values of the method's paper (a fresh dict)."""
        values = dict(self.training)
        if values.get("optimizer") in ("adamw", "adam"):
            # One fused kernel per step instead of a loop of element-wise passes over every parameter.
            values["optimizer_options"] = {"fused": True}
        return values
