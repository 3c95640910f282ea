"""Readers of SentEval's transfer-task files (`data/downstream`), decoded as the official code decodes them:
MR, CR, SUBJ, MPQA and TREC as Latin-1, SST and MRPC as UTF-8; every sentence split on whitespace."""

from __future__ import annotations

from pathlib import Path

from sentforge.data.files import numbered_lines, read_text
from sentforge.support.errors import InputFileError

TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")  # SentEval's label order


def read_sentences(path: Path) -> list[list[str]]:
    """A one-sentence-per-line file (MR, CR, SUBJ, MPQA) as SentEval's `loadFile` reads it: Latin-1,
    `splitlines()`, whitespace tokens. Empty lines are kept as empty samples, as SentEval keeps them."""
    tokens = [line.split() for line in read_text(path, "latin-1").splitlines()]
    if not tokens:
        raise InputFileError(f"{path}: no sentences")
    return tokens


def read_sst_binary(path: Path) -> tuple[list[list[str]], list[int]]:
    """SentEval's SST binary files: `<tokenised sentence>\\t<0|1>` per line, UTF-8."""
    samples, labels = [], []
    for number, line in numbered_lines(path, "utf-8"):
        fields = line.strip().split("\t")
        if len(fields) != 2 or fields[1] not in ("0", "1"):
            raise InputFileError(f"{path}, line {number}: expected '<sentence>\\t<0 or 1>', got {line[:80]!r}")
        samples.append(fields[0].split())
        labels.append(int(fields[1]))
    return samples, labels


def read_trec(path: Path) -> tuple[list[list[str]], list[int]]:
    """TREC question classification: `<COARSE>:<fine> <question>` per line, Latin-1; coarse labels."""
    samples, labels = [], []
    for number, line in numbered_lines(path, "latin-1"):
        target, _, rest = line.strip().partition(":")
        fine_and_question = rest.split(" ", 1)
        if target not in TREC_CLASSES or len(fine_and_question) != 2:
            raise InputFileError(f"{path}, line {number}: expected '<{'|'.join(TREC_CLASSES)}>:<fine label> "
                                 f"<question>', got {line[:80]!r}")
        samples.append(fine_and_question[1].split())
        labels.append(TREC_CLASSES.index(target))
    return samples, labels


def read_mrpc(path: Path) -> tuple[list[list[str]], list[list[str]], list[int]]:
    """`msr_paraphrase_{train,test}.txt`: a header, then `Quality\\t#1 ID\\t#2 ID\\t#1 String\\t#2 String`."""
    first, second, labels = [], [], []
    for number, line in numbered_lines(path, "utf-8")[1:]:
        fields = line.strip().split("\t")
        if len(fields) < 5 or fields[0] not in ("0", "1"):
            raise InputFileError(f"{path}, line {number}: expected 'Quality\\t#1 ID\\t#2 ID\\t#1 String\\t#2 String' "
                                 f"with Quality 0 or 1, got {line[:80]!r}")
        first.append(fields[3].split())
        second.append(fields[4].split())
        labels.append(int(fields[0]))
    if not labels:
        raise InputFileError(f"{path}: no sentence pairs after the header")
    return first, second, labels

