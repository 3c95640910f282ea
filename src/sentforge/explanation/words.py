"""Whole words of a text and the model input tokens (word pieces) that make up each of them.

The words are the text split as the model's tokenizer pre-tokenises it (for BERT: at white space and
at every punctuation mark); a word's pieces are the tokens the fast tokenizer assigns to it
(`Encoding.word_ids`), and its span in the text is the union of their character offsets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

# The fallback split for models without a tokenizer of their own: words and single punctuation marks.
_WORD = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Word:
    """One whole word: its text, its character span in the text, and its token positions in the model input."""

    text: str
    start: int
    end: int
    tokens: tuple[int, ...] = ()
    unknown: bool = False  # every piece is the tokenizer's unknown token: the model cannot tell it from another


@dataclass(frozen=True)
class TokenizedText:
    """A text as the model reads it: the (normalised) text, its input ids and its words."""

    text: str
    ids: tuple[int, ...]
    words: tuple[Word, ...]
    words_in_text: int | None = None  # all words of the text, those cut off at the model's max length too
    max_tokens: int | None = None  # the model's max length, when it cut the text

    @property
    def special(self) -> tuple[int, ...]:
        """Token positions that belong to no word (special tokens such as [CLS], [SEP], </s>)."""
        in_words = {position for word in self.words for position in word.tokens}
        return tuple(i for i in range(len(self.ids)) if i not in in_words)


def words_from_tokens(text: str, word_ids: Sequence[int | None],
                      offsets: Sequence[tuple[int, int]]) -> tuple[Word, ...]:
    """Group the tokens of `text` into whole words.

    `word_ids[i]` is the word of token i (None for a special token), `offsets[i]` its character span in
    `text`. Words come in text order; zero-width tokens (e.g. a lone sentencepiece word marker) belong to
    their word but do not widen its span.
    """
    if len(word_ids) != len(offsets):
        raise ValueError(f"{len(word_ids)} word ids for {len(offsets)} offsets")
    groups: dict[int, list[int]] = {}
    for position, word_id in enumerate(word_ids):
        if word_id is not None:
            groups.setdefault(word_id, []).append(position)
    words = []
    for positions in groups.values():
        spans = [offsets[p] for p in positions if offsets[p][1] > offsets[p][0]]
        if not spans:  # only zero-width pieces: nothing of the text to show
            spans = [offsets[positions[0]]]
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
        words.append(Word(text[start:end], start, end, tuple(positions)))
    return tuple(sorted(words, key=lambda word: (word.start, word.tokens)))


def split_words(text: str) -> tuple[Word, ...]:
    """Words and punctuation marks, for models that expose no tokenizer (deletion needs no tokens)."""
    return tuple(Word(match.group(), match.start(), match.end()) for match in _WORD.finditer(text))


def _encode(input_module: Any, text: str) -> tuple[str, Any, int | None] | None:
    """The prepared text, its `tokenizers.Encoding` (ids, word ids, offsets) as the module tokenises it, and
    its words before truncation (None when not truncated); None for an input module without a word-aligned
    tokenizer."""
    from tokenizers import Tokenizer

    from sentforge.modules.backbone import HFBackbone
    from sentforge.modules.static import WordVectors

    if isinstance(input_module, HFBackbone):
        # A private copy of the Rust tokenizer, truncating as the model does.
        backend = Tokenizer.from_str(input_module.tokenizer.backend_tokenizer.to_str())
        backend.no_padding()
        backend.no_truncation()
        prepared = input_module.prepare(text)
        whole = backend.encode(prepared)
        backend.enable_truncation(input_module.max_seq_length)
        encoding = backend.encode(prepared)
        cut = len(whole.ids) > len(encoding.ids)
        return prepared, encoding, _count_words(whole.word_ids) if cut else None
    if isinstance(input_module, WordVectors):
        return text, input_module.tokenizer.encode(text, add_special_tokens=False), None
    return None


def _count_words(word_ids: Sequence[int | None]) -> int:
    return len({word for word in word_ids if word is not None})


def tokenize_words(model: Any, text: str) -> TokenizedText:
    """The words of `text` and their token positions, as `model` (an Encoder, or anything with `encode`) reads it.

    For an Encoder the ids are the input ids its `encode` uses (truncated to `max_seq_length`; words past
    the limit are not listed, since the model never sees them, but counted in `words_in_text`; neither are
    words a word-vector model has no vector for). A word whose pieces are all the unknown token is marked
    `unknown`. Other models get a plain word split without ids.
    """
    from sentforge.encoder import Encoder

    encoded = _encode(model.input_module, text) if isinstance(model, Encoder) else None
    if encoded is None:
        return TokenizedText(text, (), split_words(text))
    prepared, encoding, words_in_text = encoded
    words = words_from_tokens(prepared, encoding.word_ids, encoding.offsets)
    unknown_id = getattr(getattr(model.input_module, "tokenizer", None), "unk_token_id", None)
    if unknown_id is not None:
        words = tuple(replace(word, unknown=all(encoding.ids[p] == unknown_id for p in word.tokens)) for word in words)
    cut = words_in_text is not None
    return TokenizedText(prepared, tuple(encoding.ids), words, words_in_text if cut else len(words),
                         model.input_module.max_seq_length if cut else None)


def without_word(text: str, word: Word) -> str:
    """`text` with `word` removed; the text on its two sides is joined by one space, so that the words
    around it stay separate words."""
    left, right = text[:word.start].rstrip(), text[word.end:].lstrip()
    return f"{left} {right}" if left and right else left + right
