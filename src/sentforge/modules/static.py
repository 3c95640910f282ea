"""Static word vectors: a sentence is the average of the vectors of its known words (GloVe average)."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from sentforge.errors import InputFileError, ModelFormatError
from sentforge.modules.base import WEIGHTS_FILE, Features, InputModule, pad_ids, read_json, write_json

logger = logging.getLogger(__name__)

VOCAB_FILE = "vocab.txt"
# Words (with inner hyphens/apostrophes kept), and each punctuation mark on its own, as GloVe's tokens are.
_TOKEN = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]")


class WordVectors(InputModule):
    """Looks up a frozen vector per token; unknown tokens are skipped. Follow with mean Pooling."""

    type_name: ClassVar[str] = "sentforge.modules.WordVectors"

    def __init__(self, vocab: list[str], vectors: np.ndarray | torch.Tensor, lowercase: bool = True) -> None:
        super().__init__()
        vectors = vectors.detach().cpu().numpy() if isinstance(vectors, torch.Tensor) else np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[0] != len(vocab):
            raise ModelFormatError(f"word vectors of shape {tuple(vectors.shape)} do not match {len(vocab)} words")
        self.vocab = list(vocab)
        self.index = {word: i for i, word in enumerate(self.vocab)}
        self.lowercase = lowercase
        self.max_seq_length = None
        # Row 0 is a zero padding vector, so the vocabulary rows start at 1.
        table = np.zeros((vectors.shape[0] + 1, vectors.shape[1]), dtype=np.float32)
        table[1:] = vectors
        self.embeddings = nn.Embedding.from_pretrained(torch.from_numpy(table), freeze=True, padding_idx=0)

    @property
    def output_dim(self) -> int:
        return self.embeddings.embedding_dim

    def token_ids(self, texts: list[str], max_length: int | None = None) -> tuple[list[list[int]], int]:
        ids = []
        for text in texts:
            words = _TOKEN.findall(text.lower() if self.lowercase else text)
            row = [self.index[w] + 1 for w in words if w in self.index]
            ids.append(row[:max_length] if max_length else row)
        return ids, 0

    def pad(self, ids: list[list[int]]) -> Features:
        return pad_ids(ids, 0)

    def forward(self, features: Features) -> Features:
        features["token_embeddings"] = self.embeddings(features["input_ids"])
        return features

    def config(self) -> dict[str, Any]:
        return {"lowercase": self.lowercase, "dim": self.output_dim, "vocab_size": len(self.vocab)}

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        write_json(path / self.config_file, self.config())
        (path / VOCAB_FILE).write_text("\n".join(self.vocab) + "\n", encoding="utf-8")
        save_file({"vectors": self.embeddings.weight[1:].contiguous()}, str(path / WEIGHTS_FILE))

    @classmethod
    def load(cls, path: Path) -> WordVectors:
        config = read_json(path / cls.config_file)
        vocab = (path / VOCAB_FILE).read_text(encoding="utf-8").split("\n")[:-1]
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
