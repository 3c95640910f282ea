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

Files are read in the layout of GLUE's `download_glue_data.py`, so a full GLUE download works as is.
MRPC's train/dev are rebuilt as that script does, from `msr_paraphrase_train.txt` minus/plus the pairs
in `dev_ids.tsv` (3,668 / 408 pairs; a `train.tsv` written by the script can lack one pair). QNLI,
MNLI and QQP need their train files, which a partial copy may lack: the runner then skips the task and
names the missing file. Malformed lines raise InputFileError naming file and line, except QQP's rows
with a wrong field count, which GLUE's reference processors skip (its train file has such rows): they
are skipped with a warning.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import pearsonr, spearmanr
from sklearn.linear_model import Ridge
from sklearn.metrics import f1_score, matthews_corrcoef
from sklearn.model_selection import train_test_split

from sentforge.errors import InputFileError
from sentforge.evaluation import classifier
from sentforge.evaluation.classifier import pair_features
from sentforge.evaluation.readers.files import numbered_lines
from sentforge.evaluation.task import Task, TaskMetadata, register_task

logger = logging.getLogger(__name__)

GLUE = "glue/glue_data"
HOLDOUT_FRACTION = 0.1
LOGREG_C: tuple[float, ...] = classifier.SPLIT_REGS  # 2^-2..2^3, SentEval's grid
RIDGE_ALPHAS: tuple[float, ...] = tuple(10.0 ** t for t in range(-2, 4))

Metric = Callable[[np.ndarray, np.ndarray], float]


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return 100 * float(np.mean(y_true == y_pred))


