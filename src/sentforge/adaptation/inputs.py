"""What `adapt` reads: the domain texts, the optional labelled pairs, the dev and test sets. Everything
is read and checked before any model loads, so bad input fails at once with the file named."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from sentforge.errors import ConfigError, InputFileError
from sentforge.recipes.data import SentenceReading, read_examples

# Domain texts are whole texts (a question, a ticket), not split into sentences; the CLI's length filter.
READING = SentenceReading(split=False)
DATA_DIR = "data"  # OUTPUT/data: the training data that dev hygiene kept, and the meta-embeddings' fit sample


@dataclass(frozen=True)
class Labelled:
    """The labelled pairs and what they allow.

    pairs: the positive pairs (sentence1, sentence2[, hard negative]); negatives: the (sentence1, sentence2)
    pairs labelled 0 of a file with 0/1 labels, which give the positives their hard negatives (`positives`);
    partial: (sentence1, sentence2, label or None) tuples when some rows have no label (PAUSE), else None;
    positives_file: the file that `sentforge train mnrl` reads `positives` from (the labelled file itself,
    or the pairs kept by dev hygiene; None when there are no positives).
    """

    path: Path
    pairs: list[tuple]
    partial: list[tuple] | None
    positives_file: Path | None
    negatives: list[tuple[str, str]] = field(default_factory=list)

    @cached_property
    def positives(self) -> list[tuple]:
        """The MNRL examples: (sentence1, sentence2[, hard negative]) tuples (empty when none)."""
        from sentforge.data.pairs import with_hard_negatives

        return with_hard_negatives(self.pairs, self.negatives, str(self.path)) if self.pairs else []


@dataclass(frozen=True)
class AdaptInputs:
    unlabelled: Path
    texts: list[str]
    dev_path: Path
    labelled: Labelled | None
    dev: Any  # an evaluation Task
    test: Any | None


def read_inputs(unlabelled: str | os.PathLike, dev: str | os.PathLike, labelled: str | os.PathLike | None = None,
                test: str | os.PathLike | None = None) -> AdaptInputs:
    from sentforge.evaluation import load_dataset

    check_test_apart(dev, test)
    unlabelled = Path(unlabelled)
    texts = read_examples("sentences", unlabelled, READING)
    dev_task = load_dataset(dev, name=f"dev:{Path(dev).name}")
    test_task = None
    if test is not None:
        # Labelled-pairs test data takes its accuracy/F1 thresholds from labelled-pairs dev data.
        test_task = load_dataset(test, name=f"test:{Path(test).name}")
        if {dev_task.metadata.extra["kind"], test_task.metadata.extra["kind"]} == {"labelled-pairs"}:
            test_task = load_dataset(test, "labelled-pairs", dev=dev, name=test_task.name)
    return AdaptInputs(unlabelled, texts, Path(dev), None if labelled is None else read_labelled(Path(labelled)),
                       dev_task, test_task)


def check_test_apart(dev: str | os.PathLike, test: str | os.PathLike | None) -> None:
    """Refuse a --test that is the --dev data under another spelling (a link, `..`): its score would be the
    dev score again, reported as if on data kept apart."""
    if test is None:
        return
    dev_path, test_path = Path(dev), Path(test)
    same = dev_path.resolve() == test_path.resolve() or (
        dev_path.exists() and test_path.exists() and os.path.samefile(dev_path, test_path))
    if same:
        raise ConfigError(f"--test {test} and --dev {dev} are the same data: the test score would repeat the dev "
                          "score; give a test set kept apart from dev, or no --test")


def read_labelled(path: Path, command: str = "adapt") -> Labelled:
    """Positive pairs (with an optional `negative` column), or pairs with a `label` column that may be
    empty on some rows (then PAUSE trains on them); 0/1 labels also give MNRL their label-1 pairs as
    positives and their label-0 pairs as hard negatives. `command` names the command that reads them in
    the error for a file with nothing to train on."""
    from sentforge.data.nli import read_nli_table
    from sentforge.data.pairs import NEGATIVE_LABELS, POSITIVE_LABELS, read_pairs, read_positives_and_negatives

    if not path.is_file():
        raise InputFileError(f"--labelled {path}: file not found")
    rows = read_nli_table(path)
    labels = {label for _, _, label in rows if label is not None}
    if not labels:
        return Labelled(path, read_pairs(path), None, path)
    partial = rows if any(label is None for _, _, label in rows) else None
    pairs, negatives = [], []
    if {label.lower() for label in labels} <= POSITIVE_LABELS | NEGATIVE_LABELS:
        pairs, negatives = read_positives_and_negatives(path)
    if partial is None and not pairs:
        raise ConfigError(f"--labelled {path}: every row has a class label ({', '.join(sorted(labels))}); "
                          f"{command} trains on positive pairs (no label column, or 0/1 labels) or on partially "
                          "labelled pairs (some labels empty)")
    # `sentforge train mnrl` reads the same examples from the file itself (data/pairs.py's one rule).
    return Labelled(path, pairs, partial, path if pairs else None, negatives)
