"""The chosen model handed over as OUTPUT/model: an encoder with a model card that records the choice and its
scores, a meta-embedding directory as it is, or a classifier with its head fitted again on the chosen encoder."""

from __future__ import annotations

import shutil
from pathlib import Path

from sentforge.adaptation.result import CandidateResult, MetaResult, load_candidate
from sentforge.data.classes import ClassExample
from sentforge.interface.model_card import display_name
from sentforge.support.io import atomic_dir
from sentforge.support.output_guard import MARKER

MODEL_DIR = "model"


def write_selected(output: Path, name: str, result: CandidateResult, start_result: CandidateResult, metric: str,
                   dev_name: str, test_name: str | None, candidates: int,
                   head: tuple[list[ClassExample], int] | None = None) -> Path:
    """Save the chosen model as OUTPUT/model; an encoder's card records the selection and the scores
    (a meta-embedding directory has no card: report.md says what it is). `head`: (the class-labelled texts,
    the seed) of the logistic-regression head that scored the candidates on dev, fitted again on the chosen
    encoder's vectors and saved with it: OUTPUT/model is then a classifier (classification/)."""
    target = output / MODEL_DIR
    if isinstance(result, MetaResult):
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
    if head is not None:
        from sentforge.classification.classifier import SentenceClassifier

        encoder = SentenceClassifier.fit(encoder, *head)
    encoder.save(target, overwrite=True)
    return target
