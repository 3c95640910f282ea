"""The BM25 baseline: scores equal Lucene's formula worked by hand; re-ranking, search and pair scores agree."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from sentforge.baselines import BM25Scorer, load_bm25
from sentforge.support.errors import ConfigError

STOPWORDS = {"the", "a", "on", "in", "is", "and", "of"}


def words(text: str) -> list[str]:
    """The tokens bm25s keeps: lower-cased words of two or more characters, English stop words removed."""
    return [w for w in re.findall(r"\b\w\w+\b", text.lower()) if w not in STOPWORDS]


def lucene_bm25(query: str, documents: list[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """Lucene's BM25, written out: sum over query tokens of idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)),
    idf = ln(1 + (N - df + 0.5) / (df + 0.5))."""
    docs = [words(d) for d in documents]
    avgdl = sum(len(d) for d in docs) / len(docs)
    scores = np.zeros(len(docs))
    for term in words(query):
        df = sum(term in d for d in docs)
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        for i, doc in enumerate(docs):
            tf = doc.count(term)
            scores[i] += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))
    return scores


DOCS = ["the cat sat on the mat", "a dog runs in the park", "the cat and the dog", "cat cat cat",
        "stock markets fell sharply", "markets rally on strong earnings"]


def test_index_scores_equal_lucene_formula_by_hand():
    index = BM25Scorer().index(DOCS)
    for query in ("cat", "dog park", "cat cat dog", "markets earnings fell", "unknown words"):
        np.testing.assert_allclose(index.scores_for_tokens(words(query)), lucene_bm25(query, DOCS), rtol=1e-5)


def test_stop_words_are_dropped_unless_disabled():
    assert np.all(BM25Scorer().index(DOCS).scores_for_tokens(BM25Scorer().index(DOCS).tokenize(["the"])[0]) == 0)
    keep_all = BM25Scorer(stopwords=None).index(DOCS)
    assert keep_all.scores_for_tokens(keep_all.tokenize(["the"])[0])[0] > 0


def test_rerank_scores_use_statistics_of_all_candidates():
    queries = ["cat", "markets fell"]
    candidates = [DOCS[:4], DOCS[4:]]
    scores = BM25Scorer(show_progress=False).score(queries, candidates)
    # the index holds every distinct candidate, so both queries see the same six documents
    np.testing.assert_allclose(scores[0], lucene_bm25("cat", DOCS)[:4], rtol=1e-5)
    np.testing.assert_allclose(scores[1], lucene_bm25("markets fell", DOCS)[4:], rtol=1e-5)
    assert [s.shape for s in scores] == [(4,), (2,)]


def test_search_returns_the_best_documents_in_order():
    scorer = BM25Scorer(show_progress=False)
    queries = ["cat dog", "markets", "nothing matches here"]
    top_scores, top_ids = scorer.search(queries, DOCS, k=3)
    for row, query in enumerate(queries):
        expected = lucene_bm25(query, DOCS)
        order = np.argsort(-expected, kind="stable")[:3]  # ties (e.g. all zero) go to the lower index
        np.testing.assert_array_equal(top_ids[row], order)
        np.testing.assert_allclose(top_scores[row], expected[order], rtol=1e-5, atol=1e-7)
    assert scorer.search(["cat"], DOCS, k=100)[1].shape == (1, len(DOCS))


def test_pair_scores_are_symmetric_means_of_both_directions():
    first = ["cat sat on the mat", "dog runs", "markets fell"]
    second = ["the cat sat", "stock markets", "markets fell sharply"]
    scorer = BM25Scorer(show_progress=False)
    scores = scorer.pair_scores(first, second)
    np.testing.assert_allclose(scores, scorer.pair_scores(second, first))
    documents = list(dict.fromkeys(first + second))
    for i, (a, b) in enumerate(zip(first, second)):
        forward = lucene_bm25(a, documents)[documents.index(b)]
        backward = lucene_bm25(b, documents)[documents.index(a)]
        assert scores[i] == pytest.approx((forward + backward) / 2, rel=1e-5)
    assert scores[1] == 0.0  # no shared word


def test_bad_arguments_raise_config_errors():
    with pytest.raises(ConfigError, match="k1 >= 0"):
        BM25Scorer(k1=-1)
    with pytest.raises(ConfigError, match="0 <= b <= 1"):
        BM25Scorer(b=2)
    with pytest.raises(ConfigError, match="2 queries but 1 candidate lists"):
        BM25Scorer().score(["a", "b"], [["x"]])
    with pytest.raises(ConfigError, match="2 first texts but 1 second texts"):
        BM25Scorer().pair_scores(["a", "b"], ["x"])


def test_load_bm25_is_a_lexical_scorer_not_an_encoder():
    from sentforge.evaluation.similarity import is_lexical

    scorer = load_bm25()
    assert scorer.name == "bm25" and not hasattr(scorer, "encode") and is_lexical(scorer)
