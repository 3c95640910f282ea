"""The result of `sentforge.explain`: every word's influence on the similarity of two texts."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class WordInfluence:
    """One whole word of one text and its influence on the cosine similarity of the pair.

    `deletion`: similarity - similarity with this word removed (positive: the word makes the texts more
    similar). `gradient`: its integrated-gradients attribution, summed over its word pieces and their
    embedding dimensions. None where that method was not run. `unknown`: the tokenizer maps the word only to
    its unknown token (an emoji for an uncased BERT vocabulary, say), so the model sees it as it sees any
    other unknown word.
    """

    word: str
    start: int  # character span in the explained text
    end: int
    deletion: float | None = None
    gradient: float | None = None
    unknown: bool = False


@dataclass(frozen=True)
class TextExplanation:
    """One text of the pair: the text as the model reads it, its words, and the attribution of every input token
    (special tokens included; None without gradients)."""

    text: str
    words: tuple[WordInfluence, ...]
    token_gradients: tuple[float, ...] | None = None
    words_in_text: int | None = None  # all its words; more than len(words) when the model's max length cut it


@dataclass(frozen=True)
class GradientSummary:
    """How the integrated gradients were computed and how well they add up.

    `baseline` "each": text a's attributions add up to similarity - baseline_similarity[0] (a from all padding,
    b as it is), text b's to similarity - baseline_similarity[1]; "pair": both texts' attributions together
    add up to similarity - baseline_similarity[0] (both from all padding). `completeness_gap`: the sums minus
    those differences (captum's integration error; one per text for "each", one for "pair").
    """

    steps: int
    baseline: str
    similarity: float  # cosine of the pair through the embeddings path
    baseline_similarity: tuple[float, float]
    completeness_gap: tuple[float, ...]


@dataclass(frozen=True)
class Explanation:
    """Which words make two texts similar, by leave-one-word-out deletion and by integrated gradients."""

    model: str
    similarity: float  # cosine similarity of the two texts (their encoded vectors)
    a: TextExplanation
    b: TextExplanation
    methods: tuple[str, ...]  # "deletion" and/or "gradients", as computed
    gradients: GradientSummary | None = None
    warnings: tuple[str, ...] = ()  # what limits the explanation: cut texts, texts the model cannot read

    def ranked(self, top: int | None = None) -> list[tuple[str, WordInfluence]]:
        """("a" or "b", word) pairs by decreasing absolute influence (deletion, else gradient), at most `top`."""
        def size(item: tuple[str, WordInfluence]) -> float:
            word = item[1]
            value = word.deletion if word.deletion is not None else word.gradient
            return abs(value) if value is not None else 0.0

        items = [("a", word) for word in self.a.words] + [("b", word) for word in self.b.words]
        ranked = sorted(items, key=size, reverse=True)
        return ranked if top is None else ranked[:top]

    def sign_agreement(self, top: int | None = None) -> tuple[int, int]:
        """(words where deletion and gradient have the same sign, words where both are non-zero), over all words
        or over the `top` most influential ones."""
        both = [w for _, w in self.ranked(top)
                if w.deletion is not None and w.gradient is not None and w.deletion != 0 and w.gradient != 0]
        return sum(1 for w in both if (w.deletion > 0) == (w.gradient > 0)), len(both)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
