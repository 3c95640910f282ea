"""SentEval transfer tasks: MR, CR, SUBJ, MPQA, SST-2, TREC and MRPC (family "transfer").

Each task reads SentEval's `data/downstream` files as the official code does (MR/CR/SUBJ/MPQA/TREC
as Latin-1, SST and MRPC as UTF-8; every line split on whitespace), sorts the samples as SentEval
does before classifying (by token count, then label: the order decides which samples the seeded
shuffled folds put together), encodes each sample as its tokens joined by single spaces, and runs
SentEval's scikit-learn logistic-regression protocol (`classifier.py`):

- MR, CR, SUBJ, MPQA: 10-fold cross-validation with an inner 10-fold CV over C ∈ 2^-2..2^3.
- SST-2: C ∈ 2^-2..2^3 chosen on dev, accuracy on test.
- TREC (6 coarse classes), MRPC: C ∈ 2^-1..2^5 by 10-fold CV on train, accuracy (MRPC also F1) on test.

MRPC: SentEval's own code classifies [|u−v|, u∗v] (`acc`, `f1`: the official numbers); the task also
reports the same protocol on [u, v, |u−v|, u∗v] (`acc_uv`, `f1_uv`), the InferSent/SentGLUE features.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import f1_score

from sentforge.evaluation import classifier
from sentforge.evaluation.classifier import pair_features
from sentforge.evaluation.readers.senteval import read_mrpc, read_sentences, read_sst_binary, read_trec
from sentforge.evaluation.task import Task, TaskMetadata

DOWNSTREAM = "senteval/downstream"


def senteval_order(*keys: Sequence[Any]) -> list[int]:
    """Indices that sort samples as SentEval does before encoding: by token count of each text column,
    then by label (the last key), keeping file order among ties (Python's sort is stable)."""
    *texts, labels = keys
    return sorted(range(len(labels)), key=lambda i: (*(len(column[i]) for column in texts), labels[i]))


def joined(tokens: list[str]) -> str:
    return " ".join(tokens)


@dataclass(frozen=True)
class Sentences:
    """Sentences (tokens joined by single spaces) with labels, in SentEval's order."""

    texts: list[str]
    labels: np.ndarray

    @classmethod
    def sorted(cls, samples: list[list[str]], labels: list[int]) -> Sentences:
        order = senteval_order(samples, labels)
        return cls([joined(samples[i]) for i in order], np.array([labels[i] for i in order]))


@dataclass(frozen=True)
class SentencePairs:
    first: list[str]
    second: list[str]
    labels: np.ndarray

    @classmethod
    def sorted(cls, first: list[list[str]], second: list[list[str]], labels: list[int]) -> SentencePairs:
        order = senteval_order(first, second, labels)
        return cls([joined(first[i]) for i in order], [joined(second[i]) for i in order],
                   np.array([labels[i] for i in order]))


class TransferTask(Task):
    """A SentEval transfer task. `kfold` is SentEval's `params.kfold` (10, the published setting);
    `n_jobs` worker processes run the folds (-1: one per core)."""

    def __init__(self, data_dir: str | Path, seed: int = classifier.SEED, kfold: int = classifier.KFOLD,
                 n_jobs: int = -1) -> None:
        super().__init__(data_dir, seed)
        self.kfold = kfold
        self.n_jobs = n_jobs

    def path(self, index: int) -> Path:
        return self.data_dir / self.metadata.files[index]


class BinaryTransferTask(TransferTask):
    """MR, CR, SUBJ, MPQA: a file of class 1 and a file of class 0; 10-fold CV with inner 10-fold CV."""

    @cached_property
    def data(self) -> Sentences:
        positive, negative = read_sentences(self.path(0)), read_sentences(self.path(1))
        return Sentences.sorted(positive + negative, [1] * len(positive) + [0] * len(negative))

    def texts(self) -> list[str]:
        return self.data.texts

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        features = encoder.encode(self.data.texts)
        result = classifier.inner_kfold(features, self.data.labels, k=self.kfold, seed=self.seed, n_jobs=self.n_jobs)
        return {"acc": result.acc, "dev_acc": result.dev_acc, "n": len(self.data.labels),
                "chosen_C": list(result.chosen_C)}


def _binary_metadata(name: str, positive: str, negative: str, description: str, reference: str) -> TaskMetadata:
    return TaskMetadata(name=name, family="transfer", main_metric="acc", description=description,
                        files=(f"{DOWNSTREAM}/{name}/{positive}", f"{DOWNSTREAM}/{name}/{negative}"),
                        splits=("10-fold CV",), reference=reference)


class SentEvalMRTask(BinaryTransferTask):
    metadata = _binary_metadata("MR", "rt-polarity.pos", "rt-polarity.neg",
                                "Movie review snippet polarity (accuracy, 10-fold CV).",
                                "Pang & Lee 2005; SentEval (Conneau & Kiela 2018)")


class SentEvalCRTask(BinaryTransferTask):
    metadata = _binary_metadata("CR", "custrev.pos", "custrev.neg",
                                "Customer product review polarity (accuracy, 10-fold CV).",
                                "Hu & Liu 2004; SentEval")


class SentEvalSUBJTask(BinaryTransferTask):
    # SentEval gives the objective sentences label 1.
    metadata = _binary_metadata("SUBJ", "subj.objective", "subj.subjective",
                                "Subjectivity of movie review sentences (accuracy, 10-fold CV).",
                                "Pang & Lee 2004; SentEval")


class SentEvalMPQATask(BinaryTransferTask):
    metadata = _binary_metadata("MPQA", "mpqa.pos", "mpqa.neg",
                                "Opinion polarity of MPQA phrases (accuracy, 10-fold CV).",
                                "Wiebe et al. 2005; SentEval")


class SentEvalSST2Task(TransferTask):
    metadata = TaskMetadata(
        name="SST2", family="transfer", main_metric="acc",
        description="Stanford Sentiment Treebank, binary (train phrases; C chosen on dev; test accuracy).",
        files=tuple(f"{DOWNSTREAM}/SST/binary/sentiment-{split}" for split in ("train", "dev", "test")),
        splits=("train", "dev", "test"), reference="Socher et al. 2013; SentEval")

    @cached_property
    def data(self) -> tuple[Sentences, Sentences, Sentences]:
        return tuple(Sentences.sorted(*read_sst_binary(self.path(i))) for i in range(3))

    def texts(self) -> list[str]:
        return [text for part in self.data for text in part.texts]

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        train, dev, test = self.data
        result = classifier.split(encoder.encode(train.texts), train.labels, encoder.encode(dev.texts), dev.labels,
                                  encoder.encode(test.texts), test.labels, seed=self.seed, n_jobs=self.n_jobs)
        return {"acc": result.acc, "dev_acc": result.dev_acc, "n_train": len(train.labels),
                "n_test": len(test.labels), "chosen_C": list(result.chosen_C)}


class SentEvalTRECTask(TransferTask):
    metadata = TaskMetadata(
        name="TREC", family="transfer", main_metric="acc",
        description="TREC question type, 6 coarse classes (C by 10-fold CV on train; test accuracy).",
        files=(f"{DOWNSTREAM}/TREC/train_5500.label", f"{DOWNSTREAM}/TREC/TREC_10.label"),
        splits=("train", "test"), reference="Li & Roth 2002; SentEval")

    @cached_property
    def data(self) -> tuple[Sentences, Sentences]:
        return Sentences.sorted(*read_trec(self.path(0))), Sentences.sorted(*read_trec(self.path(1)))

    def texts(self) -> list[str]:
        return [text for part in self.data for text in part.texts]

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        train, test = self.data
        result = classifier.kfold(encoder.encode(train.texts), train.labels, encoder.encode(test.texts),
                                  test.labels, k=self.kfold, seed=self.seed, n_jobs=self.n_jobs)
        return {"acc": result.acc, "dev_acc": result.dev_acc, "n_train": len(train.labels),
                "n_test": len(test.labels), "chosen_C": list(result.chosen_C)}


class SentEvalMRPCTask(TransferTask):
    metadata = TaskMetadata(
        name="MRPC", family="transfer", main_metric="acc",
        description="Microsoft Research Paraphrase Corpus (C by 10-fold CV on train; test accuracy and F1 on "
                    "SentEval's [|u-v|, u*v]; acc_uv/f1_uv on [u, v, |u-v|, u*v]).",
        files=(f"{DOWNSTREAM}/MRPC/msr_paraphrase_train.txt", f"{DOWNSTREAM}/MRPC/msr_paraphrase_test.txt"),
        splits=("train", "test"), reference="Dolan et al. 2004; SentEval")

    @cached_property
    def data(self) -> tuple[SentencePairs, SentencePairs]:
        return SentencePairs.sorted(*read_mrpc(self.path(0))), SentencePairs.sorted(*read_mrpc(self.path(1)))

    def texts(self) -> list[str]:
        return [text for part in self.data for text in part.first + part.second]

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        train, test = self.data
        vectors = [(encoder.encode(pairs.first), encoder.encode(pairs.second)) for pairs in (train, test)]
        metrics: dict[str, Any] = {}
        for kind, suffix in (("senteval", ""), ("full", "_uv")):
            (train_features, test_features) = (pair_features(u, v, kind) for u, v in vectors)
            result = classifier.kfold(train_features, train.labels, test_features, test.labels, k=self.kfold,
                                      seed=self.seed, n_jobs=self.n_jobs)
            metrics |= {f"acc{suffix}": result.acc,
                        f"f1{suffix}": round(100 * float(f1_score(test.labels, result.predictions)), 2),
                        f"dev_acc{suffix}": result.dev_acc, f"chosen_C{suffix}": list(result.chosen_C)}
        return metrics | {"n_train": len(train.labels), "n_test": len(test.labels)}


TASKS = (SentEvalMRTask, SentEvalCRTask, SentEvalSUBJTask, SentEvalMPQATask, SentEvalSST2Task, SentEvalTRECTask,
         SentEvalMRPCTask)
