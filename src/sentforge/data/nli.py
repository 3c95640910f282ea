"""Readers of partially labelled sentence pairs (NLI-style data) for PAUSE.

A pair is (sentence1, sentence2, label), label a class name or None (unlabelled). Formats:
- pair tables: .csv/.tsv with a header, .jsonl objects; fields sentence1, sentence2 and label
  (empty or missing: unlabelled);
- SentEval SNLI: a directory with s1.<split>, s2.<split>, labels.<split> (one item per line);
- SICK: SICK_train.txt / SICK_trial.txt / SICK_test_annotated.txt (entailment_judgment, lower-cased);
- GLUE RTE (sentence1, sentence2, label) and QNLI (question, sentence, label) .tsv files (test
  files without labels give unlabelled pairs);
- GLUE QQP .tsv: id, qid1, qid2, question1, question2, is_duplicate, with the header row or without
  it (as in `glue/qqp-partial`); labels `duplicate` / `not_duplicate`; test files (id, question1,
  question2) give unlabelled pairs;
- positive-only pair lists: .txt, one "sentence1<TAB>sentence2" per line, every pair labelled
  `positive`.
`label_fraction` keeps a seeded, class-stratified share of the labels and turns the rest unlabelled;
`positive_only` turns labelled data into positive-unlabelled data (one class kept as `positive`).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from sentforge.data.pairs import Row, class_file_hint, file_rows
from sentforge.data.scored_pairs import keep_text, read_sick
from sentforge.data.texts import decoded_lines
from sentforge.support.errors import ConfigError, InputFileError

logger = logging.getLogger(__name__)

NLIPair = tuple[str, str, "str | None"]
POSITIVE = "positive"
SNLI_SPLITS = ("dev", "test")
DUPLICATE, NOT_DUPLICATE = "duplicate", "not_duplicate"
QQP_COLUMNS = ("id", "qid1", "qid2", "question1", "question2", "is_duplicate")
QQP_LABELS = {"1": DUPLICATE, "0": NOT_DUPLICATE}
_QQP_ROW = re.compile(r"\d+\t\d+\t\d+\t")  # a header-less QQP row starts with three integer ids


def _pair(where: str, first: object, second: object, label: object,
          error: type[Exception] = InputFileError) -> NLIPair:
    if not (isinstance(first, str) and first.strip() and isinstance(second, str) and second.strip()):
        raise error(f"{where}: both sentences must be non-empty text")
    if label is not None and not isinstance(label, str):
        label = str(label)
    label = label.strip() if label is not None else None
    return first.strip(), second.strip(), label or None


def read_nli_table(path: str | Path, columns: Mapping[str, str] | None = None) -> list[NLIPair]:
    """A .csv/.tsv (header row) or .jsonl pair file with sentence1, sentence2 and label (may be empty);
    `columns` renames the file's columns to these fields."""
    return nli_pairs_from_rows(file_rows(Path(path), columns))


def nli_pairs_from_rows(rows: list[Row], error: type[Exception] = InputFileError) -> list[NLIPair]:
    """The pairs of rows with the fields of a pair table, from a file or from memory."""
    pairs = []
    for where, record in rows:
        missing = [f for f in ("sentence1", "sentence2") if f not in record]
        if missing:
            raise error(f"{where}: no field {', '.join(map(repr, missing))} "
                        f"(found: {', '.join(record)}); pairs need sentence1, sentence2[, label]"
                        + class_file_hint(record))
        pairs.append(_pair(where, record["sentence1"], record["sentence2"], record.get("label"), error))
    return pairs


def read_senteval_snli(directory: str | Path, splits: Sequence[str] = SNLI_SPLITS) -> list[NLIPair]:
    """SentEval's SNLI files: s1.<split>, s2.<split>, labels.<split> for each split."""
    directory = Path(directory)
    pairs = []
    for split in splits:
        files = [directory / f"{name}.{split}" for name in ("s1", "s2", "labels")]
        for file in files:
            if not file.is_file():
                raise InputFileError(f"SNLI file not found: {file}")
        columns = [decoded_lines(file) for file in files]
        while all(column and not column[-1].strip() for column in columns):
            for column in columns:
                column.pop()
        if len({len(column) for column in columns}) != 1:
            raise InputFileError(f"{directory}: s1.{split}, s2.{split}, labels.{split} have "
                                 f"{', '.join(str(len(c)) for c in columns)} lines; they must match")
        for line_no, (first, second, label) in enumerate(zip(*columns), 1):
            if not label.strip():
                raise InputFileError(f"{files[2]}:{line_no}: empty label")
            pairs.append(_pair(f"{files[0]}:{line_no}", first, second, label))
    return pairs


