"""Dev hygiene: no text of the dev or test set (nor a near copy of one) is trained on.

A candidate trained on the dev texts scores well on dev for that reason alone (an unsupervised method
learns the very sentences it is then scored on), and the choice stops holding on unseen data. Before any
training, every unlabelled text and every labelled pair with a side that is an exact or near duplicate
(word-set Jaccard >= 0.5, `sentforge.data.near_duplicates.near_duplicates`) of a dev or test text is
dropped, and so is every label-0 pair (a hard negative) with such a side, before the positives take their
hard negatives from the rest; the kept data are written to OUTPUT/data/ and the candidates train on those
files.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.adaptation.inputs import AdaptInputs, Labelled
from sentforge.errors import InputFileError
from sentforge.io import atomic_file

logger = logging.getLogger(__name__)

UNLABELLED_FILE, POSITIVES_FILE, PARTIAL_FILE = "unlabelled.txt", "positives.jsonl", "partial.jsonl"
PAIR_KINDS = {"positives": "positive", "negatives": "label-0 (hard negative)", "partial": "partially labelled"}


def heldout_texts(inputs: AdaptInputs) -> list[str]:
    """The distinct texts of the dev and test sets."""
    tasks = [task for task in (inputs.dev, inputs.test) if task is not None]
    return list(dict.fromkeys(text for task in tasks for text in task.texts()))


def apply_hygiene(inputs: AdaptInputs, data_dir: Path, keep_dev_texts: bool) -> tuple[AdaptInputs, dict[str, Any]]:
    """(the inputs the candidates train on, the counts for the report). With `keep_dev_texts` the inputs
    are unchanged and the counts say how many texts overlap."""
    from sentforge.data.near_duplicates import near_duplicates

    heldout = heldout_texts(inputs)
    unlabelled_hits = near_duplicates(inputs.texts, heldout)
    counts: dict[str, Any] = {"applied": not keep_dev_texts, "heldout_texts": len(heldout),
                              "unlabelled": {"read": len(inputs.texts), "near_duplicates": int(unlabelled_hits.sum())}}
    labelled = inputs.labelled
    pair_hits: dict[str, np.ndarray] = {}
    if labelled is not None:
        for kind, pairs in (("positives", labelled.pairs), ("negatives", labelled.negatives),
                            ("partial", labelled.partial or [])):
            if pairs:
                pair_hits[kind] = _pairs_touching(pairs, heldout)
                counts[kind] = {"read": len(pairs), "near_duplicates": int(pair_hits[kind].sum())}
    if keep_dev_texts:
        return inputs, counts
    texts = [text for text, hit in zip(inputs.texts, unlabelled_hits) if not hit]
    if not texts:
        raise InputFileError(f"--unlabelled {inputs.unlabelled}: every text is a dev or test text or a near copy of "
                             "one; give other domain texts, or --keep-dev-texts")
    data_dir.mkdir(parents=True, exist_ok=True)
    unlabelled = _write_lines(data_dir / UNLABELLED_FILE, texts)
    if labelled is not None:
        labelled = _clean_labelled(labelled, pair_hits, data_dir)
    logger.info("dev hygiene: %d of %d unlabelled texts dropped (a dev or test text or a near copy)%s",
                counts["unlabelled"]["near_duplicates"], len(inputs.texts),
                "".join(f"; {c['near_duplicates']} of {c['read']} {PAIR_KINDS[kind]} pairs dropped"
                        for kind, c in counts.items() if kind in PAIR_KINDS))
    return dataclasses.replace(inputs, unlabelled=unlabelled, texts=texts, labelled=labelled), counts


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
