"""The training data of an `augsbert` candidate (candidates/augsbert.py): the labelled pairs with their labels
(1 for a positive pair, 0 for a label-0 pair) and silver pairs a trained cross-encoder scored (recipes/silver.py:
pairs drawn around the labelled pairs' first texts and a seeded sample of the unlabelled texts kept by dev
hygiene), one JSON line (sentence1, sentence2, score in [0, 1]) each, written once per start model under
OUTPUT/data so that a rerun, an extension and a continuation read the same pairs."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.method import Candidate
from sentforge.support.io import atomic_file, written_rows

logger = logging.getLogger(__name__)

NEIGHBOURS = 3  # per anchor, by the start model and by BM25 (recipes/silver.py's default)
ANCHORS = 2000  # unlabelled anchors drawn (recipes/silver.py's default)
# At most this part of the candidate's share scores silver pairs: a slow teacher (all-mpnet-base-v2 scores about
# 20 pairs a second on 2 cores) gets a smaller draw instead of leaving its student no time to learn from it.
SCORING_SHARE = 0.5


@dataclass(frozen=True)
class SilverDraw:
    """How many pairs the teacher scores: `neighbours` per anchor (by the start model and by BM25 each) around the
    labelled pairs' distinct first texts (`firsts`) and `anchors` unlabelled texts drawn."""

    neighbours: int
    firsts: int
    anchors: int

    @property
    def most_pairs(self) -> int:
        """The most pairs it can give (each anchor with all its neighbours; pairs found twice are scored once)."""
        return (self.firsts + self.anchors) * 2 * self.neighbours


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


def full_draw(inputs: AdaptInputs) -> SilverDraw:
    """The draw recipes/silver.py makes by default: NEIGHBOURS per anchor, ANCHORS unlabelled anchors (or all)."""
    firsts = {a for a, _, _ in gold_pairs(inputs)}
    rest = len({text for text in inputs.texts if text not in firsts})
    return SilverDraw(NEIGHBOURS, len(firsts), min(ANCHORS, rest))


def fitting_draw(full: SilverDraw, seconds_per_pair: float, seconds: float) -> SilverDraw | None:
    """The largest part of the draw `full` whose pairs the teacher scores within `seconds`: all of it, else fewer
    neighbours per anchor (down to one), then fewer unlabelled anchors; None when the first texts alone, one
    neighbour each, take longer."""
    most = int(seconds / seconds_per_pair) if seconds > 0 else 0
    for neighbours in range(full.neighbours, 0, -1):
        draw = SilverDraw(neighbours, full.firsts, full.anchors)
        if draw.most_pairs <= most:
            return draw
    anchors = most // 2 - full.firsts
    return SilverDraw(1, full.firsts, anchors) if anchors >= 0 else None


def silver_data(candidate: Candidate, inputs: AdaptInputs) -> tuple[Path, int]:
    """(the candidate's training file, its examples: once written, its rows; before, the most it can hold, each
    anchor with all its neighbours)."""
    path = silver_file(candidate, inputs)
    if path.is_file():
        return path, written_rows(path)
    return path, len(gold_pairs(inputs)) + full_draw(inputs).most_pairs


def write_silver(candidate: Candidate, inputs: AdaptInputs, teacher, encoder, seed: int, draw: SilverDraw) -> Path:
    """Score the silver pairs of `draw` with `teacher` (around `encoder`'s neighbours and BM25's) and write them,
    after the labelled pairs, to the candidate's training file."""
    from sentforge.recipes.silver import silver_pairs

    gold = gold_pairs(inputs)
    silver = silver_pairs(teacher, encoder, gold, inputs.texts, k=draw.neighbours, anchors=draw.anchors, seed=seed)
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
