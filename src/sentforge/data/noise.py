"""Word-level input noise for denoising auto-encoders (TSDAE, Wang et al., 2021).

Words are whitespace-separated tokens (no NLTK, no downloads, any language that uses spaces), and
the noisy sentence is the words joined by single spaces. Five kinds, each applied to every word
independently with probability `ratio`:

  delete   the word is dropped (TSDAE's default and best noise, ratio 0.6)
  swap     the chosen words trade places (each moves one chosen slot on, cyclically)
  mask     the word becomes the mask token
  replace  the word becomes a word drawn from `vocabulary`
  add      a word drawn from `vocabulary` is inserted before the word

A non-empty sentence never comes out empty: when deletion would drop every word, one word chosen
at random stays (as sentence-transformers' DenoisingAutoEncoderDataset does).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from sentforge.support.errors import ConfigError

NOISE_KINDS = ("delete", "swap", "mask", "replace", "add")
_WORD = re.compile(r"\S+")


def split_words(text: str) -> list[str]:
    return _WORD.findall(text)


class WordNoise:
    """A seeded word-level noise function: `noise(text)` or `noise(text, rng)` returns the noisy text.

    `rng` (a numpy Generator) lets a caller own the random stream, e.g. to make training resumable;
    without it the function draws from its own generator, seeded with `seed`.
    """

    def __init__(self, kind: str = "delete", ratio: float = 0.6, mask_token: str = "[MASK]",
                 vocabulary: Sequence[str] = (), seed: int = 0) -> None:
        if kind not in NOISE_KINDS:
            raise ConfigError(f"unknown noise type {kind!r}; choose one of {', '.join(NOISE_KINDS)}")
        if not 0.0 <= ratio <= 1.0:
            raise ConfigError(f"noise ratio must be in [0, 1], got {ratio}")
        if kind in ("replace", "add") and not vocabulary:
            raise ConfigError(f"{kind!r} noise draws words from a vocabulary; none was given")
        if kind == "mask" and not mask_token:
            raise ConfigError("mask noise needs a mask token")
        self.kind = kind
        self.ratio = float(ratio)
        self.mask_token = mask_token
        self.vocabulary = list(vocabulary)
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"WordNoise(kind={self.kind!r}, ratio={self.ratio})"

    def __call__(self, text: str, rng: np.random.Generator | None = None) -> str:
        rng = self.rng if rng is None else rng
        words = split_words(text)
        if not words:
            return text
        chosen = rng.random(len(words)) < self.ratio
        if self.kind == "delete":
            if chosen.all():
                chosen[rng.integers(len(words))] = False
            words = [w for w, drop in zip(words, chosen) if not drop]
        elif self.kind == "swap":
            slots = np.flatnonzero(chosen)
            if len(slots) > 1:
                moved = [words[i] for i in slots]
                for slot, word in zip(np.roll(slots, 1), moved):
                    words[slot] = word
        elif self.kind == "mask":
            words = [self.mask_token if c else w for w, c in zip(words, chosen)]
        else:
            picks = rng.integers(len(self.vocabulary), size=int(chosen.sum()))
            drawn = iter(self.vocabulary[i] for i in picks)
            if self.kind == "replace":
                words = [next(drawn) if c else w for w, c in zip(words, chosen)]
            else:
                words = [x for w, c in zip(words, chosen) for x in ((next(drawn), w) if c else (w,))]
        return " ".join(words)
