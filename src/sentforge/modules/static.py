"""Static word vectors: a sentence is the average of the vectors of its known words (GloVe average); and the
one loader of sentence-transformers' StaticEmbedding directories, word vectors or any other tokenizer's tokens
(`token_vectors.py`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from safetensors.torch import load_file
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers
from torch import nn

from sentforge.support.errors import ConfigError, InputFileError, ModelFormatError
from sentforge.modules.base import WEIGHTS_FILE, Features, Module, pad_ids, read_json
from sentforge.modules.pooling import Pooling
from sentforge.modules.token_vectors import (STATIC_EMBEDDING_TYPE, TOKENIZER_FILE, TokenTable, TokenVectors,
                                             token_id_lists)

logger = logging.getLogger(__name__)

LEGACY_VOCAB_FILE = "vocab.txt"
PAD_TOKEN = "[PAD]"
# Words (with inner hyphens/apostrophes kept), and each punctuation mark on its own, as GloVe's tokens are.
_TOKEN = r"\w+(?:[-']\w+)*|[^\w\s]"
# Every word is looked up whole with this marker in front; an unknown word falls apart into single
# characters, which never carry the marker, so it maps to no id at all: unknown words are skipped.
_WORD_MARK = "\u2581"


def word_tokenizer(vocab: list[str], lowercase: bool = True) -> Tokenizer:
    """A `tokenizers` tokenizer that maps each known word of `vocab` to its row (1-based; 0 is padding)
    and drops unknown words. sentence-transformers' StaticEmbedding runs the same tokenizer file,
    so both libraries see the same ids."""
    ids = {_WORD_MARK + PAD_TOKEN: 0}
    ids.update((_WORD_MARK + word, row) for row, word in enumerate(vocab, start=1))
    tokenizer = Tokenizer(models.BPE(vocab=ids, merges=[], unk_token=None, ignore_merges=True))
    if lowercase:
        tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(_TOKEN), behavior="removed", invert=True),
        pre_tokenizers.Metaspace(replacement=_WORD_MARK, prepend_scheme="always", split=True),
    ])
    return tokenizer


class WordVectors(TokenTable):
    """Looks up a frozen vector per token; unknown tokens are skipped. Follow with mean Pooling.

    Saved as sentence-transformers' StaticEmbedding (tokenizer.json + `embedding.weight`), which
    averages the vectors itself: the mean Pooling after it is implied, not saved.
    """

    type_name: ClassVar[str] = STATIC_EMBEDDING_TYPE
    saves_at_root: ClassVar[bool] = True

    def __init__(self, vocab: list[str], vectors: np.ndarray | torch.Tensor, lowercase: bool = True) -> None:
        super().__init__()
        vectors = vectors.detach().cpu().numpy() if isinstance(vectors, torch.Tensor) else np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[0] != len(vocab):
            raise ModelFormatError(f"word vectors of shape {tuple(vectors.shape)} do not match {len(vocab)} words")
        last = {word: row for row, word in enumerate(vocab)}
        if len(last) < len(vocab):
            # A repeated word keeps its last vector (as a dict lookup would); each row needs its own token.
            logger.warning("%d repeated words in the vocabulary: keeping the last vector of each",
                           len(vocab) - len(last))
            rows = sorted(last.values())
            vocab, vectors = [vocab[row] for row in rows], vectors[rows]
        self.vocab = list(vocab)
        self.lowercase = lowercase
        self.max_seq_length = None
        self.tokenizer = word_tokenizer(self.vocab, lowercase)
        # Row 0 is a zero padding vector, so the vocabulary rows start at 1.
        table = np.zeros((vectors.shape[0] + 1, vectors.shape[1]), dtype=np.float32)
        table[1:] = vectors
        self.embedding = nn.Embedding.from_pretrained(torch.from_numpy(table), freeze=True, padding_idx=0)

    @property
    def output_dim(self) -> int:
        return self.embedding.embedding_dim

    def token_ids(self, texts: list[str], max_length: int | None = None) -> tuple[list[list[int]], int]:
        ids = token_id_lists(self.tokenizer, texts)
        return [row[:max_length] for row in ids] if max_length else ids, 0

    def pad(self, ids: list[list[int]]) -> Features:
        return pad_ids(ids, 0)

    def forward(self, features: Features) -> Features:
        features["token_embeddings"] = self.embedding(features["input_ids"])
        return features

    @classmethod
    def load(cls, path: Path) -> WordVectors | TokenVectors:
        """Word vectors saved by sentforge, or else the vectors of any other tokenizer's tokens (TokenVectors)."""
        if not (path / TOKENIZER_FILE).exists() and (path / LEGACY_VOCAB_FILE).exists():
            return cls._load_legacy(path)
        try:
            tokenizer = Tokenizer.from_file(str(path / TOKENIZER_FILE))
        except Exception as err:  # the Rust tokenizer reports missing and malformed files alike
            raise ModelFormatError(f"{path / TOKENIZER_FILE}: cannot read the tokenizer ({err})") from None
        by_id = {i: token for token, i in tokenizer.get_vocab().items()}
        if not _is_word_tokenizer(tokenizer, by_id):
            return TokenVectors.from_files(path, tokenizer)
        table = load_file(str(path / WEIGHTS_FILE))["embedding.weight"]
        if len(table) != len(by_id):
            raise ModelFormatError(f"{path / WEIGHTS_FILE}: {len(table)} vectors for {len(by_id)} words")
        vocab = [by_id[i][len(_WORD_MARK):] for i in range(1, len(table))]
        lowercase = isinstance(tokenizer.normalizer, normalizers.Lowercase)
        return cls(vocab, table[1:], lowercase=lowercase)

    @classmethod
    def _load_legacy(cls, path: Path) -> WordVectors:
        """Directories from sentforge 0.1 (vocab.txt + `vectors`), which sentence-transformers cannot read."""
        config = read_json(path / cls.config_file)
        vocab = (path / LEGACY_VOCAB_FILE).read_text(encoding="utf-8").split("\n")[:-1]
        vectors = load_file(str(path / WEIGHTS_FILE))["vectors"]
        return cls(vocab, vectors, lowercase=config.get("lowercase", True))

    @classmethod
    def from_glove_text(cls, path: str | Path, lowercase: bool = True) -> WordVectors:
        """Read the GloVe text format: one `word v1 ... vd` per line."""
        path = Path(path)
        if not path.exists():
            raise InputFileError(f"word-vector file not found: {path}")
        vocab, rows, dim = [], [], None
        with open(path, encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, 1):
                parts = line.rstrip("\n").rstrip(" ").split(" ")
                if len(parts) < 2:
                    raise InputFileError(f"{path}:{line_no}: expected a word followed by numbers")
                dim = dim or len(parts) - 1
                if len(parts) - 1 != dim:
                    raise InputFileError(f"{path}:{line_no}: {len(parts) - 1} values, expected {dim}")
                try:
                    rows.append(np.asarray(parts[1:], dtype=np.float32))
                except ValueError:
                    raise InputFileError(f"{path}:{line_no}: non-numeric vector value") from None
                vocab.append(parts[0])
        if not vocab:
            raise InputFileError(f"{path}: no word vectors found")
        return cls(vocab, np.stack(rows), lowercase)

    @classmethod
    def from_arrays(cls, vectors_npy: str | Path, vocab: list[str], lowercase: bool = True) -> WordVectors:
        """Read vectors from a .npy matrix (memory-mapped) whose rows follow `vocab`."""
        vectors = np.load(vectors_npy, mmap_mode="r", allow_pickle=False)
        return cls(vocab, vectors, lowercase)


