"""The training data of an `augsbert` candidate (candidates/augsbert.py): the labelled pairs with their labels
(1 for a positive pair, 0 for a label-0 pair) and silver pairs a trained cross-encoder scored (recipes/silver.py:
pairs drawn around the labelled pairs' first texts and a seeded sample of the unlabelled texts kept by dev
hygiene), one JSON line (sentence1, sentence2, score in [0, 1]) each, written once per start model under
OUTPUT/data so that a rerun, an extension and a continuation read the same pairs."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.method import Candidate
from sentforge.support.io import atomic_file

logger = logging.getLogger(__name__)

NEIGHBOURS = 3  # per anchor, by the start model and by BM25 (recipes/silver.py's default)
ANCHORS = 2000  # unlabelled anchors drawn (recipes/silver.py's default)
PROBED_PAIRS = 16  # pairs the cross-encoder scores to time itself


SCORED_FILE = "scored.jsonl"  # the labelled pairs with their labels as scores (the `regression` candidate's)


def silver_file(candidate: Candidate, inputs: AdaptInputs) -> Path:
    return inputs.data_dir / f"{candidate.model_key}.silver.jsonl"


def gold_pairs(inputs: AdaptInputs) -> list[tuple[str, str, float]]:
    """The labelled pairs kept by dev hygiene: positives scored 1, label-0 pairs 0."""
    labelled = inputs.labelled
    return [(a, b, 1.0) for a, b, *_ in labelled.pairs] + [(a, b, 0.0) for a, b in labelled.negatives]


def scored_data(inputs: AdaptInputs) -> tuple[Path, int]:
    """(the labelled pairs scored 1 and 0, written once under OUTPUT/data, their number)."""
    gold = gold_pairs(inputs)
    path = inputs.data_dir / SCORED_FILE
    if not path.is_file():
        _write_scored(path, gold)
    return path, len(gold)


def anchor_count(inputs: AdaptInputs) -> int:
    """The anchors silver_pairs draws pairs around: the distinct first texts and the unlabelled sample."""
    firsts = {a for a, _, _ in gold_pairs(inputs)}
    rest = len({text for text in inputs.texts if text not in firsts})
    return len(firsts) + min(ANCHORS, rest)


def silver_data(candidate: Candidate, inputs: AdaptInputs) -> tuple[Path, int]:
    """(the candidate's training file, its examples: once written, its rows; before, the most it can hold, each
    anchor with all its neighbours)."""
    path = silver_file(candidate, inputs)
    if path.is_file():
        return path, sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return path, len(gold_pairs(inputs)) + anchor_count(inputs) * 2 * NEIGHBOURS


def scoring_estimate(teacher, inputs: AdaptInputs, encode_s: float) -> float:
    """Seconds to make the silver pairs: the start model's encoding of the pool (`encode_s`) and the teacher's
    scoring of the most pairs the anchors can give, at its speed on a few of them (the first timed call
    excluded: it warms the model up)."""
    gold = gold_pairs(inputs)
    pairs = [(a, b) for a, b, _ in gold[:PROBED_PAIRS]]
    teacher.predict(pairs[:1])
    started = time.perf_counter()
    teacher.predict(pairs)
    per_pair = (time.perf_counter() - started) / max(len(pairs), 1)
    return encode_s + per_pair * anchor_count(inputs) * 2 * NEIGHBOURS


def write_silver(candidate: Candidate, inputs: AdaptInputs, teacher, encoder, seed: int) -> Path:
    """Score the silver pairs with `teacher` (around `encoder`'s neighbours and BM25's) and write them, after the
    labelled pairs, to the candidate's training file."""
    from sentforge.recipes.silver import silver_pairs

    gold = gold_pairs(inputs)
    silver = silver_pairs(teacher, encoder, gold, inputs.texts, k=NEIGHBOURS, anchors=ANCHORS, seed=seed)
    path = _write_scored(silver_file(candidate, inputs), gold + silver)
    logger.info("%s: %d labelled and %d silver pairs (%d scored >= 0.5) in %s", candidate.name, len(gold),
                len(silver), sum(score >= 0.5 for *_, score in silver), path)
    return path


def _write_scored(path: Path, pairs: list[tuple[str, str, float]]) -> Path:
    """One JSON line (sentence1, sentence2, score) per pair; a run cut while writing leaves no half file."""
    with atomic_file(path, "w") as handle:
        handle.writelines(json.dumps({"sentence1": a, "sentence2": b, "score": score}) + "\n"
                          for a, b, score in pairs)
    return path
