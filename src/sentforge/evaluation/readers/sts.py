"""Readers of the STS formats: SemEval STS (input and gold file per subset), STS Benchmark, SICK.

`normalize` says how a sentence is kept: `join_tokens` (SentEval's view: whitespace-split tokens joined
by single spaces) or `keep_text` (as written, without surrounding whitespace). The records, these two and
the SICK reader live in `sentforge.data.scored_pairs` (training reads SICK too); `__all__` names them here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from sentforge.data.files import read_lines
from sentforge.data.scored_pairs import (
    SICK_COLUMNS,
    SickPairs,
    STSPairs,
    join_tokens,
    keep_text,
    parse_score,
    read_sick,
)
from sentforge.support.errors import InputFileError

SENTEVAL_STS = "senteval/downstream/STS"
SENTEVAL_SICK = "senteval/downstream/SICK"
# STS Benchmark test below the data root: SentEval-processed, and the original distribution's file.
STSB_PROCESSED = f"{SENTEVAL_STS}/STSBenchmark/sts-test.csv"
STSB_RAW = f"{SENTEVAL_STS}/STSBenchmark/stsbenchmark/sts-test.csv"

__all__ = ["SENTEVAL_SICK", "SENTEVAL_STS", "SICK_COLUMNS", "STSB_PROCESSED", "STSB_RAW", "STSPairs", "SickPairs",
           "join_tokens", "keep_text", "parse_score", "read_semeval_sts", "read_sick", "read_stsbenchmark",
           "split_fields"]


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
