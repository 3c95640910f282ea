"""SentGLUE (Sentence-T5, Ni et al. 2021): GLUE tasks on frozen sentence embeddings (family "sentglue").

Each sentence is encoded on its own and the vectors stay frozen. A linear model reads u for
single-sentence tasks and [u, v, |u−v|, u∗v] for pairs; it is trained on GLUE train and reported on
GLUE dev (the test labels are hidden):

- classification (CoLA, SST-2, MRPC, QNLI, RTE, WNLI, MNLI, QQP): scikit-learn logistic regression as in
  SentEval (lbfgs, defaults), C ∈ 2^-2..2^3 (SentEval's grid);
- regression (STS-B): ridge regression, alpha ∈ 10^-2..10^3.

Model selection: a seeded 10% hold-out of train (stratified for classification) picks the C (alpha)
with the best score on the task's main metric; the model is then refitted on all of train with that
value. Metrics ×100: CoLA Matthews correlation, STS-B Pearson/Spearman, MRPC and QQP accuracy and F1,
accuracy elsewhere (MNLI: matched dev, plus mismatched dev with the same model).

Files are read in the layout of GLUE's `download_glue_data.py` (`readers/glue.py`; MRPC's train/dev
rebuilt as that script does). QNLI, MNLI and QQP need their train files, which a partial copy may lack:
the runner then skips the task and names the missing file. The linear models and their selection are
`classifier.py`'s.
"""

from __future__ import annotations

from abc import abstractmethod
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sentforge.support.errors import InputFileError
from sentforge.evaluation import classifier
from sentforge.evaluation.readers import glue
from sentforge.evaluation.readers.glue import GlueSplit
from sentforge.evaluation.task import Task, TaskMetadata

GLUE = "glue/glue_data"


def features(split: GlueSplit, encoder: Any) -> np.ndarray:
    """u for single sentences, [u, v, |u−v|, u∗v] for pairs."""
    first = encoder.encode(split.first)
    return first if split.second is None else classifier.pair_features(first, encoder.encode(split.second), "full")


class SentGlueTask(Task):
    """Train on `train`, report on `dev` (and any further evaluation split, e.g. MNLI mismatched)."""

    regression: ClassVar[bool] = False
    metrics: ClassVar[tuple[str, ...]] = ("acc",)

    def __init__(self, data_dir: str | Path, seed: int = classifier.SEED, n_jobs: int = -1) -> None:
        super().__init__(data_dir, seed)
        self.n_jobs = n_jobs

    def path(self, index: int) -> Path:
        return self.data_dir / self.metadata.files[index]

    @abstractmethod
    def read(self) -> dict[str, GlueSplit]:
        """The splits: `train`, `dev`, then optional further evaluation splits."""

    @cached_property
    def data(self) -> dict[str, GlueSplit]:
        splits = self.read()
        for name, split in splits.items():
            if len(split.labels) == 0:
                raise InputFileError(f"task {self.name}: its {name} split has no examples (files: "
                                     f"{', '.join(str(self.data_dir / f) for f in self.metadata.files)})")
        return splits

    def texts(self) -> list[str]:
        return [text for split in self.data.values() for text in split.texts()]

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        train = self.data["train"]
        X, y = features(train, encoder), train.labels
        selection_metric = classifier.percent(classifier.METRICS[self.metadata.main_metric])
        if self.regression:
            model, value, held_score = classifier.holdout_ridge(X, y, selection_metric, self.seed)
            chosen = {"alpha": value}
        else:
            model, value, held_score = classifier.holdout_logistic_regression(X, y, selection_metric, self.seed,
                                                                              self.n_jobs)
            chosen = {"C": value}
        results: dict[str, Any] = {}
        for name, split in self.data.items():
            if name == "train":
                continue
            predictions = model.predict(features(split, encoder))
            suffix = "" if name == "dev" else f"_{name.removeprefix('dev_')}"
            results.update({f"{metric}{suffix}": 100 * classifier.METRICS[metric](split.labels, predictions)
                            for metric in self.metrics})
        return {**results, f"holdout_{self.metadata.main_metric}": held_score, **chosen,
                "n_train": len(y), "n_dev": len(self.data["dev"].labels)}


class _FilePerSplitTask(SentGlueTask):
    """Tasks with one file per split (`train`, `dev`; MNLI adds one), all of one format."""

    @abstractmethod
    def read_split(self, path: Path) -> GlueSplit:
        """One split's file."""

    def read(self) -> dict[str, GlueSplit]:
        return {"train": self.read_split(self.path(0)), "dev": self.read_split(self.path(1))}