def _is_word_tokenizer(tokenizer: Tokenizer, by_id: dict[int, str]) -> bool:
    """Whether `tokenizer` is `word_tokenizer`'s: whole marked words with ids 0..n-1 (row 0 the padding)."""
    return (isinstance(tokenizer.model, models.BPE) and by_id.get(0) == _WORD_MARK + PAD_TOKEN
            and all(by_id.get(i, "").startswith(_WORD_MARK) for i in range(len(by_id))))


def fold_word_pooling(modules: list[Module]) -> list[Module]:
    """The modules as sentence-transformers saves them: word vectors average by themselves there
    (StaticEmbedding), so their mean Pooling is not saved."""
    saved: list[Module] = []
    for module in modules:
        if saved and isinstance(saved[-1], WordVectors):
            if not (isinstance(module, Pooling) and module.modes == ("mean",)):
                raise ConfigError("word vectors save as sentence-transformers' StaticEmbedding, which averages: "
                                  "follow them with mean pooling to save the encoder")
            continue
        saved.append(module)
    return saved


def unfold_word_pooling(modules: list[Module]) -> list[Module]:
    """The inverse of `fold_word_pooling`: restore the mean Pooling after word vectors (unless a
    directory from sentforge 0.1 saved it explicitly)."""
    loaded: list[Module] = []
    for index, module in enumerate(modules):
        loaded.append(module)
        following = modules[index + 1] if index + 1 < len(modules) else None
        if isinstance(module, WordVectors) and not isinstance(following, Pooling):
            loaded.append(Pooling(module.output_dim, "mean"))
    return loaded
