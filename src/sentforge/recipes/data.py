"""A recipe's training examples, from files or from memory.

`data` is a path (str or Path), a list of paths (Paths, or strings that all name existing files), or the
examples themselves: a list of texts for "sentences", a list of tuples for the pair kinds
(registry.DATA_KINDS). Files are read by the
readers of sentforge.data; corpus files are length-filtered and de-duplicated (`SentenceReading`),
examples given in memory are taken as they are.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.errors import ConfigError, InputFileError


@dataclass(frozen=True)
class SentenceReading:
    """How corpus files become sentences: the JSONL field, paragraph splitting, the length filter."""

    field: str | None = None
    split: bool = True
    min_words: int = 3
    max_words: int = 128


def data_paths(data: Any) -> list[Path]:
    """The files `data` names ([] for examples given in memory). A list of strings that are all paths of
    existing files or folders is a list of paths; a list that mixes such paths with texts is refused, so
    that a path is never trained on as a text."""
    if isinstance(data, (str, os.PathLike)):
        return [Path(data)]
    if not isinstance(data, Sequence) or not data:
        return []
    if all(isinstance(item, os.PathLike) for item in data):
        return [Path(item) for item in data]
    if all(isinstance(item, str) for item in data):
        existing = [item for item in data if _names_file(item)]
        if len(existing) == len(data):
            return [Path(item) for item in data]
        if existing:
            raise ConfigError(f"data: {existing[0]!r} (item {data.index(existing[0])}) is the path of an existing "
                              f"file, but {len(data) - len(existing)} other item(s) are not; give a list of paths "
                              "(pathlib.Path) or a list of texts")
    return []


def _names_file(text: str) -> bool:
    """Whether a string is the path of an existing file or folder (a long text with newlines never is)."""
    if "\n" in text or len(text) > 4096:
        return False
    try:
        return Path(text).exists()
    except OSError:  # a name too long for the file system
        return False


def read_examples(kind: str, data: Any, reading: SentenceReading | None = None) -> list:
    """The examples of `data` for a recipe whose data is `kind`."""
    paths = data_paths(data)
    if not paths:
        if not isinstance(data, Sequence) or isinstance(data, (str, bytes)) or not data:
            raise ConfigError(f"no training data: give a path, a list of paths or a non-empty list of {kind}")
        return _checked(kind, list(data))
    for path in paths:
        if not path.exists():
            raise InputFileError(f"{'corpus' if kind == 'sentences' else 'data'} not found: {path}")
    if kind == "sentences":
        return _sentences(paths, reading or SentenceReading())
    if kind == "labelled pairs":
        from sentforge.data.nli import read_nli_pairs

        return [pair for path in paths for pair in read_nli_pairs(path)]
    from sentforge.data.pairs import read_pairs

    if len(paths) != 1:
        raise ConfigError(f"{kind} are read from one pair file; got {len(paths)} paths")
    return read_pairs(paths[0], with_scores=kind == "scored pairs")


def _sentences(paths: list[Path], reading: SentenceReading) -> list[str]:
    from sentforge.data.corpora import SentenceFilter, load_sentences

    sentences = load_sentences(paths, SentenceFilter(min_words=reading.min_words, max_words=reading.max_words),
                               field=reading.field, split=reading.split)
    if not sentences:
        raise InputFileError(f"no sentences of {reading.min_words}-{reading.max_words} words in "
                             f"{', '.join(map(str, paths))}")
    return sentences


def _checked(kind: str, examples: list) -> list:
    arity = {"pairs": (2, 3), "scored pairs": (3,), "labelled pairs": (3,)}.get(kind)
    for i, example in enumerate(examples):
        good = isinstance(example, str) if arity is None else (
            isinstance(example, (tuple, list)) and len(example) in arity)
        if not good:
            raise ConfigError(f"training example {i} is {example!r}; {kind} are expected")
    return [example if isinstance(example, str) else tuple(example) for example in examples]
