"""Sentence pairs from a user's file: scored pairs (STS-style) and labelled pairs (duplicate / paraphrase).

A file is a .tsv/.csv (header row) or .jsonl (one object per line) with `sentence1`, `sentence2` and
either `score` (any finite number) or `label` (0 or 1). Scored pairs report Spearman and Pearson (×100) of
the cosine similarity with the score. Labelled pairs report the average precision (×100) of the cosine
similarity, and accuracy and F1 (×100) of "paraphrase when cosine >= threshold". Each threshold is the
best one on a dev file when one is given (`threshold_source: dev`; the evaluated file's own optimum is
then reported too, as `*_test_optimal`), else the best one on the evaluated file itself
(`threshold_source: self`, an optimistic figure, as MTEB's pair classification reports it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import average_precision_score

from sentforge.data.pairs import read_pairs
from sentforge.support.errors import InputFileError
from sentforge.evaluation.paired import ItemScores
from sentforge.evaluation.own.base import (
    OwnDataTask,
    distinct_rows,
    records,
    require_fields,
    text_field,
)
from sentforge.evaluation.readers.sts import STSPairs
from sentforge.evaluation.readers.useb import LabelledPairs
from sentforge.evaluation.scoring import pair_scores, sts_scores
from sentforge.evaluation.similarity import is_lexical, pair_cosines

PAIR_FIELDS = ("sentence1", "sentence2")
LABELS = {"0": 0, "1": 1}


def read_scored_pairs(path: Path) -> STSPairs:
    """The pairs and scores of a scored-pairs file, read as the STS training data is."""
    rows = [(a.strip(), b.strip(), score) for a, b, score in read_pairs(path, with_scores=True)]
    rows = [rows[i] for i in distinct_rows(path, [(*_unordered(a, b), score) for a, b, score in rows], "pair")]
    return STSPairs(str(path), [a for a, _, _ in rows], [b for _, b, _ in rows],
                    np.asarray([score for _, _, score in rows], dtype=np.float64))


def _unordered(first: str, second: str) -> tuple[str, str]:
    """A pair as a unit: its cosine is the same in either order."""
    return (first, second) if first <= second else (second, first)


def read_labelled_pairs(path: Path) -> LabelledPairs:
    first, second, labels = [], [], []
    for line_no, record in records(path):
        require_fields(path, line_no, record, (*PAIR_FIELDS, "label"))
        label = LABELS.get(str(record["label"]).strip())
        if label is None:
            raise InputFileError(f"{path}:{line_no}: label must be 0 or 1, not {record['label']!r} "
                                 "(evaluation files need a label on every pair)")
        first.append(text_field(path, line_no, record, "sentence1"))
        second.append(text_field(path, line_no, record, "sentence2"))
        labels.append(label)
    keep = distinct_rows(path, [(*_unordered(a, b), label) for a, b, label in zip(first, second, labels)], "pair")
    first, second = [first[i] for i in keep], [second[i] for i in keep]
    labels_array = np.asarray([labels[i] for i in keep], dtype=np.int64)
    if labels_array.min() == labels_array.max():
        raise InputFileError(f"{path}: every pair has label {labels[0]}; average precision and a threshold need both "
                             "0 and 1")
    return LabelledPairs(str(path), first, second, labels_array, labels_array.astype(np.float64))


def _cut_points(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scores in descending order and, at each place where the score changes (and at the end), the number of
    positives and negatives at or above it and the threshold between it and the next lower score."""
    order = np.argsort(-scores, kind="stable")
    ranked, ranked_labels = scores[order], labels[order]
    ends = np.flatnonzero(np.append(ranked[1:] != ranked[:-1], True))
    true_pos = np.cumsum(ranked_labels)[ends]
    false_pos = (ends + 1) - true_pos
    following = np.append(ranked[ends[:-1] + 1], -np.inf)
    thresholds = (ranked[ends] + following) / 2
    # A midpoint rounded onto the next score, or past the lowest one, would change which pairs it takes.
    thresholds = np.where((thresholds == following) | ~np.isfinite(thresholds), ranked[ends], thresholds)
    return ranked, true_pos, false_pos, thresholds


