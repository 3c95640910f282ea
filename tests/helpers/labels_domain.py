"""The tiny labelled data of the labels tests (tests/learning_curve/test_labels.py, test_labels_ray.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import CORPUS

SENTENCES = sorted(set(CORPUS))


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_domain(data: Path) -> Path:
    """DATA/labelled.jsonl (12 positive pairs) and DATA/dev.jsonl (8 re-ranking queries) from CORPUS."""
    data.mkdir()
    n = len(SENTENCES)
    write_jsonl(data / "labelled.jsonl", [{"sentence1": SENTENCES[i], "sentence2": f"{SENTENCES[i]} and "
                                           f"{SENTENCES[(i + 1) % n]}"} for i in range(n)])
    write_jsonl(data / "dev.jsonl", [{"query": SENTENCES[i],
                                      "positive": [f"{SENTENCES[i]} and {SENTENCES[(i + 2) % n]}"],
                                      "negative": [SENTENCES[(i + 3) % n], SENTENCES[(i + 5) % n]]} for i in range(8)])
    return data