def matthews(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return 100 * float(matthews_corrcoef(y_true, y_pred))


def f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return 100 * float(f1_score(y_true, y_pred))


def pearson(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return 100 * float(pearsonr(y_true, y_pred)[0]) if np.ptp(y_pred) > 0 else 0.0


def spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return 100 * float(spearmanr(y_true, y_pred)[0]) if np.ptp(y_pred) > 0 else 0.0


METRICS: dict[str, Metric] = {"acc": accuracy, "mcc": matthews, "f1": f1, "pearson": pearson, "spearman": spearman}


@dataclass(frozen=True)
class GlueSplit:
    """One split: sentences (second is None for single-sentence tasks) and labels (class ids or scores)."""

    first: list[str]
    second: list[str] | None
    labels: np.ndarray

    def texts(self) -> list[str]:
        return self.first + (self.second or [])

    def features(self, encoder: Any) -> np.ndarray:
        first = encoder.encode(self.first)
        return first if self.second is None else pair_features(first, encoder.encode(self.second), "full")


def tsv_rows(path: Path, header: bool) -> list[tuple[int, list[str]]]:
    """(line number, tab-separated fields) of a UTF-8 GLUE file, no quoting (as GLUE's csv.QUOTE_NONE)."""
    rows = [(number, line.split("\t")) for number, line in numbered_lines(path, "utf-8")]
    return rows[1:] if header else rows


def malformed(path: Path, number: int, expected: str, fields: list[str]) -> InputFileError:
    return InputFileError(f"{path}, line {number}: expected {expected}, got {chr(9).join(fields)[:80]!r}")


def label_id(value: str, labels: tuple[str, ...], path: Path, number: int, fields: list[str]) -> int:
    if value not in labels:
        raise malformed(path, number, f"a label in {{{', '.join(labels)}}}", fields)
    return labels.index(value)


def holdout(labels: np.ndarray, seed: int, stratify: bool) -> tuple[np.ndarray, np.ndarray]:
    """Seeded train / hold-out indices (hold-out = 10% of train)."""
    return train_test_split(np.arange(len(labels)), test_size=HOLDOUT_FRACTION, random_state=seed,
                            stratify=labels if stratify else None)


def select_logistic_regression(X: np.ndarray, y: np.ndarray, metric: Metric, seed: int,
                               n_jobs: int = -1) -> tuple[Any, float, float]:
    """C by hold-out score (first best), then the model refitted on all of (X, y): (model, C, hold-out score)."""
    fit_rows, held = holdout(y, seed, stratify=True)
    models = Parallel(n_jobs=n_jobs)(delayed(classifier.fit)(X[fit_rows], y[fit_rows], C, seed) for C in LOGREG_C)
    scores = [metric(y[held], model.predict(X[held])) for model in models]
    best = int(np.argmax(scores))
    return classifier.fit(X, y, LOGREG_C[best], seed), LOGREG_C[best], scores[best]


def select_ridge(X: np.ndarray, y: np.ndarray, metric: Metric, seed: int) -> tuple[Ridge, float, float]:
    """alpha by hold-out score (first best), then ridge refitted on all of (X, y): (model, alpha, score)."""
    fit_rows, held = holdout(y, seed, stratify=False)
    scores = [metric(y[held], Ridge(alpha=alpha).fit(X[fit_rows], y[fit_rows]).predict(X[held]))
              for alpha in RIDGE_ALPHAS]
    best = int(np.argmax(scores))
    return Ridge(alpha=RIDGE_ALPHAS[best]).fit(X, y), RIDGE_ALPHAS[best], scores[best]


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
        X, y = train.features(encoder), train.labels
        selection_metric = METRICS[self.metadata.main_metric]
        if self.regression:
            model, value, held_score = select_ridge(X, y, selection_metric, self.seed)
            chosen = {"alpha": value}
        else:
            model, value, held_score = select_logistic_regression(X, y, selection_metric, self.seed, self.n_jobs)
            chosen = {"C": value}
        results: dict[str, Any] = {}
        for name, split in self.data.items():
            if name == "train":
                continue
            predictions = model.predict(split.features(encoder))
            suffix = "" if name == "dev" else f"_{name.removeprefix('dev_')}"
            results.update({f"{metric}{suffix}": METRICS[metric](split.labels, predictions)
                            for metric in self.metrics})
        return {**results, f"holdout_{self.metadata.main_metric}": held_score, **chosen,
                "n_train": len(y), "n_dev": len(self.data["dev"].labels)}


def _metadata(task: str, main_metric: str, files: tuple[str, ...], description: str,
              splits: tuple[str, ...] = ("train", "dev")) -> TaskMetadata:
    return TaskMetadata(name=f"SentGLUE-{task}", family="sentglue", main_metric=main_metric,
                        description=description, files=tuple(f"{GLUE}/{task}/{f}" for f in files), splits=splits,
                        reference="GLUE (Wang et al. 2018); SentGLUE (Ni et al. 2021, Sentence-T5)")


@register_task
class SentGlueCoLATask(SentGlueTask):
    metadata = _metadata("CoLA", "mcc", ("train.tsv", "dev.tsv"),
                         "Grammatical acceptability (single sentence; Matthews correlation on dev).")
    metrics = ("mcc", "acc")

    def _split(self, path: Path) -> GlueSplit:
        sentences, labels = [], []
        for number, fields in tsv_rows(path, header=False):  # source, label, original label, sentence
            if len(fields) != 4:
                raise malformed(path, number, "4 tab-separated fields (source, label, mark, sentence)", fields)
            labels.append(label_id(fields[1], ("0", "1"), path, number, fields))
            sentences.append(fields[3].strip())
        return GlueSplit(sentences, None, np.array(labels))

    def read(self) -> dict[str, GlueSplit]:
        return {"train": self._split(self.path(0)), "dev": self._split(self.path(1))}


@register_task
class SentGlueSST2Task(SentGlueTask):
    metadata = _metadata("SST-2", "acc", ("train.tsv", "dev.tsv"),
                         "Sentiment, binary (single sentence; train phrases; accuracy on dev).")

    def _split(self, path: Path) -> GlueSplit:
        sentences, labels = [], []
        for number, fields in tsv_rows(path, header=True):  # sentence, label
            if len(fields) != 2:
                raise malformed(path, number, "2 tab-separated fields (sentence, label)", fields)
            labels.append(label_id(fields[1], ("0", "1"), path, number, fields))
            sentences.append(fields[0].strip())
        return GlueSplit(sentences, None, np.array(labels))

    def read(self) -> dict[str, GlueSplit]:
        return {"train": self._split(self.path(0)), "dev": self._split(self.path(1))}


@register_task
class SentGlueMRPCTask(SentGlueTask):
    metadata = _metadata("MRPC", "acc", ("msr_paraphrase_train.txt", "dev_ids.tsv"),
                         "Paraphrase (pairs; GLUE train/dev rebuilt from msr_paraphrase_train.txt and dev_ids.tsv; "
                         "accuracy and F1 on dev).")
    metrics = ("acc", "f1")

    def read(self) -> dict[str, GlueSplit]:
        ids_path = self.path(1)
        dev_ids = set()
        for number, fields in tsv_rows(ids_path, header=False):
            if len(fields) != 2:
                raise malformed(ids_path, number, "2 tab-separated pair ids", fields)
            dev_ids.add((fields[0].strip(), fields[1].strip()))
        path = self.path(0)
        parts: dict[str, tuple[list[str], list[str], list[int]]] = {"train": ([], [], []), "dev": ([], [], [])}
        for number, fields in tsv_rows(path, header=True):  # Quality, #1 ID, #2 ID, #1 String, #2 String
            if len(fields) != 5:
                raise malformed(path, number, "5 tab-separated fields (Quality, #1 ID, #2 ID, #1 String, "
                                "#2 String)", fields)
            first, second, labels = parts["dev" if (fields[1], fields[2]) in dev_ids else "train"]
            labels.append(label_id(fields[0], ("0", "1"), path, number, fields))
            first.append(fields[3].strip())
            second.append(fields[4].strip())
        if not parts["dev"][2]:
            raise InputFileError(f"{ids_path}: none of its pair ids occurs in {path}")
        return {name: GlueSplit(first, second, np.array(labels)) for name, (first, second, labels) in parts.items()}


@register_task
class SentGlueSTSBTask(SentGlueTask):
    metadata = _metadata("STS-B", "spearman", ("train.tsv", "dev.tsv"),
                         "Semantic similarity 0-5 (pairs; ridge regression; Pearson/Spearman on dev).")
    regression = True
    metrics = ("spearman", "pearson")

    def _split(self, path: Path) -> GlueSplit:
        first, second, scores = [], [], []
        for number, fields in tsv_rows(path, header=True):  # ..., sentence1 (7), sentence2 (8), ..., score (last)
            try:
                score = float(fields[-1])
            except ValueError:
                score = float("nan")
            if len(fields) < 10 or not 0 <= score <= 5:
                raise malformed(path, number, "at least 10 tab-separated fields with sentence1, sentence2 in "
                                "columns 8-9 and a score in [0, 5] last", fields)
            first.append(fields[7].strip())
            second.append(fields[8].strip())
            scores.append(score)
        return GlueSplit(first, second, np.array(scores))

    def read(self) -> dict[str, GlueSplit]:
        return {"train": self._split(self.path(0)), "dev": self._split(self.path(1))}


class _IndexedPairTask(SentGlueTask):
    """QNLI, RTE, WNLI: a header, then `index, sentence1, sentence2, label`."""

    label_names: ClassVar[tuple[str, ...]]

    def _split(self, path: Path) -> GlueSplit:
        first, second, labels = [], [], []
        for number, fields in tsv_rows(path, header=True):
            if len(fields) != 4:
                raise malformed(path, number, "4 tab-separated fields (index, sentence1, sentence2, label)", fields)
            labels.append(label_id(fields[3], self.label_names, path, number, fields))
            first.append(fields[1].strip())
            second.append(fields[2].strip())
        return GlueSplit(first, second, np.array(labels))

    def read(self) -> dict[str, GlueSplit]:
        return {"train": self._split(self.path(0)), "dev": self._split(self.path(1))}


@register_task
class SentGlueQNLITask(_IndexedPairTask):
    metadata = _metadata("QNLI", "acc", ("train.tsv", "dev.tsv"),
                         "Question-answer entailment (pairs; accuracy on dev). Needs QNLI train.tsv.")
    label_names = ("entailment", "not_entailment")


@register_task
class SentGlueRTETask(_IndexedPairTask):
    metadata = _metadata("RTE", "acc", ("train.tsv", "dev.tsv"), "Textual entailment (pairs; accuracy on dev).")
    label_names = ("entailment", "not_entailment")


@register_task
class SentGlueWNLITask(_IndexedPairTask):
    metadata = _metadata("WNLI", "acc", ("train.tsv", "dev.tsv"),
                         "Winograd NLI (pairs; accuracy on dev; adversarial: majority class scores 56.3).")
    label_names = ("0", "1")


@register_task
class SentGlueMNLITask(SentGlueTask):
    metadata = _metadata("MNLI", "acc", ("train.tsv", "dev_matched.tsv", "dev_mismatched.tsv"),
                         "Multi-genre NLI, 3 classes (pairs; accuracy on matched and mismatched dev).",
                         splits=("train", "dev_matched", "dev_mismatched"))
    label_names = ("contradiction", "entailment", "neutral")

    def _split(self, path: Path) -> GlueSplit:
        first, second, labels = [], [], []
        for number, fields in tsv_rows(path, header=True):  # ..., sentence1 (8), sentence2 (9), ..., gold_label
            if len(fields) < 11:
                raise malformed(path, number, "at least 11 tab-separated fields (sentence1, sentence2 in columns "
                                "9-10, gold_label last)", fields)
            labels.append(label_id(fields[-1], self.label_names, path, number, fields))
            first.append(fields[8].strip())
            second.append(fields[9].strip())
        return GlueSplit(first, second, np.array(labels))

    def read(self) -> dict[str, GlueSplit]:
        return {"train": self._split(self.path(0)), "dev": self._split(self.path(1)),
                "dev_mismatched": self._split(self.path(2))}


@register_task
class SentGlueQQPTask(SentGlueTask):
    metadata = _metadata("QQP", "acc", ("train.tsv", "dev.tsv"),
                         "Quora duplicate questions (pairs; accuracy and F1 on dev).")
    metrics = ("acc", "f1")

    def _split(self, path: Path) -> GlueSplit:
        first, second, labels, skipped = [], [], [], []
        for number, fields in tsv_rows(path, header=True):  # id, qid1, qid2, question1, question2, is_duplicate
            if len(fields) != 6:
                skipped.append(number)
                continue
            labels.append(label_id(fields[5], ("0", "1"), path, number, fields))
            first.append(fields[3].strip())
            second.append(fields[4].strip())
        if skipped:
            logger.warning("%s: skipped %d row(s) without 6 fields, as GLUE's processors do (lines %s)", path,
                           len(skipped), ", ".join(map(str, skipped[:10])) + (" …" if len(skipped) > 10 else ""))
        return GlueSplit(first, second, np.array(labels))

    def read(self) -> dict[str, GlueSplit]:
        return {"train": self._split(self.path(0)), "dev": self._split(self.path(1))}
