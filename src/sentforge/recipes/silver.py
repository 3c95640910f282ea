"""Silver pairs (Augmented SBERT, Thakur et al., NAACL 2021): a cross-encoder turns a few labels into many.

Pairs are drawn where labels would be informative: each anchor text (the labelled pool's first texts and a
sample of the unlabelled texts) with its `k` nearest texts by the start bi-encoder and its `k` best by BM25 (the
paper's two samplers that find positives; random pairs are almost all unrelated), each pair once; the
cross-encoder scores them, and the bi-encoder trains on the gold pairs with the silver ones (`sts` recipe,
scores in [0, 1]).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)


def candidate_pairs(anchors: Sequence[str], texts: Sequence[str], encoder: Any, k: int = 3,
                    bm25: bool = True) -> list[tuple[str, str]]:
    """Each anchor with its `k` nearest `texts` by `encoder` (cosine) and, with `bm25`, its `k` best by BM25;
    never a text with itself, each unordered pair once, in anchor order."""
    from sentforge.baselines.bm25 import load_bm25

    pool = list(dict.fromkeys(texts))
    depth = min(k + 1, len(pool))  # one more: the anchor itself may be among the texts
    found = [list(ids) for ids in nearest_texts(encoder, anchors, pool, depth)]
    if bm25:
        _, lexical = load_bm25(show_progress=False).search(list(anchors), pool, depth)
        found = [ids + list(more) for ids, more in zip(found, np.asarray(lexical))]
    seen: set[frozenset[str]] = set()
    pairs = []
    for anchor, ids in zip(anchors, found):
        for i in ids:
            text = pool[int(i)]
            key = frozenset((anchor, text))
            if text == anchor or key in seen:
                continue
            seen.add(key)
            pairs.append((anchor, text))
    return pairs


def nearest_texts(encoder: Any, anchors: Sequence[str], pool: Sequence[str], depth: int) -> np.ndarray:
    """The indices into `pool` of each anchor's `depth` nearest texts by `encoder` (cosine), nearest first; each
    distinct text is encoded once."""
    from sentforge.evaluation.search import exact_search
    from sentforge.evaluation.similarity import unit_embeddings

    rows, vectors = unit_embeddings(encoder, [*anchors, *pool])
    _, found = exact_search(vectors[[rows[a] for a in anchors]], vectors[[rows[t] for t in pool]], depth)
    return np.asarray(found)


def silver_pairs(cross_encoder: Any, encoder: Any, gold: Sequence[tuple[str, str, Any]], unlabelled: Sequence[str],
                 k: int = 3, anchors: int = 2000, bm25: bool = True, seed: int = 0,
                 batch_size: int = 32) -> list[tuple[str, str, float]]:
    """(text, text, cross-encoder score in [0, 1]) for pairs sampled around the gold pairs' first texts and
    `anchors` unlabelled texts (a seeded draw), each anchor's neighbours among all those texts; gold pairs
    are left out (they keep their own labels)."""
    firsts = list(dict.fromkeys(a for a, _, _ in gold))
    rest = [t for t in dict.fromkeys(unlabelled) if t not in set(firsts)]
    drawn = random.Random(seed).sample(rest, min(anchors, len(rest)))
    texts = list(dict.fromkeys([*firsts, *(b for _, b, _ in gold), *drawn]))
    labelled = {frozenset((a, b)) for a, b, _ in gold}
    pairs = [p for p in candidate_pairs([*firsts, *drawn], texts, encoder, k, bm25) if frozenset(p) not in labelled]
    logger.info("silver pairs: %d pairs around %d anchors, scored by the cross-encoder", len(pairs),
                len(firsts) + len(drawn))
    scores = cross_encoder.predict(pairs, batch_size=batch_size)
    return [(a, b, float(s)) for (a, b), s in zip(pairs, scores)]
