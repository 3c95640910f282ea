"""What `adapt` reads: the domain texts, the optional labelled pairs or class-labelled texts, the dev and test
sets. Everything is read and checked before any model loads, so bad input fails at once with the file named.

Class-labelled --labelled texts (text, label) make the dev and test sets class-labelled too: a candidate is
scored by the accuracy of a logistic-regression head fitted on its vectors of the labelled texts
(evaluation/own/classes.py), and the texts stand in for the domain texts when none are given."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.data.classes import ClassExample, is_classes_file, read_classes
from sentforge.support.errors import ConfigError
from sentforge.harness.labelled import Labelled, read_labelled
from sentforge.recipes.data import SentenceReading, read_examples

# Domain texts are whole texts (a question, a ticket), not split into sentences; the CLI's length filter.
READING = SentenceReading(split=False)
DATA_DIR = "data"  # OUTPUT/data: the training data that dev hygiene kept, and the meta-embeddings' fit sample


@dataclass(frozen=True)
class ClassLabelled:
    """Class-labelled --labelled texts: the file the setfit candidates train on and the dev and test heads are
    fitted on, and its (text, label) rows."""

    path: Path
    examples: list[ClassExample]


@dataclass(frozen=True)
class AdaptInputs:
    unlabelled: Path | None  # None: no --unlabelled, the class-labelled texts stand in (hygiene writes them)
    texts: list[str]
    dev_path: Path
    labelled: Labelled | None
    dev: Any  # an evaluation Task
    test: Any | None
    classes: ClassLabelled | None = None
    cross_encoder: Path | None = None  # --cross-encoder: the teacher of the augsbert candidates' silver pairs
    data_dir: Path | None = None  # OUTPUT/data, where the scored and silver pairs are written

    def labelled_pairs(self) -> list[tuple]:
        """The labelled pairs kept by dev hygiene, positives then label-0 pairs (none without labelled pairs)."""
        return [] if self.labelled is None else [*self.labelled.pairs, *self.labelled.negatives]


def read_inputs(unlabelled: str | os.PathLike | None, dev: str | os.PathLike,
                labelled: str | os.PathLike | None = None, test: str | os.PathLike | None = None) -> AdaptInputs:
    from sentforge.evaluation import load_dataset

    check_test_apart(dev, test)
    if labelled is not None and Path(labelled).is_file() and is_classes_file(labelled):
        classes = ClassLabelled(Path(labelled), read_classes(labelled, columns_argument="--labelled"))
        texts = (list(dict.fromkeys(text for text, _ in classes.examples)) if unlabelled is None
                 else read_examples("sentences", Path(unlabelled), READING))
        return AdaptInputs(None if unlabelled is None else Path(unlabelled), texts, Path(dev), None,
                           class_task(dev, "--dev", classes.path),
                           None if test is None else class_task(test, "--test", classes.path), classes)
    if unlabelled is None:
        raise ConfigError("--unlabelled: give domain texts (one per line, or a .jsonl corpus); only class-labelled "
                          "--labelled texts (text, label) stand in for them")
    texts = read_examples("sentences", Path(unlabelled), READING)
    dev_task = _pairs_task(dev, "--dev", labelled)
    test_task = None
    if test is not None:
        # Labelled-pairs test data takes its accuracy/F1 thresholds from labelled-pairs dev data.
        test_task = _pairs_task(test, "--test", labelled)
        if {dev_task.metadata.extra["kind"], test_task.metadata.extra["kind"]} == {"labelled-pairs"}:
            test_task = load_dataset(test, "labelled-pairs", dev=dev, name=test_task.name)
    return AdaptInputs(Path(unlabelled), texts, Path(dev),
                       None if labelled is None else read_labelled(Path(labelled)), dev_task, test_task)


def class_task(path: str | os.PathLike, argument: str, train: Path) -> Any:
    """The class-labelled dev or test set (`argument`: --dev or --test), scored by a head fitted on `train`."""
    from sentforge.evaluation.own.classes import ClassesTask
    from sentforge.evaluation.own.load import detect_kind

    kind = detect_kind(path)
    if kind != "classes":
        raise ConfigError(f"{argument} {path}: --labelled {train} holds class-labelled texts (text, label), so the "
                          f"candidates are scored by accuracy on class-labelled {argument[2:]} texts; {path} holds "
                          f"{kind} data")
    return ClassesTask(path, f"{argument[2:]}:{Path(path).name}", train=train)


def _pairs_task(path: str | os.PathLike, argument: str, labelled: str | os.PathLike | None) -> Any:
    """The dev or test set of a run without class-labelled --labelled texts; class-labelled data is refused when
    --labelled holds pairs (the head would be fitted on a train file beside it, not on the labels given)."""
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.own.load import detect_kind

    if labelled is not None and Path(path).is_file() and detect_kind(path) == "classes":
        raise ConfigError(f"{argument} {path}: holds class-labelled texts (text, label), but --labelled {labelled} "
                          "holds pairs; give a dev set of pairs or a ranking, or class-labelled --labelled texts")
    return load_dataset(path, name=f"{argument[2:]}:{Path(path).name}")


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