def _metadata(task: str, main_metric: str, files: tuple[str, ...], description: str,
              splits: tuple[str, ...] = ("train", "dev")) -> TaskMetadata:
    return TaskMetadata(name=f"SentGLUE-{task}", family="sentglue", main_metric=main_metric,
                        description=description, files=tuple(f"{GLUE}/{task}/{f}" for f in files), splits=splits,
                        reference="GLUE (Wang et al. 2018); SentGLUE (Ni et al. 2021, Sentence-T5)")


class SentGlueCoLATask(_FilePerSplitTask):
    metadata = _metadata("CoLA", "mcc", ("train.tsv", "dev.tsv"),
                         "Grammatical acceptability (single sentence; Matthews correlation on dev).")
    metrics = ("mcc", "acc")

    def read_split(self, path: Path) -> GlueSplit:
        return glue.read_cola(path)


class SentGlueSST2Task(_FilePerSplitTask):
    metadata = _metadata("SST-2", "acc", ("train.tsv", "dev.tsv"),
                         "Sentiment, binary (single sentence; train phrases; accuracy on dev).")

    def read_split(self, path: Path) -> GlueSplit:
        return glue.read_sst2(path)


class SentGlueMRPCTask(SentGlueTask):
    metadata = _metadata("MRPC", "acc", ("msr_paraphrase_train.txt", "dev_ids.tsv"),
                         "Paraphrase (pairs; GLUE train/dev rebuilt from msr_paraphrase_train.txt and dev_ids.tsv; "
                         "accuracy and F1 on dev).")
    metrics = ("acc", "f1")

    def read(self) -> dict[str, GlueSplit]:
        return glue.read_mrpc(self.path(0), self.path(1))


class SentGlueSTSBTask(_FilePerSplitTask):
    metadata = _metadata("STS-B", "spearman", ("train.tsv", "dev.tsv"),
                         "Semantic similarity 0-5 (pairs; ridge regression; Pearson/Spearman on dev).")
    regression = True
    metrics = ("spearman", "pearson")

    def read_split(self, path: Path) -> GlueSplit:
        return glue.read_stsb(path)


class _IndexedPairTask(_FilePerSplitTask):
    """QNLI, RTE, WNLI: a header, then `index, sentence1, sentence2, label`."""

    label_names: ClassVar[tuple[str, ...]]

    def read_split(self, path: Path) -> GlueSplit:
        return glue.read_indexed_pairs(path, self.label_names)


class SentGlueQNLITask(_IndexedPairTask):
    metadata = _metadata("QNLI", "acc", ("train.tsv", "dev.tsv"),
                         "Question-answer entailment (pairs; accuracy on dev). Needs QNLI train.tsv.")
    label_names = ("entailment", "not_entailment")


class SentGlueRTETask(_IndexedPairTask):
    metadata = _metadata("RTE", "acc", ("train.tsv", "dev.tsv"), "Textual entailment (pairs; accuracy on dev).")
    label_names = ("entailment", "not_entailment")


class SentGlueWNLITask(_IndexedPairTask):
    metadata = _metadata("WNLI", "acc", ("train.tsv", "dev.tsv"),
                         "Winograd NLI (pairs; accuracy on dev; adversarial: majority class scores 56.3).")
    label_names = ("0", "1")


class SentGlueMNLITask(_FilePerSplitTask):
    metadata = _metadata("MNLI", "acc", ("train.tsv", "dev_matched.tsv", "dev_mismatched.tsv"),
                         "Multi-genre NLI, 3 classes (pairs; accuracy on matched and mismatched dev).",
                         splits=("train", "dev_matched", "dev_mismatched"))
    label_names = ("contradiction", "entailment", "neutral")

    def read_split(self, path: Path) -> GlueSplit:
        return glue.read_mnli(path, self.label_names)

    def read(self) -> dict[str, GlueSplit]:
        return {**super().read(), "dev_mismatched": self.read_split(self.path(2))}


class SentGlueQQPTask(_FilePerSplitTask):
    metadata = _metadata("QQP", "acc", ("train.tsv", "dev.tsv"),
                         "Quora duplicate questions (pairs; accuracy and F1 on dev).")
    metrics = ("acc", "f1")

    def read_split(self, path: Path) -> GlueSplit:
        return glue.read_qqp(path)


TASKS = (SentGlueCoLATask, SentGlueSST2Task, SentGlueMRPCTask, SentGlueSTSBTask, SentGlueQNLITask,
         SentGlueRTETask, SentGlueWNLITask, SentGlueMNLITask, SentGlueQQPTask)
