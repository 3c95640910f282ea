"""`sentforge.util` against `sentence_transformers.util` on the same in-memory vectors: the score matrices and
pairwise scores to float rounding, and `semantic_search`'s hits (ids in the same order, scores to 1e-6), chunked
or not; and what `.half()` does on the CPU, where sentence-transformers' habit meets sentforge's float32 vectors."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from sentforge import build_encoder, util
from sentforge.support.errors import ConfigError

from conftest import CORPUS

st_util = pytest.importorskip("sentence_transformers.util")

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def vectors(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, 16)).astype(np.float32)


@pytest.mark.parametrize("name", ["cos_sim", "dot_score", "euclidean_sim", "manhattan_sim", "pairwise_cos_sim",
                                  "pairwise_dot_score", "pairwise_euclidean_sim", "pairwise_manhattan_sim"])
def test_scores_equal_sentence_transformers_util(name):
    a, b = vectors(5, 0), vectors(5, 1)
    for first, second in [(a, b), (torch.from_numpy(a), list(torch.from_numpy(b)))]:
        got, expected = getattr(util, name)(first, second), getattr(st_util, name)(first, second)
        assert isinstance(got, torch.Tensor) and got.shape == expected.shape
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)
    if not name.startswith("pairwise"):  # one vector is a batch of one
        torch.testing.assert_close(getattr(util, name)(a[0], b), getattr(st_util, name)(a[0], b), atol=1e-6, rtol=0)


@pytest.mark.parametrize("chunks", [{}, {"query_chunk_size": 3, "corpus_chunk_size": 7}])
@pytest.mark.parametrize("top_k", [1, 5, 40])
@pytest.mark.parametrize("score", ["cos_sim", "dot_score"])
def test_semantic_search_equals_sentence_transformers(chunks, top_k, score):
    queries, corpus = vectors(8, 2), vectors(30, 3)
    got = util.semantic_search(queries, corpus, top_k=top_k, score_function=getattr(util, score), **chunks)
    expected = st_util.semantic_search(torch.from_numpy(queries), torch.from_numpy(corpus), top_k=top_k,
                                       score_function=getattr(st_util, score), **chunks)
    assert [[hit["corpus_id"] for hit in hits] for hits in got] == [[hit["corpus_id"] for hit in hits]
                                                                   for hits in expected]
    np.testing.assert_allclose([[hit["score"] for hit in hits] for hits in got],
                               [[hit["score"] for hit in hits] for hits in expected], atol=1e-6)
    assert all(isinstance(hit["corpus_id"], int) and isinstance(hit["score"], float) for hits in got for hit in hits)


def test_semantic_search_ties_go_to_the_lower_row_across_chunks_and_bad_sizes_are_refused():
    corpus = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    hits = util.semantic_search(corpus[:1], corpus, top_k=3, corpus_chunk_size=2)[0]
    assert [hit["corpus_id"] for hit in hits] == [0, 2, 3]
    assert util.semantic_search(corpus[:1], np.zeros((0, 2), np.float32)) == [[]]
    with pytest.raises(ConfigError, match="top_k must be >= 1, got 0"):
        util.semantic_search(corpus, corpus, top_k=0)


def test_half_on_the_cpu_says_once_that_it_computes_in_float16_and_returns_float32(tiny_bert_dir, caplog):
    encoder = build_encoder(tiny_bert_dir, pooling="mean")
    full = encoder.encode(CORPUS[:4])
    with caplog.at_level(logging.WARNING):
        half = encoder.half().encode(CORPUS[:4])
        encoder.encode(CORPUS[:2])
    notes = [r.getMessage() for r in caplog.records if ".half()" in r.getMessage()]
    assert len(notes) == 1 and "computes in float16" in notes[0] and "returned as float32" in notes[0]
    assert half.dtype == np.float32
    np.testing.assert_allclose(half, full, atol=5e-2)  # float16 arithmetic, the same model
    caplog.clear()
    encoder.float().encode(CORPUS[:2])
    assert not caplog.records
