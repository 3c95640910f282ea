"""Similar pairs of a dev file, for the explanation benchmarks: a re-ranking .jsonl gives (query, positive)
pairs, a labelled-pairs .jsonl its label-1 pairs. Imported by explain_pos.py and explain_examples.py."""

from __future__ import annotations

from pathlib import Path

from sentforge.evaluation.own.load import detect_kind
from sentforge.evaluation.own.pairs import read_labelled_pairs
from sentforge.evaluation.own.reranking import read_reranking


def similar_pairs(path: Path) -> list[tuple[str, str]]:
    """Every (text, similar text) pair of `path`, in file order (a query's positives in their order)."""
    kind = detect_kind(path)
    if kind == "reranking":
        return [(query.query, text) for query in read_reranking(path)
                for text, relevant in zip(query.candidates, query.relevant) if relevant]
    if kind == "labelled-pairs":
        pairs = read_labelled_pairs(path)
        return [(a, b) for a, b, label in zip(pairs.sentences1, pairs.sentences2, pairs.labels) if label == 1]
    raise SystemExit(f"error: {path}: expected re-ranking or labelled-pairs data, got {kind}")
