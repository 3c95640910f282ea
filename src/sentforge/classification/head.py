"""A logistic-regression head on sentence vectors, kept as plain arrays so that it saves to safetensors.

scikit-learn fits it (`LogisticRegression`, SetFit's default head); scikit-learn itself saves only by pickle,
which sentforge never loads, so the fitted coefficients are stored and the probabilities computed here from
them: the softmax of the class scores (a sigmoid for two classes), as `LogisticRegression.predict_proba` does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sentforge.data.classes import Label, sorted_classes
from sentforge.support.errors import ModelFormatError

HEAD_FILE = "classification_head.safetensors"
KIND = "logistic-regression"


@dataclass(frozen=True)
class LogisticHead:
    """coef: (classes, dim), or (1, dim) for two classes; intercept: (classes,) or (1,); classes in order."""

    coef: np.ndarray
    intercept: np.ndarray
    classes: tuple[Label, ...]

    @classmethod
    def fit(cls, vectors: np.ndarray, labels: Sequence[Label], seed: int = 0, c: float = 1.0,
            max_iter: int = 1000) -> LogisticHead:
        """The head fitted on (vectors, labels): L2-regularised multinomial logistic regression (lbfgs)."""
        from sklearn.linear_model import LogisticRegression

        classes = sorted_classes(list(labels))
        index = {label: i for i, label in enumerate(classes)}
        targets = np.array([index[label] for label in labels])
        model = LogisticRegression(C=c, max_iter=max_iter, random_state=seed)
        model.fit(np.asarray(vectors, dtype=np.float64), targets)
        return cls(model.coef_.astype(np.float32), model.intercept_.astype(np.float32), tuple(classes))

    def decision(self, vectors: np.ndarray) -> np.ndarray:
        return np.asarray(vectors, dtype=np.float64) @ self.coef.T.astype(np.float64) + self.intercept

    def predict_proba(self, vectors: np.ndarray) -> np.ndarray:
        """(n, classes) probabilities, columns in `classes` order."""
        scores = self.decision(vectors)
        if self.coef.shape[0] == 1:
            positive = 1.0 / (1.0 + np.exp(-scores[:, 0]))
            return np.stack([1.0 - positive, positive], axis=1)
        scores -= scores.max(axis=1, keepdims=True)
        exp = np.exp(scores)
        return exp / exp.sum(axis=1, keepdims=True)

    def predict(self, vectors: np.ndarray) -> list[Label]:
        return [self.classes[i] for i in np.argmax(self.predict_proba(vectors), axis=1)]

    def save(self, directory: str | Path) -> None:
        from safetensors.numpy import save_file

        save_file({"coef": np.ascontiguousarray(self.coef), "intercept": np.ascontiguousarray(self.intercept)},
                  str(Path(directory) / HEAD_FILE), metadata={"kind": KIND, "classes": json.dumps(self.classes)})

    @classmethod
    def load(cls, directory: str | Path) -> LogisticHead:
        from safetensors import safe_open

        path = Path(directory) / HEAD_FILE
        if not path.is_file():
            raise ModelFormatError(f"{directory}: no {HEAD_FILE}; a classifier directory holds the encoder and its "
                                   "head (written by sentforge train setfit or SentenceClassifier.save)")
        try:
            with safe_open(str(path), "numpy") as handle:
                metadata = handle.metadata() or {}
                coef, intercept = handle.get_tensor("coef"), handle.get_tensor("intercept")
            classes = json.loads(metadata["classes"])
        except Exception as err:  # a truncated file, a missing tensor or key
            raise ModelFormatError(f"{path}: not a sentforge classification head ({err})") from None
        if metadata.get("kind") != KIND or coef.shape[0] not in (1, len(classes)) or len(intercept) != coef.shape[0]:
            raise ModelFormatError(f"{path}: not a {KIND} head of {len(classes)} classes")
        return cls(coef, intercept, tuple(classes))
