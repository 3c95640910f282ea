"""What `adapt` reads: the domain texts, the optional labelled pairs, the dev and test sets. Everything
is read and checked before any model loads, so bad input fails at once with the file named."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.support.errors import ConfigError
from sentforge.harness.labelled import Labelled, read_labelled
from sentforge.recipes.data import SentenceReading, read_examples

# Domain texts are whole texts (a question, a ticket), not split into sentences; the CLI's length filter.
READING = SentenceReading(split=False)
DATA_DIR = "data"  # OUTPUT/data: the training data that dev hygiene kept, and the meta-embeddings' fit sample


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
