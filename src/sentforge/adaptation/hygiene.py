"""Dev hygiene: no text of the dev or test set (nor a near copy of one) is trained on.

A candidate trained on the dev texts scores well on dev for that reason alone (an unsupervised method
learns the very sentences it is then scored on), and the choice stops holding on unseen data. Before any
training, every unlabelled text and every labelled pair with a side that is an exact or near duplicate
(word-set Jaccard >= 0.5, `sentforge.data.near_duplicates.near_duplicates`) of a dev or test text is
dropped, and so is every label-0 pair (a hard negative) with such a side, before the positives take their
hard negatives from the rest; the kept data are written to OUTPUT/data/ and the candidates train on those files.

A class-labelled text is dropped only when it has the words of a dev or test text (Jaccard 1: the same text up
to case, punctuation and order), not when it is a near copy: short labelled texts of one class share a template
("What does BMW stand for ?", "What does NASA stand for ?"), and the near-copy rule dropped 7 of the 8 labelled
texts of TREC's ABBR class as copies of other questions, leaving one, fewer than SetFit's pairs need. The dev and
test heads of class-labelled data are fitted on the kept texts too.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from sentforge.adaptation.inputs import AdaptInputs, ClassLabelled, class_task
from sentforge.adaptation.method import Method
from sentforge.support.errors import ConfigError, InputFileError
from sentforge.harness.labelled import Labelled
from sentforge.support.io import atomic_file

logger = logging.getLogger(__name__)

UNLABELLED_FILE, POSITIVES_FILE, PARTIAL_FILE = "unlabelled.txt", "positives.jsonl", "partial.jsonl"
CLASSES_FILE = "classes.jsonl"
DataKind = Literal["unlabelled", "positives", "negatives", "partial", "classes"]
LABELLED_KINDS = ("positives", "negatives", "partial", "classes")
SAME_WORDS = 1.0  # the word-set Jaccard of a class-labelled text that is a held-out text (the module doc)
PAIR_KINDS = {"positives": "positive", "negatives": "label-0 (hard negative)", "partial": "partially labelled"}


@dataclass(frozen=True)
class Counted:
    """Of one kind of training data: how many were read, how many are dev or test texts or near copies."""

    read: int
    near_duplicates: int

    @property
    def left(self) -> int:
        return self.read - self.near_duplicates


@dataclass(frozen=True)
class Hygiene:
    """What dev hygiene found and did (report.json "hygiene"): whether it dropped the overlap (`applied`; not
    with --keep-dev-texts), the held-out texts, the counts of each kind of training data given, and the
    warnings of a kind mostly dropped."""

    applied: bool
    heldout_texts: int
    counts: dict[DataKind, Counted]  # unlabelled always; the labelled kinds given
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"applied": self.applied, "heldout_texts": self.heldout_texts,
                **{kind: vars(counted) for kind, counted in self.counts.items()}, "warnings": self.warnings}

    def pair_counts(self) -> dict[DataKind, Counted]:
        """The counts of the labelled data: pairs of each kind, class-labelled texts."""
        return {kind: counted for kind, counted in self.counts.items() if kind in LABELLED_KINDS}


def heldout_texts(inputs: AdaptInputs) -> list[str]:
    """The distinct texts of the dev and test sets (of class-labelled ones the texts scored, not those their head
    is fitted on: the labelled texts)."""
    tasks = [task for task in (inputs.dev, inputs.test) if task is not None]
    return list(dict.fromkeys(text for task in tasks for text in _scored_texts(task)))


def _scored_texts(task: Any) -> list[str]:
    from sentforge.evaluation.own.classes import ClassesTask

    return [text for text, _ in task.evaluated] if isinstance(task, ClassesTask) else task.texts()


# Dropping over half of a kind of training data says that it and the dev or test set were drawn from the
# same texts (shared templates, one pool split twice): worth a warning, as the candidates then train on a
# remnant of what was given, while a dropped minority is the ordinary overlap that hygiene is for.
MOST_DROPPED = 0.5


@dataclass(frozen=True)
class Overlap:
    """What dev hygiene finds, before anything is written: the counts for the report, and which unlabelled
    texts and which pairs of each kind touch a held-out text."""

    hygiene: Hygiene
    unlabelled_hits: np.ndarray
    pair_hits: dict[str, np.ndarray]


def data_noun(kind: str) -> str:
    """What the counts of `kind` count: "unlabelled texts", "positive pairs", ..."""
    if kind in ("unlabelled", "classes"):
        return "unlabelled texts" if kind == "unlabelled" else "class-labelled texts"
    return f"{PAIR_KINDS[kind]} pairs"


def find_overlap(inputs: AdaptInputs, keep_dev_texts: bool) -> Overlap:
    """Count the training data that are dev or test texts or near copies; refuse inputs that hygiene would
    leave without a single unlabelled text (unless `keep_dev_texts`)."""
    from sentforge.data.near_duplicates import near_duplicates

    heldout = heldout_texts(inputs)
    unlabelled_hits = near_duplicates(inputs.texts, heldout)
    counts: dict[DataKind, Counted] = {"unlabelled": Counted(len(inputs.texts), int(unlabelled_hits.sum()))}
    labelled = inputs.labelled
    pair_hits: dict[str, np.ndarray] = {}
    if labelled is not None:
        for kind, pairs in (("positives", labelled.pairs), ("negatives", labelled.negatives),
                            ("partial", labelled.partial or [])):
            if pairs:
                pair_hits[kind] = _pairs_touching(pairs, heldout)
                counts[kind] = Counted(len(pairs), int(pair_hits[kind].sum()))
    if inputs.classes is not None:
        pair_hits["classes"] = near_duplicates([text for text, _ in inputs.classes.examples], heldout,
                                               threshold=SAME_WORDS)
        counts["classes"] = Counted(len(inputs.classes.examples), int(pair_hits["classes"].sum()))
    if not keep_dev_texts and unlabelled_hits.all():
        given = (f"--unlabelled {inputs.unlabelled}" if inputs.unlabelled is not None
                 else f"--labelled {inputs.classes.path}")
        raise InputFileError(f"{given}: every text is a dev or test text or a near copy of one; give other domain "
                             "texts, or --keep-dev-texts")
    warnings = [] if keep_dev_texts else _dropped_most(counts)
    return Overlap(Hygiene(not keep_dev_texts, len(heldout), counts, warnings), unlabelled_hits, pair_hits)


def _dropped_most(counts: dict[DataKind, Counted]) -> list[str]:
    warnings = []
    for kind, c in counts.items():
        if c.near_duplicates > MOST_DROPPED * c.read:
            warnings.append(f"dev hygiene dropped {c.near_duplicates} of {c.read} {data_noun(kind)} as dev or "
                            f"test texts or near copies of one, leaving {c.left} to train "
                            "on: do they and the dev or test set come from the same texts? Give training data apart "
                            "from the dev and test texts (--keep-dev-texts trains on them, with optimistic dev "
                            "scores)")
    return warnings


def check_data_left(inputs: AdaptInputs, overlap: Overlap, methods: list[Method]) -> None:
    """Refuse a run in which hygiene leaves none of the chosen trained candidates any data (none trains on the
    unlabelled texts, of which hygiene leaves some): nothing beside the start model would run."""
    hygiene = overlap.hygiene
    if not hygiene.applied or (inputs.labelled is None and inputs.classes is None):
        return
    trained = [method.name for method in methods if method.kind.trained]
    needed = {method.data for method in methods if method.kind.trained}
    left = {kind: c.left for kind, c in hygiene.pair_counts().items()}
    if not trained or "unlabelled" in needed or any(left.get(kind) for kind in needed):
        return
    emptied = [kind for kind in ("positives", "partial", "classes") if kind in needed and left.get(kind) == 0]
    if not emptied:  # the labelled file never had what they need: plan_candidates says so
        return
    dropped = " and ".join(f"all {hygiene.counts[kind].read} {data_noun(kind)}" for kind in emptied)
    labelled = inputs.labelled.path if inputs.labelled is not None else inputs.classes.path
    raise ConfigError(f"--labelled {labelled}: dev hygiene drops {dropped} (each has a text that is a dev "
                      f"or test text or a near copy of one), so the chosen candidates ({', '.join(trained)}) have "
                      "nothing to train on; give labelled data apart from the dev and test texts, add an "
                      "unsupervised candidate (tsdae, simcse or ct), or give --keep-dev-texts (optimistic dev scores)")


def apply_hygiene(inputs: AdaptInputs, data_dir: Path, keep_dev_texts: bool,
                  overlap: Overlap | None = None) -> tuple[AdaptInputs, Hygiene]:
    """(the inputs the candidates train on, the counts for the report). With `keep_dev_texts` the inputs
    are unchanged and the counts say how many texts overlap. `overlap`: find_overlap's, when already found."""
    overlap = overlap or find_overlap(inputs, keep_dev_texts)
    hygiene = overlap.hygiene
    if keep_dev_texts:
        if inputs.unlabelled is None:  # the class-labelled texts stand in: a file of them for TSDAE
            data_dir.mkdir(parents=True, exist_ok=True)
            inputs = dataclasses.replace(inputs, unlabelled=_write_lines(data_dir / UNLABELLED_FILE, inputs.texts))
        return inputs, hygiene
    texts = [text for text, hit in zip(inputs.texts, overlap.unlabelled_hits) if not hit]
    data_dir.mkdir(parents=True, exist_ok=True)
    unlabelled = _write_lines(data_dir / UNLABELLED_FILE, texts)
    labelled = inputs.labelled
    if labelled is not None:
        labelled = _clean_labelled(labelled, overlap.pair_hits, data_dir)
    if inputs.classes is not None:
        inputs = _clean_classes(inputs, overlap.pair_hits["classes"], data_dir)
    logger.info("dev hygiene: %d of %d unlabelled texts dropped (a dev or test text or a near copy)%s",
                hygiene.counts["unlabelled"].near_duplicates, len(inputs.texts),
                "".join(f"; {c.near_duplicates} of {c.read} {data_noun(kind)} dropped"
                        for kind, c in hygiene.pair_counts().items()))
    for warning in hygiene.warnings:
        logger.warning("%s", warning)
    return dataclasses.replace(inputs, unlabelled=unlabelled, texts=texts, labelled=labelled), hygiene


