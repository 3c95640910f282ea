"""Scores to metrics, shared by the benchmark tasks and a user's own datasets: STS correlations of cosine
similarity with gold scores, and paraphrase AP of pair scores against gold labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import average_precision_score

from sentforge.support.errors import InputFileError
from sentforge.evaluation.readers.sts import STSPairs
from sentforge.evaluation.readers.useb import DEBATABLE, LabelledPairs
from sentforge.evaluation.similarity import is_lexical, pair_cosines, unit_embeddings


def check_gold(pairs: STSPairs) -> STSPairs:
    """`pairs` if a correlation with their gold scores is defined: at least two pairs, not all scored alike.
    (Scoring such a file 0 would pull its family's mean down without a word.)"""
    if len(pairs) < 2:
        raise InputFileError(f"{pairs.source}: {len(pairs)} scored sentence pair(s); an STS correlation needs "
                             "at least 2 (is the file empty or every gold line blank?)")
    if np.ptp(pairs.scores) == 0:
        raise InputFileError(f"{pairs.source}: all {len(pairs)} gold scores are {pairs.scores[0]:g}; a correlation "
                             "with constant gold scores is undefined")
    return pairs


def correlations(system: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """Pearson and Spearman ×100; 0 when undefined (constant scores), as SentEval reports NaN as 0.
    Tasks check the gold scores first (`check_gold`), so here only constant system scores give 0."""
    if len(gold) < 2 or np.ptp(system) == 0 or np.ptp(gold) == 0:
        return {"pearson": 0.0, "spearman": 0.0}
    return {"pearson": 100 * float(pearsonr(system, gold)[0]), "spearman": 100 * float(spearmanr(system, gold)[0])}


def sts_scores(encoder: Any, subsets: Sequence[STSPairs]) -> dict[str, float]:
    """Per-subset correlations, then for several subsets SentEval's mean and weighted mean and the
    "all" correlation over the concatenation."""
    if len(subsets) == 1:
        (pairs,) = subsets
        system = pair_cosines(encoder, pairs.sentences1, pairs.sentences2)
        return {**correlations(system, pairs.scores), "n": len(pairs)}
    metrics: dict[str, float] = {}
    per_subset, system_all = [], []
    for pairs in subsets:
        system = pair_cosines(encoder, pairs.sentences1, pairs.sentences2)
        system_all.append(system)
        result = correlations(system, pairs.scores)
        per_subset.append(result)
        metrics.update({f"{pairs.name}.pearson": result["pearson"], f"{pairs.name}.spearman": result["spearman"],
                        f"{pairs.name}.n": len(pairs)})
    weights = [len(pairs) for pairs in subsets]
    overall = correlations(np.concatenate(system_all), np.concatenate([p.scores for p in subsets]))
    for metric in ("pearson", "spearman"):
        values = [result[metric] for result in per_subset]
        metrics[f"{metric}_mean"] = float(np.mean(values))
        metrics[f"{metric}_wmean"] = float(np.average(values, weights=weights))
        metrics[f"{metric}_all"] = overall[metric]
    metrics["n"] = sum(weights)
    return metrics


def pair_scores(model: Any, pairs: LabelledPairs) -> np.ndarray:
    """Cosine similarity of each pair, or the lexical scorer's symmetric pair score."""
    if is_lexical(model):
        return np.asarray(model.pair_scores(pairs.sentences1, pairs.sentences2), dtype=np.float64)
    rows, vectors = unit_embeddings(model, [*pairs.sentences1, *pairs.sentences2])
    a = vectors[[rows[t] for t in pairs.sentences1]].astype(np.float64)
    b = vectors[[rows[t] for t in pairs.sentences2]].astype(np.float64)
    return np.einsum("ij,ij->i", a, b)


def paraphrase_metrics(scores: np.ndarray, pairs: LabelledPairs) -> dict[str, float]:
    """AP (×100) over the non-debatable pairs and Spearman (×100) with the graded gold over all pairs."""
    decided = pairs.labels != DEBATABLE
    labels = pairs.labels[decided]
    ap = 100 * float(average_precision_score(labels, scores[decided])) if labels.any() else 0.0
    constant = np.ptp(scores) == 0 or np.ptp(pairs.gold) == 0
    spearman = 0.0 if constant else 100 * float(spearmanr(pairs.gold, scores)[0])
    return {"ap": ap, "spearman": spearman, "n": len(pairs), "n_decided": int(decided.sum())}


def paraphrase_scores(model: Any, subsets: Sequence[LabelledPairs]) -> dict[str, float]:
    """Per-subset AP and Spearman, and their means over subsets (USEB's `*_avg`)."""
    metrics: dict[str, float] = {}
    for pairs in subsets:
        result = paraphrase_metrics(pair_scores(model, pairs), pairs)
        metrics.update({f"{pairs.name}.{name}": value for name, value in result.items()})
    for name in ("ap", "spearman"):
        metrics[f"{name}_avg"] = float(np.mean([metrics[f"{p.name}.{name}"] for p in subsets]))
    return metrics
