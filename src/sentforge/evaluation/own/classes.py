"""Class-labelled texts as an evaluation task: how well a logistic-regression head on the model's vectors,
fitted on a training file, classifies the evaluated file (accuracy and macro-F1, ×100).

The training file is given, or is the `train.jsonl` / `train.csv` / `train.tsv` beside the evaluated file
(`intents/test.jsonl` is scored with a head fitted on `intents/train.jsonl`). With `shots`, each of `draws` heads
is fitted on a seeded draw of that many texts per class (data.classes.per_class_draw; draw d uses seed + d) and
the metrics are their means; per item, the share of draws that classify it right is its unit score for paired
bootstrap intervals (`item_scores`): the items are the same for any model. A `SentenceClassifier` brings
its own head (fitted on its training texts) and is scored by it: one draw, no head fitted here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import f1_score

from sentforge.classification.classifier import SentenceClassifier
from sentforge.classification.head import LogisticHead
from sentforge.data.classes import per_class_draw, read_classes, unseen_classes
from sentforge.evaluation.own.base import OwnDataTask
from sentforge.evaluation.paired import ItemScores
from sentforge.support.errors import ConfigError, InputFileError

TRAIN_NAMES = ("train.jsonl", "train.csv", "train.tsv")


def training_file_beside(path: Path) -> Path:
    """The train.* file in the evaluated file's folder (the evaluated file itself is refused)."""
    found = [path.parent / name for name in TRAIN_NAMES if (path.parent / name).is_file()]
    if not found:
        raise InputFileError(f"{path}: class-labelled data is scored by a head fitted on a training file beside it "
                             f"({', '.join(TRAIN_NAMES)}), and {path.parent} has none")
    if found[0].resolve() == path.resolve():
        raise InputFileError(f"{path}: this is the training file; evaluate the test or dev file beside it")
    return found[0]


class ClassesTask(OwnDataTask):
    def __init__(self, path: str | os.PathLike, name: str | None = None, train: str | os.PathLike | None = None,
                 shots: int | None = None, draws: int = 1, seed: int = 1111) -> None:
        path = Path(path)
        train_path = Path(train) if train is not None else training_file_beside(path)
        super().__init__(name or str(path), "classes", "accuracy", [path, train_path], seed)
        if draws < 1 or (shots is None and draws != 1):
            raise ConfigError(f"draws must be at least 1, and more than 1 only with shots; got {draws}")
        self.evaluated = read_classes(path, min_per_class=1)
        self.training = read_classes(train_path, min_per_class=1)
        unseen_classes(self.training, self.evaluated, str(path))
        self.shots, self.draws = shots, draws

    def texts(self) -> list[str]:
        return list(dict.fromkeys(text for text, _ in [*self.training, *self.evaluated]))

    def heads_training(self) -> list[list]:
        """The texts each draw's head is fitted on: the training file, or its draw of `shots` per class."""
        if self.shots is None:
            return [self.training]
        return [per_class_draw(self.training, self.shots, self.seed + draw) for draw in range(self.draws)]

    def predictions(self, encoder: Any) -> list[list]:
        """The predicted class of every evaluated item, one list per draw (one for a classifier: its head)."""
        if isinstance(encoder, SentenceClassifier):
            return [encoder.predict([text for text, _ in self.evaluated])]
        trainings = self.heads_training()
        # Only the texts some head is fitted on are encoded (a few per class of a large file, with shots).
        texts = list(dict.fromkeys(text for text, _ in [*(row for train in trainings for row in train),
                                                        *self.evaluated]))
        vectors = np.asarray(encoder.encode(texts), dtype=np.float32)
        row = {text: i for i, text in enumerate(texts)}
        evaluated = vectors[[row[text] for text, _ in self.evaluated]]
        predicted = []
        for train in trainings:
            head = LogisticHead.fit(vectors[[row[text] for text, _ in train]], [label for _, label in train],
                                    seed=self.seed)
            predicted.append(head.predict(evaluated))
        return predicted

    def _correct(self, predicted: list[list]) -> np.ndarray:
        gold = [label for _, label in self.evaluated]
        return np.array([[p == g for p, g in zip(draw, gold)] for draw in predicted], dtype=np.float64)

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        return self._metrics(self.predictions(encoder))

    def evaluate_with_items(self, encoder: Any) -> tuple[dict[str, Any], ItemScores]:
        """`evaluate` and `item_scores` from one prediction of the items."""
        predicted = self.predictions(encoder)
        return self._metrics(predicted), self._items(predicted)

    def _metrics(self, predicted: list[list]) -> dict[str, Any]:
        gold = [str(label) for _, label in self.evaluated]
        f1s = [f1_score(gold, [str(p) for p in draw], average="macro") for draw in predicted]
        return {"accuracy": 100 * float(self._correct(predicted).mean()), "macro_f1": 100 * float(np.mean(f1s)),
                "n": len(self.evaluated), "classes": len({label for _, label in self.training}),
                "draws": len(predicted), "shots": self.shots}

    def item_scores(self, encoder: Any) -> ItemScores:
        """Each evaluated item's share of draws classified right (×100): accuracy is their mean."""
        return self._items(self.predictions(encoder))

    def _items(self, predicted: list[list]) -> ItemScores:
        return ItemScores("mean", 100 * self._correct(predicted).mean(axis=0))
