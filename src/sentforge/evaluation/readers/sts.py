"""Readers of the STS formats: SemEval STS (input and gold file per subset), STS Benchmark, SICK.

`normalize` says how a sentence is kept: `join_tokens` (SentEval's view: whitespace-split tokens joined
by single spaces) or `keep_text` (as written, without surrounding whitespace).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sentforge.data.texts import decoded_lines
from sentforge.errors import InputFileError
from sentforge.evaluation.readers.files import read_lines

SENTEVAL_STS = "senteval/downstream/STS"
SENTEVAL_SICK = "senteval/downstream/SICK"
# STS Benchmark test below the data root: SentEval-processed, and the original distribution's file.
STSB_PROCESSED = f"{SENTEVAL_STS}/STSBenchmark/sts-test.csv"
STSB_RAW = f"{SENTEVAL_STS}/STSBenchmark/stsbenchmark/sts-test.csv"
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


def split_fields(line: str, path: Path, line_no: int, needed: int) -> list[str]:
    fields = line.split("\t")
    if len(fields) < needed:
        raise InputFileError(f"{path}, line {line_no}: expected at least {needed} tab-separated fields, "
                             f"found {len(fields)}")
    return fields


def read_semeval_sts(input_path: Path, gold_path: Path, name: str,
                     normalize: Callable[[str], str] = join_tokens) -> STSPairs:
    """SemEval STS format: `input` holds `sentence1<TAB>sentence2[<TAB>source notes…]` per line, `gold`
    one score per line; an empty gold line marks a pair that was not scored, which is skipped."""
    inputs, golds = read_lines(input_path), read_lines(gold_path)
    if len(inputs) != len(golds):
        raise InputFileError(f"{input_path} has {len(inputs)} lines but its gold file {gold_path} has "
                             f"{len(golds)}; they must pair up line by line")
    first, second, scores = [], [], []
    for line_no, (line, gold) in enumerate(zip(inputs, golds), 1):
        fields = split_fields(line, input_path, line_no, 2)
        if not gold.strip():
            continue
        scores.append(parse_score(gold, f"{gold_path}, line {line_no}"))
        first.append(normalize(fields[0]))
        second.append(normalize(fields[1]))
    return STSPairs(name, first, second, np.asarray(scores, dtype=np.float64), str(gold_path))


def read_stsbenchmark(path: Path, normalize: Callable[[str], str] = join_tokens) -> STSPairs:
    """STS Benchmark CSV: tab-separated genre, file, years, id, score, sentence1, sentence2 [, sources];
    no header and no quoting (quotes are part of the sentences)."""
    first, second, scores = [], [], []
    for line_no, line in enumerate(read_lines(path), 1):
        fields = split_fields(line, path, line_no, 7)
        scores.append(parse_score(fields[4], f"{path}, line {line_no}"))
        first.append(normalize(fields[5]))
        second.append(normalize(fields[6]))
    return STSPairs(path.stem, first, second, np.asarray(scores, dtype=np.float64), str(path))


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
