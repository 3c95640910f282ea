"""Hard negatives for MNRL mined with the start model, as sentence-transformers' `mine_hard_negatives` does.

For every (anchor, positive, ...) pair the texts of a pool (the pairs' own positives and negatives, and
optionally a corpus of unlabelled texts) are ranked by their cosine similarity to the anchor under the model
that training starts from. The most similar ones are hard negatives, but the most similar of all are often
unlabelled positives (a duplicate question no annotator paired): a candidate is kept only when it scores at
least `margin` below the pair's own positive, and never when it is the anchor or a positive of that anchor.
Written here rather than called from sentence-transformers: it works on sentforge's encoders and tuples and
keeps the pairs' arity (every pair gets the same number of negatives, as a batch needs).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError

logger = logging.getLogger(__name__)

CHUNK = 256  # anchors scored against the pool at a time: bounded memory on a large corpus


def mine_hard_negatives(encoder: Any, examples: Sequence[tuple[str, ...]], corpus: Sequence[str] = (),
                        per_pair: int = 1, margin: float = 0.1, batch_size: int = 64) -> list[tuple[str, ...]]:
    """`examples` with `per_pair` mined negatives appended to each, the hardest that pass the margin first.
    A pair with too few candidates that pass takes the pool's least similar texts to keep the arity."""
    if per_pair < 1:
        raise ConfigError(f"mined negatives per pair must be >= 1, got {per_pair}")
    if any(isinstance(example, str) or len(example) < 2 for example in examples):
        raise ConfigError("mining hard negatives needs (anchor, positive[, negatives]) pairs")
    pool = list(dict.fromkeys([text for example in examples for text in example[1:]] + list(corpus)))
    anchors = list(dict.fromkeys(example[0] for example in examples))
    positives: dict[str, set[str]] = defaultdict(set)
    for example in examples:
        positives[example[0]].add(example[1])
    if len(pool) <= per_pair + 1:
        raise ConfigError(f"mining {per_pair} hard negative(s) per pair needs a larger pool than {len(pool)} texts")
    pool_vectors = encoder.encode(pool, batch_size=batch_size, normalize=True)
    anchor_vectors = encoder.encode(anchors, batch_size=batch_size, normalize=True)
    index = {text: i for i, text in enumerate(pool)}
    row = {text: i for i, text in enumerate(anchors)}
    mined, short = [], 0
    for start in range(0, len(examples), CHUNK):
        chunk = examples[start:start + CHUNK]
        similarity = anchor_vectors[[row[example[0]] for example in chunk]] @ pool_vectors.T
        for example, scores in zip(chunk, similarity):
            anchor, positive = example[0], example[1]
            ceiling = float(scores[index[positive]]) - margin
            excluded = {index[text] for text in positives[anchor] | {anchor} if text in index}
            order = np.argsort(-scores, kind="stable")
            chosen = [i for i in order if i not in excluded and scores[i] <= ceiling][:per_pair]
            if len(chosen) < per_pair:
                short += 1
                chosen += [i for i in order[::-1] if i not in excluded and i not in chosen][:per_pair - len(chosen)]
            mined.append((*example, *(pool[i] for i in chosen)))
    logger.info("mined %d hard negative(s) for each of %d pairs from %d texts (margin %.2f below the positive)%s",
                per_pair, len(examples), len(pool), margin,
                f"; {short} pairs had too few within the margin and took the least similar texts" if short else "")
    return mined
