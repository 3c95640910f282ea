"""The written domain files and the fast adapt call that the adapt tests share (tests/adaptation/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sentforge
import adapt_worker
from conftest import CORPUS

SENTENCES = sorted(set(CORPUS))
TEXTS = [f"{a} and {b}" for a in SENTENCES for b in SENTENCES if a != b][:40]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture()
def domain(tmp_path) -> Path:
    return write_domain(tmp_path / "data")


def write_domain(data: Path) -> Path:
    """unlabelled.txt, labelled.jsonl (positive pairs), partial.jsonl (0/1 labels, some empty), dev.jsonl and
    test.jsonl (re-ranking), pairs-dev.jsonl (labelled pairs whose positives are identical texts) in `data`."""
    data.mkdir(parents=True)
    (data / "unlabelled.txt").write_text("".join(f"{t}\n" for t in TEXTS), encoding="utf-8")
    n = len(SENTENCES)
    write_jsonl(data / "labelled.jsonl", [{"sentence1": SENTENCES[i], "sentence2": f"{SENTENCES[i]} and "
                                           f"{SENTENCES[(i + 1) % n]}"} for i in range(n)])
    write_jsonl(data / "partial.jsonl", [{"sentence1": SENTENCES[i], "sentence2": SENTENCES[(i + k) % n],
                                          "label": (1 if k == 1 else 0) if i < 6 else None}
                                         for i in range(n) for k in (1, 5)])
    queries = [{"query": SENTENCES[i], "positive": [f"{SENTENCES[i]} and {SENTENCES[(i + 2) % n]}"],
                "negative": [SENTENCES[(i + 3) % n], f"{SENTENCES[(i + 4) % n]} and {SENTENCES[(i + 6) % n]}"]}
               for i in range(n)]
    write_jsonl(data / "dev.jsonl", queries[:8])
    write_jsonl(data / "test.jsonl", queries[8:])
    write_jsonl(data / "pairs-dev.jsonl", [{"sentence1": s, "sentence2": s, "label": 1} for s in SENTENCES[:6]]
                + [{"sentence1": SENTENCES[i], "sentence2": SENTENCES[i + 6], "label": 0} for i in range(6)])
    return data


def run(model, data: Path, output: Path, **settings):
    options = {**adapt_worker.FAST, **settings}
    return sentforge.adapt(str(model), data / "unlabelled.txt", options.pop("dev", data / "dev.jsonl"), output,
                           labelled=options.pop("labelled", data / "labelled.jsonl"), **options)
