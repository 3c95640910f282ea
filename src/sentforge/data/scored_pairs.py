"""Scored sentence pairs (STS, SICK), how a sentence is kept, and SICK's file: read for evaluation
(`evaluation/readers/sts.py`) and for NLI training (`data/nli.py`).

`normalize` says how a sentence is kept: `join_tokens` (SentEval's view: whitespace-split tokens joined
by single spaces) or `keep_text` (as written, without surrounding whitespace).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sentforge.data.texts import decoded_lines
from sentforge.support.errors import InputFileError

SICK_COLUMNS = ("sentence_A", "sentence_B", "relatedness_score", "entailment_judgment")


@dataclass(frozen=True)
class STSPairs:
    """Scored sentence pairs of one subset; `source` is the file that holds the gold scores."""

    name: str
    sentences1: list[str]
    sentences2: list[str]
    scores: np.ndarray  # float64, one gold score per pair
    source: str = ""

    def __len__(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class SickPairs(STSPairs):
    """SICK pairs: relatedness is the gold score; each pair's entailment judgment and file line too."""

    entailment: tuple[str, ...] = ()
    lines: tuple[int, ...] = ()


def join_tokens(text: str) -> str:
    """SentEval's view of a line: whitespace-split tokens joined by single spaces."""
    return " ".join(text.split())


def keep_text(text: str) -> str:
    """Raw originals are encoded as written, without surrounding whitespace."""
    return text.strip()


def parse_score(value: str, where: str) -> float:
    """A finite gold score; `where` names the file and line."""
    try:
        score = float(value)
    except ValueError:
        raise InputFileError(f"{where}: gold score {value!r} is not a number") from None
    if not np.isfinite(score):
        raise InputFileError(f"{where}: gold score {value!r} is not a finite number")
    return score


def read_sick(path: str | Path, normalize: Callable[[str], str] = join_tokens) -> SickPairs:
    """SICK's tab-separated files (SICK_train.txt, SICK_trial.txt, SICK_test_annotated.txt): a header row
    naming at least sentence_A, sentence_B, relatedness_score and entailment_judgment, then one pair per
    row, every row with the header's field count; blank lines are skipped."""
    path = Path(path)
    rows = [(line_no, line.split("\t")) for line_no, line in enumerate(decoded_lines(path), 1) if line.strip()]
    if not rows:
        raise InputFileError(f"{path}: empty file; expected a header line and SICK pairs")
    (_, header), pairs = rows[0], rows[1:]
    for line_no, fields in pairs:
        if len(fields) != len(header):
            raise InputFileError(f"{path}:{line_no}: {len(fields)} fields, the header has {len(header)}")
    if any(name not in header for name in SICK_COLUMNS):
        raise InputFileError(f"{path}:1: a SICK file needs the columns {', '.join(SICK_COLUMNS)}; "
                             f"found {', '.join(header)}")
    first_col, second_col, score_col, label_col = (header.index(name) for name in SICK_COLUMNS)
    return SickPairs(path.stem, [normalize(f[first_col]) for _, f in pairs],
                     [normalize(f[second_col]) for _, f in pairs],
                     np.asarray([parse_score(f[score_col], f"{path}:{n}") for n, f in pairs], dtype=np.float64),
                     str(path), entailment=tuple(f[label_col].strip() for _, f in pairs),
                     lines=tuple(n for n, _ in pairs))
