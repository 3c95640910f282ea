"""Static token vectors over any `tokenizers` tokenizer: a sentence is the mean of its tokens' vectors.

This is what sentence-transformers' StaticEmbedding computes, and as it does, the module gives the sentence
vector itself, by `embedding_bag` over the unpadded ids (no mean Pooling after it: averaging a padded
(batch, tokens, dim) tensor costs ten times more on long texts) (model2vec distillations, potion models, a static
model from `sentforge distil --static`): every token the tokenizer gives, special tokens not added, counts once
in the mean, unknown-token rows included, and the tokenizer's own truncation (if its file sets one) applies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer
from torch import nn

from sentforge.modules.base import WEIGHTS_FILE, Features, InputModule, pad_ids
from sentforge.support.errors import ModelFormatError

STATIC_EMBEDDING_TYPE = "sentence_transformers.models.StaticEmbedding"
TOKENIZER_FILE = "tokenizer.json"
# sentence-transformers' key; model2vec saves "embeddings", with an optional row "mapping" and per-row "weights".
ST_WEIGHT, M2V_WEIGHT, M2V_MAPPING, M2V_SCALES = "embedding.weight", "embeddings", "mapping", "weights"


class TokenTable(InputModule):
    """What the static modules share: no settings of their own, the StaticEmbedding files (`tokenizer`,
    `embedding`), and an encode on one torch thread (a few small memory-bound ops: see support/threads.py)."""

    single_threaded: ClassVar[bool] = True

    def config(self) -> dict[str, Any]:
        return {}

    def save(self, path: Path) -> None:
        save_token_table(path, self.tokenizer, self.embedding.weight)


class TokenVectors(TokenTable):
    """One trainable vector per token id of `tokenizer`; the sentence vector is their mean.

    Saved as sentence-transformers' StaticEmbedding (tokenizer.json + `embedding.weight`).
    """

    type_name: ClassVar[str] = STATIC_EMBEDDING_TYPE
    saves_at_root: ClassVar[bool] = True

    def __init__(self, tokenizer: Tokenizer, vectors: np.ndarray | torch.Tensor) -> None:
        super().__init__()
        vectors = torch.as_tensor(vectors, dtype=torch.float32).detach().cpu()
        if vectors.ndim != 2 or vectors.shape[0] < tokenizer.get_vocab_size():
            raise ModelFormatError(f"token vectors of shape {tuple(vectors.shape)} do not cover the tokenizer's "
                                   f"{tokenizer.get_vocab_size()} tokens")
        self.tokenizer = tokenizer
        self.tokenizer.no_padding()
        self.max_seq_length = None
        self.embedding = nn.Embedding.from_pretrained(vectors.contiguous(), freeze=False)

    @property
    def output_dim(self) -> int:
        return self.embedding.embedding_dim

    def token_ids(self, texts: list[str], max_length: int | None = None) -> tuple[list[list[int]], int]:
        ids = token_id_lists(self.tokenizer, texts)
        if not max_length:
            return ids, 0
        return [row[:max_length] for row in ids], sum(len(row) > max_length for row in ids)

    def pad(self, ids: list[list[int]]) -> Features:
        return pad_ids(ids, 0)  # the mask hides the padding from the mean, whatever row 0 holds

    def forward(self, features: Features) -> Features:
        mask = features["attention_mask"].bool()
        lengths = mask.sum(dim=1)
        offsets = torch.cumsum(lengths, dim=0) - lengths
        features["sentence_embedding"] = nn.functional.embedding_bag(
            features["input_ids"][mask], self.embedding.weight, offsets, mode="mean")
        return features

    @classmethod
    def from_files(cls, path: Path, tokenizer: Tokenizer) -> TokenVectors:
        """The vectors in `path`/model.safetensors over `tokenizer`: sentence-transformers' `embedding.weight`,
        or model2vec's `embeddings` with its row mapping and per-token weights folded in (as
        sentence-transformers folds them), so that each token id has its own row."""
        weights = path / WEIGHTS_FILE
        try:
            tensors = load_file(str(weights))
        except (SafetensorError, FileNotFoundError) as err:
            raise ModelFormatError(f"{weights}: not a readable safetensors file ({err})") from None
        if ST_WEIGHT in tensors:
            return cls(tokenizer, tensors[ST_WEIGHT])
        if M2V_WEIGHT not in tensors:
            raise ModelFormatError(f"{weights}: expected a {ST_WEIGHT!r} or {M2V_WEIGHT!r} tensor, found "
                                   f"{', '.join(sorted(tensors)) or 'none'}")
        vectors = tensors[M2V_WEIGHT].float()
        if M2V_MAPPING in tensors:
            vectors = vectors[tensors[M2V_MAPPING].long()]
        if M2V_SCALES in tensors:
            vectors = vectors * tensors[M2V_SCALES].float()[:, None]
        return cls(tokenizer, vectors)


def token_id_lists(tokenizer: Tokenizer, texts: list[str]) -> list[list[int]]:
    """Each text's token ids, special tokens not added. `encode_batch_fast` skips the character offsets, which a
    static model never reads: its tokenizing is most of a static model's encode time."""
    return [e.ids for e in tokenizer.encode_batch_fast(texts, add_special_tokens=False)]


def save_token_table(path: Path, tokenizer: Tokenizer, weight: torch.Tensor) -> None:
    """A static model's files in sentence-transformers' StaticEmbedding layout: the tokenizer and one row per
    token (`embedding.weight`)."""
    path.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(path / TOKENIZER_FILE))
    save_file({ST_WEIGHT: weight.detach().contiguous().cpu()}, str(path / WEIGHTS_FILE))
