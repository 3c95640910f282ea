"""Readers of GLUE's task files, in the layout of GLUE's `download_glue_data.py` (so a full GLUE download
works as is): UTF-8, tab-separated, no quoting (as GLUE's csv.QUOTE_NONE).

MRPC's train/dev are rebuilt as that script does, from `msr_paraphrase_train.txt` minus/plus the pairs
in `dev_ids.tsv` (3,668 / 408 pairs; a `train.tsv` written by the script can lack one pair). Malformed
lines raise InputFileError naming file and line, except QQP's rows with a wrong field count, which
GLUE's reference processors skip (its train file has such rows): they are skipped with a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sentforge.data.files import numbered_lines
from sentforge.support.errors import InputFileError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GlueSplit:
    """One split: sentences (second is None for single-sentence tasks) and labels (class ids or scores)."""

    first: list[str]
    second: list[str] | None
    labels: np.ndarray

    def texts(self) -> list[str]:
        return self.first + (self.second or [])


def tsv_rows(path: Path, header: bool) -> list[tuple[int, list[str]]]:
    """(line number, tab-separated fields) of a UTF-8 GLUE file."""
    rows = [(number, line.split("\t")) for number, line in numbered_lines(path, "utf-8")]
    return rows[1:] if header else rows


def malformed(path: Path, number: int, expected: str, fields: list[str]) -> InputFileError:
    return InputFileError(f"{path}, line {number}: expected {expected}, got {chr(9).join(fields)[:80]!r}")


def label_id(value: str, labels: tuple[str, ...], path: Path, number: int, fields: list[str]) -> int:
    if value not in labels:
        raise malformed(path, number, f"a label in {{{', '.join(labels)}}}", fields)
    return labels.index(value)


def _fixed_columns(path: Path, header: bool, columns: tuple[str, ...], label_names: tuple[str, ...],
                   label: str, sentences: tuple[str, ...]) -> GlueSplit:
    """A file whose every row has exactly `columns`: the label and one or two sentence columns, by name."""
    texts: tuple[list[str], ...] = tuple([] for _ in sentences)
    labels = []
    for number, fields in tsv_rows(path, header):
        if len(fields) != len(columns):
            raise malformed(path, number, f"{len(columns)} tab-separated fields ({', '.join(columns)})", fields)
        labels.append(label_id(fields[columns.index(label)], label_names, path, number, fields))
        for column, sentence in zip(texts, sentences):
            column.append(fields[columns.index(sentence)].strip())
    return GlueSplit(texts[0], texts[1] if len(texts) == 2 else None, np.array(labels))


def read_cola(path: Path) -> GlueSplit:
    """CoLA: no header; source, label, original mark, sentence."""
    return _fixed_columns(path, False, ("source", "label", "mark", "sentence"), ("0", "1"), "label", ("sentence",))


def read_sst2(path: Path) -> GlueSplit:
    """SST-2: a header, then sentence, label."""
    return _fixed_columns(path, True, ("sentence", "label"), ("0", "1"), "label", ("sentence",))


def read_mrpc(path: Path, ids_path: Path) -> dict[str, GlueSplit]:
    """MRPC's `train` and `dev`: the pairs of `msr_paraphrase_train.txt` (`path`) whose ids are in
    `dev_ids.tsv` (`ids_path`) are dev, the rest train."""
    dev_ids = set()
    for number, fields in tsv_rows(ids_path, header=False):
        if len(fields) != 2:
            raise malformed(ids_path, number, "2 tab-separated pair ids", fields)
        dev_ids.add((fields[0].strip(), fields[1].strip()))
    parts: dict[str, tuple[list[str], list[str], list[int]]] = {"train": ([], [], []), "dev": ([], [], [])}
    for number, fields in tsv_rows(path, header=True):  # Quality, #1 ID, #2 ID, #1 String, #2 String
        if len(fields) != 5:
            raise malformed(path, number, "5 tab-separated fields (Quality, #1 ID, #2 ID, #1 String, "
                            "#2 String)", fields)
        first, second, labels = parts["dev" if (fields[1], fields[2]) in dev_ids else "train"]
        labels.append(label_id(fields[0], ("0", "1"), path, number, fields))
        first.append(fields[3].strip())
        second.append(fields[4].strip())
    if not parts["dev"][2]:
        raise InputFileError(f"{ids_path}: none of its pair ids occurs in {path}")
    return {name: GlueSplit(first, second, np.array(labels)) for name, (first, second, labels) in parts.items()}


def read_stsb(path: Path) -> GlueSplit:
    """STS-B: a header, then ..., sentence1 (column 8), sentence2 (9), ..., a score in [0, 5] last."""
    first, second, scores = [], [], []
    for number, fields in tsv_rows(path, header=True):
        try:
            score = float(fields[-1])
        except ValueError:
            score = float("nan")
        if len(fields) < 10 or not 0 <= score <= 5:
            raise malformed(path, number, "at least 10 tab-separated fields with sentence1, sentence2 in "
                            "columns 8-9 and a score in [0, 5] last", fields)
        first.append(fields[7].strip())
        second.append(fields[8].strip())
        scores.append(score)
    return GlueSplit(first, second, np.array(scores))


def read_indexed_pairs(path: Path, label_names: tuple[str, ...]) -> GlueSplit:
    """QNLI, RTE, WNLI: a header, then index, sentence1, sentence2, label."""
    return _fixed_columns(path, True, ("index", "sentence1", "sentence2", "label"), label_names, "label",
                          ("sentence1", "sentence2"))


def read_mnli(path: Path, label_names: tuple[str, ...]) -> GlueSplit:
    """MNLI: a header, then ..., sentence1 (column 9), sentence2 (10), ..., gold_label last."""
    first, second, labels = [], [], []
    for number, fields in tsv_rows(path, header=True):
        if len(fields) < 11:
            raise malformed(path, number, "at least 11 tab-separated fields (sentence1, sentence2 in columns "
                            "9-10, gold_label last)", fields)
        labels.append(label_id(fields[-1], label_names, path, number, fields))
        first.append(fields[8].strip())
        second.append(fields[9].strip())
    return GlueSplit(first, second, np.array(labels))


def read_qqp(path: Path) -> GlueSplit:
    """QQP: a header, then id, qid1, qid2, question1, question2, is_duplicate; rows with another field
    count are skipped with a warning."""
    first, second, labels, skipped = [], [], [], []
    for number, fields in tsv_rows(path, header=True):
        if len(fields) != 6:
            skipped.append(number)
            continue
        labels.append(label_id(fields[5], ("0", "1"), path, number, fields))
        first.append(fields[3].strip())
        second.append(fields[4].strip())
    if skipped:
        logger.warning("%s: skipped %d row(s) without 6 fields, as GLUE's processors do (lines %s)", path,
                       len(skipped), ", ".join(map(str, skipped[:10])) + (" …" if len(skipped) > 10 else ""))
    return GlueSplit(first, second, np.array(labels))
