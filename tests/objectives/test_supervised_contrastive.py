"""The supervised contrastive loss against the formula computed by hand with numpy on fixed vectors."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from sentforge.objectives.supervised_contrastive import SupervisedContrastive


class FixedVectors(nn.Module):
    def __init__(self, table: dict[str, np.ndarray]) -> None:
        super().__init__()
        self.table = table

    def embed(self, texts):
        return torch.tensor(np.stack([self.table[t] for t in texts]), dtype=torch.float64)


def reference(vectors: np.ndarray, labels: list, temperature: float) -> float:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    logits = unit @ unit.T / temperature
    losses = []
    for i in range(len(labels)):
        others = [j for j in range(len(labels)) if j != i]
        log_denominator = np.log(np.sum(np.exp(logits[i, others])))
        positives = [j for j in others if labels[j] == labels[i]]
        if positives:
            losses.append(-np.mean([logits[i, j] - log_denominator for j in positives]))
    return float(np.mean(losses))


def test_loss_matches_the_formula_and_skips_texts_without_a_positive():
    rng = np.random.default_rng(0)
    texts = [f"t{i}" for i in range(7)]
    labels = ["a", "b", "a", "c", "b", "a", "d"]  # c and d have no positive in the batch
    table = {t: rng.standard_normal(6) for t in texts}
    loss = SupervisedContrastive(FixedVectors(table), temperature=0.3)(list(zip(texts, labels)))
    assert abs(loss.item() - reference(np.stack([table[t] for t in texts]), labels, 0.3)) < 1e-9


def test_a_batch_without_shared_classes_gives_zero():
    loss = SupervisedContrastive(FixedVectors({"x": np.ones(3), "y": np.arange(3.0)}))([("x", 1), ("y", 2)])
    assert loss.item() == 0.0