def _tsv_rows(path: Path) -> list[tuple[int, list[str]]]:
    return [(line_no, line.split("\t")) for line_no, line in enumerate(decoded_lines(path), 1) if line.strip()]


def _tsv_table(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the (line number, fields) of the other rows of a .tsv with a header row; a row
    whose field count differs from the header's names its line."""
    rows = _tsv_rows(path)
    if not rows:
        raise InputFileError(f"{path} is empty")
    header = rows[0][1]
    for line_no, row in rows[1:]:
        if len(row) != len(header):
            raise InputFileError(f"{path}:{line_no}: {len(row)} fields, the header has {len(header)}")
    return header, rows[1:]


def sick_nli_pairs(path: str | Path) -> list[NLIPair]:
    """SICK's original tab-separated file; the label is the entailment judgment, lower-cased."""
    sick = read_sick(path, keep_text)
    return [_pair(f"{path}:{line_no}", first, second, label.lower())
            for line_no, first, second, label in zip(sick.lines, sick.sentences1, sick.sentences2, sick.entailment)]


def read_glue_nli(path: str | Path) -> list[NLIPair]:
    """GLUE RTE (sentence1, sentence2, label) or QNLI (question, sentence, label) .tsv."""
    path = Path(path)
    header, rows = _tsv_table(path)
    for names in (("sentence1", "sentence2"), ("question", "sentence")):
        if all(name in header for name in names):
            first_col, second_col = (header.index(name) for name in names)
            break
    else:
        raise InputFileError(f"{path}:1: a GLUE NLI file needs sentence1/sentence2 or question/sentence columns; "
                             f"found {', '.join(header)}")
    label_col = header.index("label") if "label" in header else None
    pairs = []
    for line_no, row in rows:
        pairs.append(_pair(f"{path}:{line_no}", row[first_col], row[second_col],
                           None if label_col is None else row[label_col]))
    return pairs


def read_qqp(path: str | Path, skip_malformed: bool = False) -> list[NLIPair]:
    """GLUE QQP .tsv (id, qid1, qid2, question1, question2, is_duplicate), with or without the header
    row; a file without is_duplicate (the test split) gives unlabelled pairs. Labels: is_duplicate 1
    is `duplicate`, 0 `not_duplicate`.

    A row with the wrong number of fields or an empty question raises InputFileError, or with
    `skip_malformed` is skipped with a warning (GLUE's QQP train file has a few such rows)."""
    path = Path(path)
    rows = _tsv_rows(path)
    if not rows:
        raise InputFileError(f"{path} is empty")
    header = list(QQP_COLUMNS)
    if rows[0][1][0] == "id":
        header = [name.strip() for name in rows[0][1]]
        rows = rows[1:]
        if "question1" not in header or "question2" not in header:
            raise InputFileError(f"{path}:1: a QQP file needs question1 and question2 columns; "
                                 f"found {', '.join(header)}")
    first_col, second_col = header.index("question1"), header.index("question2")
    label_col = header.index("is_duplicate") if "is_duplicate" in header else None
    pairs = []
    for line_no, row in rows:
        try:
            if len(row) != len(header):
                raise InputFileError(f"{path}:{line_no}: {len(row)} fields, expected {len(header)} "
                                     f"({', '.join(header)})")
            label = None
            if label_col is not None:
                label = QQP_LABELS.get(row[label_col].strip())
                if label is None:
                    raise InputFileError(f"{path}:{line_no}: is_duplicate must be 0 or 1, got {row[label_col]!r}")
            pairs.append(_pair(f"{path}:{line_no}", row[first_col], row[second_col], label))
        except InputFileError as err:
            if not skip_malformed:
                raise
            logger.warning("skipping a malformed QQP row: %s", err)
    return pairs


def read_positive_pairs(path: str | Path) -> list[NLIPair]:
    """A positive-only pair list: one "sentence1<TAB>sentence2" per line, all labelled `positive`."""
    path = Path(path)
    pairs = []
    for line_no, row in _tsv_rows(path):
        if len(row) != 2:
            raise InputFileError(f"{path}:{line_no}: expected sentence1<TAB>sentence2, got {len(row)} fields")
        pairs.append(_pair(f"{path}:{line_no}", row[0], row[1], POSITIVE))
    return pairs


def _glue_kind(path: Path) -> str | None:
    """`index` for GLUE RTE/QNLI files, `qqp` for QQP files (header or header-less), else None."""
    lines = decoded_lines(path)
    if not lines:
        return None
    first = lines[0]
    if first.split("\t")[0] == "index":
        return "index"
    if first.startswith("id\tqid1\tqid2\t") or first.rstrip() == "id\tquestion1\tquestion2" \
            or _QQP_ROW.match(first):
        return "qqp"
    return None


def read_nli_pairs(path: str | Path, columns: Mapping[str, str] | None = None) -> list[NLIPair]:
    """Any of the formats above, told apart by the path: a directory is SentEval SNLI, SICK*.txt is
    SICK, another .txt a positive-only list, a .tsv with an index column GLUE RTE/QNLI, a .tsv with
    QQP's columns (or, header-less, three integer ids first) QQP, else a pair table (whose columns
    `columns` renames; the other formats have fixed columns)."""
    path = Path(path)
    kind = _glue_kind(path) if path.is_file() and path.suffix.lower() == ".tsv" else None
    if columns and (path.is_dir() or path.suffix.lower() == ".txt" or kind is not None):
        raise ConfigError(f"{path}: column roles apply to pair tables (.csv, .tsv, .jsonl with sentence1, sentence2, "
                          "label), not to this format, whose columns are fixed")
    if path.is_dir():
        pairs = read_senteval_snli(path)
    elif not path.is_file():
        raise InputFileError(f"pair file not found: {path}")
    elif path.suffix.lower() == ".txt":
        pairs = sick_nli_pairs(path) if path.name.upper().startswith("SICK") else read_positive_pairs(path)
    else:
        pairs = (read_glue_nli(path) if kind == "index" else read_qqp(path) if kind == "qqp"
                 else read_nli_table(path, columns))
    if not pairs:
        raise InputFileError(f"{path} holds no sentence pairs")
    return pairs


def label_fraction(pairs: Sequence[NLIPair], fraction: float, seed: int = 0) -> list[NLIPair]:
    """The pairs with a seeded, class-stratified `fraction` of each class's labels kept
    (round(fraction * n_class), at least one per class when fraction > 0) and the others unlabelled;
    the order of the pairs is kept."""
    if not 0.0 <= fraction <= 1.0 or math.isnan(fraction):
        raise ConfigError(f"label fraction must be in [0, 1], got {fraction}")
    by_class: dict[object, list[int]] = {}
    for i, (_, _, label) in enumerate(pairs):
        if label is not None:
            by_class.setdefault(label, []).append(i)
    rng = np.random.default_rng(seed)
    kept: set[int] = set()
    for label in sorted(by_class, key=str):
        members = by_class[label]
        count = 0 if fraction == 0 else max(1, round(fraction * len(members)))
        kept.update(int(i) for i in rng.permutation(members)[:count])
    return [(first, second, label if label is None or i in kept else None)
            for i, (first, second, label) in enumerate(pairs)]


def positive_only(pairs: Sequence[NLIPair], positive: str) -> list[NLIPair]:
    """Positive-unlabelled data from labelled pairs: pairs labelled `positive` become POSITIVE, every
    other pair (negatives included) unlabelled; the order is kept. Combine with `label_fraction` to
    keep only a share of the positives labelled."""
    if not any(label == positive for _, _, label in pairs):
        raise ConfigError(f"no pair is labelled {positive!r}; labels present: "
                          f"{sorted({str(label) for _, _, label in pairs})}")
    return [(first, second, POSITIVE if label == positive else None) for first, second, label in pairs]
