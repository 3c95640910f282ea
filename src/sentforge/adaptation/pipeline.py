"""A pipeline candidate: the leading bi-encoder with the --cross-encoder re-ranking each query's top K
(evaluation/reranker.py's `Reranked`), the cross-encoder's score interpolated with the first stage's by a weight
chosen on dev.

The weight is chosen among WEIGHTS as a trained candidate's checkpoint is chosen among its evaluations: each
weight's per-unit dev scores are saved as one evaluation (intervals.py), so that the "cross-fitted" rule weighs
the choice as it weighs checkpoints. Weight 0 is the first stage alone, already a candidate, so it is not one of
them. What the pipeline costs to run is timed per query (`QueryCost`): one query through the first stage and its
top K pairs through the cross-encoder (the documents are encoded once, ahead of the queries); on labelled pairs
one pair per query.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.support.io import atomic_dir
from sentforge.support.output_guard import MARKER

WEIGHTS = tuple(round(0.1 * i, 1) for i in range(1, 11))
# Pairs the cross-encoder scores to time its cost per pair: 64 labelled pairs in batches of 32 came within a fifth
# (on the slow side) of its rate on the data it then scored (18 pairs a second for all-mpnet-base-v2 on 2 cores,
# TwitterPara and WikiQA), where 16 consecutive dev texts were 1.5 times too fast on one, 2 times too slow on the other.
TIMED_PAIRS = 64
RERANKER_DIR = "reranker"  # OUTPUT/reranker: the selected pipeline's cross-encoder, beside OUTPUT/model
PIPELINE_FILE = "pipeline.json"


class ScoreCache:
    """A cross-encoder whose score of each distinct pair is computed once (batched), so that every weight is
    scored from one pass over the dev pairs; no library memoises a batched `predict` by pair."""

    def __init__(self, cross_encoder: Any) -> None:
        self.cross_encoder = cross_encoder
        self.name = getattr(cross_encoder, "name", "cross-encoder")
        self._scores: dict[tuple[str, str], float] = {}
        self.seconds = 0.0

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32, **_: Any) -> np.ndarray:
        new = list(dict.fromkeys(pair for pair in map(tuple, pairs) if pair not in self._scores))
        if new:
            started = time.perf_counter()
            scores = self.cross_encoder.predict(new, batch_size=batch_size)
            self.seconds += time.perf_counter() - started
            self._scores.update(zip(new, map(float, scores)))
        return np.array([self._scores[tuple(pair)] for pair in pairs], dtype=np.float64)

    @property
    def pairs_per_second(self) -> float | None:
        """The cross-encoder's pairs per second over the distinct pairs it scored."""
        return round(len(self._scores) / self.seconds, 1) if self.seconds > 0 else None


class QueryCost:
    """What the pipeline runs per query, as the speed measurement times an encoder (`encode`): each text
    through the first stage, then `pairs_per_query` pairs of it with other texts of the pass through the
    cross-encoder. Its speed is then queries per second; its cost the two models' parameters, two encoders."""

    def __init__(self, first_stage: Any, cross_encoder: Any, pairs_per_query: int, batch_size: int = 32) -> None:
        self.first_stage, self.cross_encoder = first_stage, cross_encoder
        self.pairs_per_query, self.batch_size = pairs_per_query, batch_size
        self.dim = first_stage.dim
        self.cost_parts = (first_stage, cross_encoder)  # speed.parameters and speed.encoders add them up

    def encode(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        texts = list(texts)
        vectors = self.first_stage.encode(texts)
        pairs = [(text, texts[(i + j) % len(texts)]) for i, text in enumerate(texts)
                 for j in range(1, self.pairs_per_query + 1)]
        self.cross_encoder.predict(pairs, batch_size=self.batch_size)
        return vectors


def choose_weight(dev: Any, first_stage: Any, cross_encoder: Any, top_k: int) -> tuple[float, list[Any]]:
    """(the weight of the highest dev score, the first on a tie; each weight's per-unit dev scores, in WEIGHTS'
    order), from one pass of the first stage and of the cross-encoder over the dev data."""
    from sentforge.evaluation.reranker import Reranked
    from sentforge.evaluation.task import CachedEncoder

    first = CachedEncoder(first_stage)
    scores = cross_encoder if isinstance(cross_encoder, ScoreCache) else ScoreCache(cross_encoder)
    items = [dev.item_scores(Reranked(first, scores, top_k, weight=weight)) for weight in WEIGHTS]
    best = max(range(len(WEIGHTS)), key=lambda i: (items[i].score(), -i))
    return WEIGHTS[best], items


def timing_pairs(dev: Any, labelled: Sequence[Sequence[str]] = ()) -> list[tuple[str, str]]:
    """The pairs the cross-encoder is timed on: a seeded draw of TIMED_PAIRS `labelled` pairs (the domain's own
    pairs, what its training data and the re-ranked pairs are made of), else pairs of consecutive dev texts."""
    pairs = list(dict.fromkeys((pair[0], pair[1]) for pair in labelled))
    if pairs:
        return random.Random(0).sample(pairs, min(TIMED_PAIRS, len(pairs)))
    texts = dev.texts()[:TIMED_PAIRS + 1]
    return list(zip(texts, texts[1:])) or [(texts[0], texts[0])]


def pair_seconds(cross_encoder: Any, pairs: Sequence[tuple[str, str]]) -> float:
    """The cross-encoder's seconds per pair on `pairs` (`timing_pairs`), in the batches it scores with, after one
    warm-up pair."""
    cross_encoder.predict(pairs[:1])
    started = time.perf_counter()
    cross_encoder.predict(pairs)
    return (time.perf_counter() - started) / len(pairs)


def rerank_seconds(per_pair: float, dev: Any, test: Any | None) -> float:
    """The seconds the cross-encoder needs to score the dev and test data at `per_pair` seconds a pair: about a
    pair per text (a query and its top K, or the two texts of a labelled pair)."""
    return per_pair * sum(len(task.texts()) for task in (dev, test) if task is not None)


def measured_rerank_seconds(path: Any, dev: Any, test: Any | None, labelled: Sequence[Sequence[str]] = (),
                            device: Any = None) -> tuple[float | None, float]:
    """(loading the cross-encoder at `path` and scoring the dev and test data with it (`rerank_seconds`), its
    seconds per pair on `timing_pairs(dev, labelled)`), timed before the run so that the time plan keeps them for
    the pipeline and for the candidates that score their training data with it; the first None when the dev data
    is neither ranked lists nor labelled pairs (nothing to re-rank)."""
    from sentforge.cross_encoder import load_cross_encoder
    from sentforge.evaluation.reranker import Reranked

    started = time.perf_counter()
    cross_encoder = load_cross_encoder(path, device=device)
    load_s = time.perf_counter() - started
    per_pair = pair_seconds(cross_encoder, timing_pairs(dev, labelled))
    if not dev.supports(Reranked(None, cross_encoder)):
        return None, per_pair
    return load_s + rerank_seconds(per_pair, dev, test), per_pair


def write_reranker(output: Path, cross_encoder: str, top_k: int, weight: float) -> Path:
    """OUTPUT/reranker: a copy of the selected pipeline's cross-encoder, with pipeline.json (its top K and weight)."""
    target = output / RERANKER_DIR
    with atomic_dir(target, overwrite=True) as tmp:
        shutil.copytree(cross_encoder, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(MARKER))
        (Path(tmp) / PIPELINE_FILE).write_text(json.dumps({"rerank_top": top_k, "rerank_weight": weight}, indent=2)
                                               + "\n", encoding="utf-8")
    return target
