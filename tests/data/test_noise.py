"""TSDAE word-level noise: ratios, seeds, never-empty output, and what each kind does to the words."""

from __future__ import annotations

import numpy as np
import pytest

from sentforge.data.noise import NOISE_KINDS, WordNoise, split_words
from sentforge.support.errors import ConfigError

SENTENCE = " ".join(f"w{i}" for i in range(40))
VOCABULARY = ["apple", "river", "stone", "cloud"]


def _is_subsequence(short: list[str], long: list[str]) -> bool:
    remaining = iter(long)
    return all(word in remaining for word in short)


@pytest.mark.parametrize("ratio", [0.1, 0.3, 0.6, 0.9])
def test_delete_removes_the_requested_share_and_keeps_word_order(ratio):
    noise = WordNoise("delete", ratio, seed=1)
    outputs = [split_words(noise(SENTENCE)) for _ in range(200)]
    deleted = 1 - np.mean([len(words) for words in outputs]) / 40
    assert abs(deleted - ratio) < 0.03
    assert all(_is_subsequence(words, SENTENCE.split()) for words in outputs)


def test_delete_never_returns_an_empty_sentence():
    noise = WordNoise("delete", 1.0, seed=0)
    for text in ["one", "two words", SENTENCE]:
        for _ in range(20):
            words = split_words(noise(text))
            assert len(words) == 1 and words[0] in text.split()
    assert WordNoise("delete", 0.9)("  ") == "  "  # nothing to delete in a blank text


def test_same_seed_same_noise_and_caller_owned_streams():
    texts = [SENTENCE, "the cat sat on the mat", "a b c d e f g"]
    first, second = WordNoise(seed=7), WordNoise(seed=7)
    assert [first(t) for t in texts] == [second(t) for t in texts]
    assert [WordNoise(seed=8)(t) for t in texts] != [WordNoise(seed=7)(t) for t in texts]
    noise = WordNoise(seed=0)
    a = [noise(t, np.random.default_rng(3)) for t in texts]
    b = [noise(t, np.random.default_rng(3)) for t in texts]
    assert a == b


def test_swap_moves_every_chosen_word_and_keeps_the_words():
    words = SENTENCE.split()
    assert WordNoise("swap", 0.0)(SENTENCE) == SENTENCE
    swapped = split_words(WordNoise("swap", 1.0)(SENTENCE))
    assert sorted(swapped) == sorted(words)
    assert all(a != b for a, b in zip(swapped, words))
    partly = split_words(WordNoise("swap", 0.3, seed=2)(SENTENCE))
    assert sorted(partly) == sorted(words) and partly != words


def test_mask_replaces_words_with_the_mask_token():
    out = [split_words(WordNoise("mask", 0.5, mask_token="[MASK]", seed=s)(SENTENCE)) for s in range(50)]
    share = np.mean([sum(w == "[MASK]" for w in words) / 40 for words in out])
    assert abs(share - 0.5) < 0.05
    for words in out:
        assert len(words) == 40
        assert all(w == "[MASK]" or w == original for w, original in zip(words, SENTENCE.split()))


def test_replace_and_add_draw_from_the_vocabulary():
    replaced = split_words(WordNoise("replace", 0.5, vocabulary=VOCABULARY, seed=3)(SENTENCE))
    assert len(replaced) == 40
    changed = [w for w, original in zip(replaced, SENTENCE.split()) if w != original]
    assert changed and all(w in VOCABULARY for w in changed)
    added = split_words(WordNoise("add", 0.5, vocabulary=VOCABULARY, seed=3)(SENTENCE))
    extra = [w for w in added if w in VOCABULARY]
    assert len(added) == 40 + len(extra) and 10 < len(extra) < 30
    assert [w for w in added if w not in VOCABULARY] == SENTENCE.split()


def test_bad_settings_are_refused():
    with pytest.raises(ConfigError, match="unknown noise type"):
        WordNoise("shuffle")
    with pytest.raises(ConfigError, match="ratio"):
        WordNoise("delete", 1.5)
    for kind in ("replace", "add"):
        with pytest.raises(ConfigError, match="vocabulary"):
            WordNoise(kind, 0.3)
    assert set(NOISE_KINDS) == {"delete", "swap", "mask", "replace", "add"}