def _clean_classes(inputs: AdaptInputs, hits: np.ndarray, data_dir: Path) -> AdaptInputs:
    """The class-labelled texts kept, written to OUTPUT/data/, and the dev and test sets' heads fitted on them."""
    kept = [example for example, hit in zip(inputs.classes.examples, hits) if not hit]
    path = _write_records(data_dir / CLASSES_FILE, [{"text": text, "label": label} for text, label in kept])
    return dataclasses.replace(
        inputs, classes=ClassLabelled(path, kept), dev=class_task(inputs.dev_path, "--dev", path),
        test=None if inputs.test is None else class_task(inputs.test.metadata.files[0], "--test", path))


def _pairs_touching(pairs: list[tuple], heldout: list[str]) -> np.ndarray:
    """For each pair, whether one of its texts (a hard negative included) is a held-out text or a near copy."""
    from sentforge.data.near_duplicates import near_duplicates

    sides = [[pair[i] if i < len(pair) and isinstance(pair[i], str) else "" for pair in pairs] for i in range(3)]
    return np.logical_or.reduce([near_duplicates(side, heldout) for side in sides])


def _clean_labelled(labelled: Labelled, hits: dict[str, np.ndarray], data_dir: Path) -> Labelled:
    pairs = [pair for pair, hit in zip(labelled.pairs, hits.get("positives", [])) if not hit]
    negatives = [pair for pair, hit in zip(labelled.negatives, hits.get("negatives", [])) if not hit]
    partial = None
    if labelled.partial is not None:
        partial = [pair for pair, hit in zip(labelled.partial, hits["partial"]) if not hit]
        _write_records(data_dir / PARTIAL_FILE, [{"sentence1": a, "sentence2": b, "label": label}
                                                 for a, b, label in partial])
    positives_file = data_dir / POSITIVES_FILE if pairs else None
    path = data_dir / PARTIAL_FILE if partial is not None else (positives_file or labelled.path)
    cleaned = Labelled(path, pairs, partial, positives_file, negatives)
    if positives_file is not None:
        names = ("sentence1", "sentence2", "negative")
        _write_records(positives_file, [dict(zip(names, example)) for example in cleaned.positives])
    return cleaned


def _write_lines(path: Path, texts: list[str]) -> Path:
    """One text per line; a text's inner line breaks become spaces (the tokenizers treat both alike)."""
    with atomic_file(path, "w") as handle:
        handle.writelines(" ".join(text.split()) + "\n" for text in texts)
    return path


def _write_records(path: Path, records: list[dict[str, Any]]) -> Path:
    with atomic_file(path, "w") as handle:
        handle.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    return path
