"""The training data of a `marginmse` candidate (candidates/marginmse.py): (query, positive, negative, margin) rows
for the labelled positive pairs, the margin a trained cross-encoder's score of the positive minus its score of
the negative (recipes/margins.py). Each query's label-0 partners are its first negatives, texts its start model
finds near it fill in. Written once per start model under OUTPUT/data, so that a rerun, an extension and a
continuation read the same rows."""

from __future__ import annotations

import json
import logging
import random
from collections import defaultdict
from pathlib import Path

from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.method import Candidate
from sentforge.support.io import atomic_file, written_rows

logger = logging.getLogger(__name__)

# Per (query, positive): 4 of a question's label-0 partners beat all 8 of them on WikiQA's dev and test
# (docs/results/cross-encoder.md); GPL's miner draws among the 10 nearest.
NEGATIVES = 4
DEPTH = 10


def margins_file(candidate: Candidate, inputs: AdaptInputs) -> Path:
    return inputs.data_dir / f"{candidate.model_key}.margins.jsonl"


def positive_pairs(inputs: AdaptInputs) -> list[tuple[str, str]]:
    """The labelled positive pairs kept by dev hygiene, each once."""
    return list(dict.fromkeys((pair[0], pair[1]) for pair in inputs.labelled.pairs))


def margin_data(candidate: Candidate, inputs: AdaptInputs) -> tuple[Path, int]:
    """(the candidate's training file, its rows: once written, their number; before, the most it can hold)."""
    path = margins_file(candidate, inputs)
    if path.is_file():
        return path, written_rows(path)
    return path, len(positive_pairs(inputs)) * NEGATIVES


def fitting_positives(inputs: AdaptInputs, seconds_per_pair: float, seconds: float) -> int | None:
    """How many positive pairs the teacher scores, with their negatives, within `seconds` (each costs up to
    1 + NEGATIVES scored pairs): all of them or fewer; None when not even one fits."""
    most = int(seconds / (seconds_per_pair * (1 + NEGATIVES))) if seconds > 0 else 0
    fitting = min(len(positive_pairs(inputs)), most)
    return fitting or None


def write_margins(candidate: Candidate, inputs: AdaptInputs, teacher, encoder, seed: int, positives: int) -> Path:
    """Score the margin rows of a seeded draw of `positives` labelled positive pairs (all when that many) with
    `teacher`, the negatives mined by `encoder` where a query has fewer label-0 partners, and write them."""
    from sentforge.recipes.margins import margin_triples

    pairs = positive_pairs(inputs)
    drawn = pairs if positives >= len(pairs) else random.Random(seed).sample(pairs, positives)
    wrong: dict[str, list[str]] = defaultdict(list)
    for query, text in inputs.labelled.negatives:
        wrong[query].append(text)
    pool = [*(text for pair in pairs for text in pair), *(text for pair in inputs.labelled.negatives for text in pair),
            *inputs.texts]
    rows = margin_triples(teacher, encoder, drawn, pool, negatives=NEGATIVES, depth=DEPTH, seed=seed,
                          labelled_negatives=wrong)
    path = margins_file(candidate, inputs)
    with atomic_file(path, "w") as handle:  # a run cut while writing leaves no half file
        handle.writelines(json.dumps({"query": q, "positive": p, "negative": n, "margin": m}) + "\n"
                          for q, p, n, m in rows)
    logger.info("%s: %d margin rows for %d of %d positive pairs in %s", candidate.name, len(rows), len(drawn),
                len(pairs), path)
    return path
