"""A query with its candidates and their relevance, and WikiQA's files read into such queries (for the
WikiQA re-ranking task and for training on WikiQA's answers)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sentforge.data.files import read_lines
from sentforge.support.errors import InputFileError


@dataclass(frozen=True)
class RankingQuery:
    """A query, its candidates in tie-breaking order, and which candidates are relevant."""

    qid: str
    query: str
    candidates: tuple[str, ...]
    relevant: tuple[bool, ...]
    # Relevant documents judged for the query, counting any that are not among the candidates (trec_eval's
    # AP denominator); None: the relevant candidates.
    judged_relevant: int | None = None

    @property
    def has_positive(self) -> bool:
        return any(self.relevant)


def read_wikiqa(split_dir: Path) -> list[RankingQuery]:
    """WikiQA in the a.toks / b.toks / sim.txt / id.txt layout: one question–candidate pair per line,
    grouped by question id in file order."""
    files = {name: split_dir / name for name in ("id.txt", "a.toks", "b.toks", "sim.txt")}
    columns = {name: read_lines(path) for name, path in files.items()}
    lengths = {len(lines) for lines in columns.values()}
    if len(lengths) != 1:
        counts = ", ".join(f"{name} {len(lines)}" for name, lines in columns.items())
        raise InputFileError(f"{split_dir}: the WikiQA files must have one line per pair each; lines: {counts}")
    grouped: dict[str, tuple[str, list[str], list[bool]]] = {}
    for line_no, (qid, question, answer, label) in enumerate(zip(*columns.values()), 1):
        if label.strip() not in ("0", "1"):
            raise InputFileError(f"{files['sim.txt']}, line {line_no}: label must be 0 or 1, not {label!r}")
        if not qid.strip():
            raise InputFileError(f"{files['id.txt']}, line {line_no}: empty question id")
        _, candidates, relevant = grouped.setdefault(qid.strip(), (question.strip(), [], []))
        candidates.append(answer.strip())
        relevant.append(label.strip() == "1")
    return [RankingQuery(qid, text, tuple(candidates), tuple(relevant))
            for qid, (text, candidates, relevant) in grouped.items()]
