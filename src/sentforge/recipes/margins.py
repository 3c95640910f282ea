"""MarginMSE's training rows (Hofstätter et al., 2020; GPL, Wang et al., NAACL 2022): (query, positive, negative,
margin), the margin being a cross-encoder teacher's score of (query, positive) minus its score of (query, negative).

The queries are the first texts of the gold positive pairs, each with its gold positive, and optionally a seeded
draw of unlabelled texts, each with its nearest other text by the start bi-encoder as the positive (the teacher's
margin says how related the two are: a "positive" that is not one gets a small or negative margin, which MarginMSE
learns as it is). The negatives are mined by the start bi-encoder: for each (query, positive) a seeded draw of
`negatives` texts among the query's `depth` nearest texts that are neither the query nor one of its positives.
Given labelled negatives (a query's label-0 partners, e.g. the wrong answers of its candidate list) are drawn
first and the mined ones fill the rest: in answer selection the nearest texts of a question are other questions,
which no test list ranks, while its label-0 partners are exactly the texts it must rank below its answer.
Every distinct (query, text) pair is scored by the cross-encoder once, in batches.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from sentforge.support.errors import ConfigError

logger = logging.getLogger(__name__)

MarginRow = tuple[str, str, str, float]


def margin_triples(cross_encoder: Any, encoder: Any, positives: Sequence[tuple[str, str]], texts: Sequence[str] = (),
                   negatives: int = 4, depth: int = 10, anchors: int = 0, seed: int = 0, batch_size: int = 32,
                   logits: bool = False, labelled_negatives: Mapping[str, Sequence[str]] | None = None,
                   ) -> list[MarginRow]:
    """(query, positive, negative, margin) rows for the gold `positives` (pairs) and `anchors` texts drawn from
    `texts`, whose texts with the pairs' are the mining pool. The teacher's scores are its `predict` scores
    (sigmoid), or with `logits` its raw logits (GPL's ms-marco teacher gives logits). `labelled_negatives` maps a
    query to its label-0 partners, drawn (seeded) before any mined negative."""
    from sentforge.recipes.silver import nearest_texts

    if negatives < 1 or depth < negatives:
        raise ConfigError(f"negatives ({negatives}) must be at least 1 and at most the mining depth ({depth})")
    if not positives and not anchors:
        raise ConfigError("margin rows need gold positive pairs or unlabelled anchors")
    rng = random.Random(seed)
    positives = [(query, positive) for query, positive in positives]
    own: dict[str, set[str]] = defaultdict(set)  # each query's positives: never its negatives
    for query, positive in positives:
        own[query].add(positive)
    rest = [text for text in dict.fromkeys(texts) if text not in own]
    drawn = rng.sample(rest, min(anchors, len(rest)))
    pool = list(dict.fromkeys([*(text for pair in positives for text in pair), *texts]))
    queries = list(dict.fromkeys([*(query for query, _ in positives), *drawn]))
    # Beyond `depth`: the query itself and its positives are among its nearest texts and are skipped.
    reach = min(len(pool), depth + 2 + max((len(found) for found in own.values()), default=0))
    near = {query: [pool[i] for i in ids if pool[i] != query]
            for query, ids in zip(queries, nearest_texts(encoder, queries, pool, reach))}
    neighbour_pairs = [(query, near[query][0]) for query in drawn if near[query]]
    for query, positive in neighbour_pairs:
        own[query].add(positive)
    pairs = list(dict.fromkeys([*positives, *neighbour_pairs]))
    triples, short = [], 0
    labelled_negatives = labelled_negatives or {}
    for query, positive in pairs:
        given = [text for text in dict.fromkeys(labelled_negatives.get(query, ())) if text not in own[query]]
        chosen = rng.sample(given, min(negatives, len(given)))
        mined = [text for text in near[query] if text not in own[query] and text not in chosen][:depth]
        chosen += rng.sample(mined, min(negatives - len(chosen), len(mined)))
        short += len(chosen) < negatives
        triples += [(query, positive, negative) for negative in chosen]
    scored = list(dict.fromkeys(pair for query, positive, negative in triples
                                for pair in ((query, positive), (query, negative))))
    logger.info("margin rows: %d (query, positive) pairs (%d drawn anchors), %d rows, %d distinct pairs scored by "
                "the cross-encoder%s", len(pairs), len(drawn), len(triples), len(scored),
                f"; {short} pairs had fewer than {negatives} negatives within depth {depth}" if short else "")
    scores = dict(zip(scored, map(float, cross_encoder.predict(scored, batch_size=batch_size,
                                                                activation=not logits))))
    return [(query, positive, negative, scores[query, positive] - scores[query, negative])
            for query, positive, negative in triples]