def best_accuracy_threshold(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(accuracy, threshold) of the cosine threshold with the highest accuracy; ties go to the higher threshold,
    and "nothing is a paraphrase" (a threshold above every score) competes too."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels, dtype=np.int64)
    ranked, true_pos, false_pos, thresholds = _cut_points(scores, labels)
    negatives = len(labels) - labels.sum()
    accuracies = np.concatenate([[negatives], true_pos + negatives - false_pos]) / len(labels)
    best = int(np.argmax(accuracies))
    threshold = np.nextafter(ranked[0], np.inf) if best == 0 else thresholds[best - 1]
    return float(accuracies[best]), float(threshold)


def best_f1_threshold(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(F1, threshold) of the cosine threshold with the highest F1; ties go to the higher threshold."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels, dtype=np.int64)
    ranked, true_pos, false_pos, thresholds = _cut_points(scores, labels)
    f1 = 2 * true_pos / (true_pos + false_pos + labels.sum())
    best = int(np.argmax(f1))
    if f1[best] == 0:
        return 0.0, float(np.nextafter(ranked[0], np.inf))
    return float(f1[best]), float(thresholds[best])


def accuracy_f1_at(scores: np.ndarray, labels: np.ndarray, threshold: float) -> tuple[float, float]:
    predicted = np.asarray(scores) >= threshold
    labels = np.asarray(labels, dtype=bool)
    true_pos = np.sum(predicted & labels)
    f1 = 2 * true_pos / (predicted.sum() + labels.sum()) if true_pos else 0.0
    return float(np.mean(predicted == labels)), float(f1)


def labelled_pair_metrics(scores: np.ndarray, labels: np.ndarray, dev_scores: np.ndarray | None = None,
                          dev_labels: np.ndarray | None = None) -> dict[str, Any]:
    """AP, and accuracy and F1 at thresholds from the dev scores when given, else from `scores` (all ×100)."""
    best_accuracy, accuracy_threshold = best_accuracy_threshold(scores, labels)
    best_f1, f1_threshold = best_f1_threshold(scores, labels)
    metrics: dict[str, Any] = {"ap": 100 * float(average_precision_score(labels, scores))}
    if dev_scores is None:
        metrics.update(accuracy=100 * best_accuracy, f1=100 * best_f1, threshold_source="self")
    else:
        _, accuracy_threshold = best_accuracy_threshold(dev_scores, dev_labels)
        _, f1_threshold = best_f1_threshold(dev_scores, dev_labels)
        accuracy, _ = accuracy_f1_at(scores, labels, accuracy_threshold)
        _, f1 = accuracy_f1_at(scores, labels, f1_threshold)
        metrics.update(accuracy=100 * accuracy, f1=100 * f1, threshold_source="dev",
                       accuracy_test_optimal=100 * best_accuracy, f1_test_optimal=100 * best_f1)
    metrics.update(accuracy_threshold=accuracy_threshold, f1_threshold=f1_threshold, n=len(labels),
                   n_positive=int(np.sum(labels)))
    return metrics


class ScoredPairsTask(OwnDataTask):
    def __init__(self, path: Path, name: str, seed: int = 1111) -> None:
        super().__init__(name, "scored-pairs", "spearman", [path], seed)
        self.pairs = read_scored_pairs(path)

    def texts(self) -> list[str]:
        return [*self.pairs.sentences1, *self.pairs.sentences2]

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        return sts_scores(encoder, [self.pairs])

    def item_scores(self, encoder: Any) -> ItemScores:
        """Each pair's cosine and gold score: Spearman is recomputed from them."""
        return ItemScores("spearman", pair_cosines(encoder, self.pairs.sentences1, self.pairs.sentences2),
                          self.pairs.scores)


class LabelledPairsTask(OwnDataTask):
    def __init__(self, path: Path, name: str, dev: Path | None = None, seed: int = 1111) -> None:
        super().__init__(name, "labelled-pairs", "ap", [path, *([dev] if dev else [])], seed)
        self.pairs = read_labelled_pairs(path)
        self.dev = read_labelled_pairs(dev) if dev else None

    def supports(self, model: Any) -> bool:
        return hasattr(model, "encode") or (is_lexical(model) and callable(getattr(model, "pair_scores", None)))

    def texts(self) -> list[str]:
        return [text for pairs in (self.pairs, self.dev) if pairs for text in (*pairs.sentences1, *pairs.sentences2)]

    def evaluate(self, model: Any) -> dict[str, Any]:
        if self.dev is None:
            return labelled_pair_metrics(pair_scores(model, self.pairs), self.pairs.labels)
        return labelled_pair_metrics(pair_scores(model, self.pairs), self.pairs.labels,
                                     pair_scores(model, self.dev), self.dev.labels)

    def item_scores(self, model: Any) -> ItemScores:
        """Each pair's similarity and label: AP is recomputed from them."""
        return ItemScores("ap", pair_scores(model, self.pairs), self.pairs.labels)
