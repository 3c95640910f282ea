"""BM25: the lexical baseline of the USEB domain tasks (re-ranking, retrieval, paraphrase identification).

BM25 scores texts directly; it has no `encode`. Tasks that accept it call one of three methods:

- `score(queries, candidate_lists)`: one score per candidate of each query (re-ranking);
- `search(queries, corpus, k)`: the `k` best documents of a pool for each query (retrieval);
- `pair_scores(texts_a, texts_b)`: one symmetric score per pair (paraphrase identification).

Scoring uses `bm25s` with Lucene's formula. Document statistics (IDF, average length) come from the
whole collection a call is given (every distinct candidate, the pool, or every sentence of the pairs),
not from one query's short list, so that rare words weigh as they do in the domain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
from tqdm.auto import tqdm

from sentforge.support.errors import ConfigError
from sentforge.support.top_k import top_k


def _progress_disabled(show_progress: bool | None) -> bool | None:
    """tqdm's `disable`: None hides the bar when stderr is not a terminal."""
    return None if show_progress is None else not show_progress


class BM25Index:
    """A BM25 index over a fixed list of documents; `scores(query)` gives one score per document."""

    def __init__(self, documents: Sequence[str], k1: float, b: float, stopwords: str | None) -> None:
        self.stopwords = stopwords
        self.size = len(documents)
        self._retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._retriever.index(self.tokenize(documents), show_progress=False)

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """Lower-cased word tokens of two or more characters, English stop words removed (bm25s)."""
        return bm25s.tokenize(list(texts), stopwords=self.stopwords or [], return_ids=False, show_progress=False)

    def scores_for_tokens(self, tokens: list[str]) -> np.ndarray:
        if not tokens:  # a query with no indexable word matches nothing
            return np.zeros(self.size, dtype=np.float32)
        return self._retriever.get_scores(tokens)


@dataclass
class BM25Scorer:
    """BM25 with the Lucene/Elasticsearch defaults k1=1.2, b=0.75 (the engine behind the BM25 rows of the
    USEB/TSDAE tables); `stopwords="en"` drops English stop words, `None` keeps every word."""

    k1: float = 1.2
    b: float = 0.75
    stopwords: str | None = "en"
    show_progress: bool | None = None
    name: str = "bm25"

    def __post_init__(self) -> None:
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise ConfigError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")

    def index(self, documents: Sequence[str]) -> BM25Index:
        return BM25Index(documents, self.k1, self.b, self.stopwords)

    def score(self, queries: Sequence[str], candidate_lists: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """For each query, the BM25 score (float32) of each of its candidates, in the candidates' order."""
        if len(queries) != len(candidate_lists):
            raise ConfigError(f"{len(queries)} queries but {len(candidate_lists)} candidate lists")
        documents = list(dict.fromkeys(text for candidates in candidate_lists for text in candidates))
        row = {text: i for i, text in enumerate(documents)}
        index = self.index(documents)
        query_tokens = index.tokenize(queries)
        return [index.scores_for_tokens(tokens)[[row[text] for text in candidates]]
                for tokens, candidates in tqdm(list(zip(query_tokens, candidate_lists)), desc="BM25 re-ranking",
                                               disable=_progress_disabled(self.show_progress))]

    def search(self, queries: Sequence[str], corpus: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The `k` best documents of `corpus` for each query: scores and corpus indices, both (n_queries, k),
        best first; ties go to the lower index."""
        index = self.index(corpus)
        k = min(k, len(corpus))
        best_scores = np.zeros((len(queries), k), dtype=np.float32)
        best_ids = np.zeros((len(queries), k), dtype=np.int64)
        for i, tokens in enumerate(tqdm(index.tokenize(queries), desc="BM25 search",
                                        disable=_progress_disabled(self.show_progress))):
            scores, ids = top_k(index.scores_for_tokens(tokens)[None, :], k)
            best_scores[i], best_ids[i] = scores[0], ids[0]
        return best_scores, best_ids

    def pair_scores(self, texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
        """A symmetric BM25 similarity per pair: the mean of BM25(a -> b) and BM25(b -> a), with statistics
        from every distinct sentence of the pairs."""
        if len(texts_a) != len(texts_b):
            raise ConfigError(f"{len(texts_a)} first texts but {len(texts_b)} second texts")
        documents = list(dict.fromkeys([*texts_a, *texts_b]))
        row = {text: i for i, text in enumerate(documents)}
        index = self.index(documents)
        tokens = dict(zip(documents, index.tokenize(documents)))
        scores = np.zeros(len(texts_a), dtype=np.float64)
        for i, (a, b) in enumerate(tqdm(list(zip(texts_a, texts_b)), desc="BM25 pairs",
                                        disable=_progress_disabled(self.show_progress))):
            scores[i] = 0.5 * (index.scores_for_tokens(tokens[a])[row[b]] + index.scores_for_tokens(tokens[b])[row[a]])
        return scores


def load_bm25(show_progress: bool | None = None) -> BM25Scorer:
    """The scorer that the model spec `bm25` names, with its defaults."""
    return BM25Scorer(show_progress=show_progress)
