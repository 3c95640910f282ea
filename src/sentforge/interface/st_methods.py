"""The sentence-transformers model interface: the methods and attributes a `SentenceTransformer` user calls
daily, under the same names and with the same results, mixed into `Encoder` (and, for similarity, into
`MetaEncoder`).

Similarity scores are computed with the operations sentence-transformers uses (`util.cos_sim`, `dot_score`,
`euclidean_sim`, `manhattan_sim` and their pairwise forms), so they agree to the last bit on the same
vectors; euclidean and manhattan "similarities" are negative distances, as there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from sentforge.support.errors import ConfigError

SIMILARITY_FN_NAMES = ("cosine", "dot", "euclidean", "manhattan")
# encode_query / encode_document use these keys of `prompts`, as sentence-transformers does.
QUERY_PROMPT_NAME, DOCUMENT_PROMPT_NAME = "query", "document"

Vectors = torch.Tensor | np.ndarray | Sequence[torch.Tensor] | Sequence[np.ndarray]


def checked_similarity_fn_name(value: Any) -> str:
    """A similarity function name; a `sentence_transformers.SimilarityFunction` member gives its value."""
    name = getattr(value, "value", value)
    if name not in SIMILARITY_FN_NAMES:
        raise ConfigError(f"similarity_fn_name must be one of {', '.join(SIMILARITY_FN_NAMES)}, got {value!r}")
    return name


def _as_tensor(vectors: Vectors) -> torch.Tensor:
    """A float tensor from a tensor, an array or a list of either; half precision is scored in float32 (a
    half-precision product rounds nearby scores into ties)."""
    if isinstance(vectors, (list, tuple)):
        tensor = torch.stack([torch.as_tensor(v) for v in vectors]) if vectors else torch.empty(0)
    else:
        tensor = torch.as_tensor(vectors)
    if not torch.is_floating_point(tensor) or torch.finfo(tensor.dtype).bits < 32:
        tensor = tensor.to(torch.float32)
    return tensor


def as_batch(vectors: Vectors) -> torch.Tensor:
    """A (n, dim) float tensor; one vector is a batch of one."""
    tensor = _as_tensor(vectors)
    return tensor.unsqueeze(0) if tensor.dim() == 1 else tensor


def similarity_matrix(fn_name: str, embeddings1: Vectors, embeddings2: Vectors) -> torch.Tensor:
    """(n1, n2) scores between every vector of `embeddings1` and every vector of `embeddings2`."""
    a, b = as_batch(embeddings1), as_batch(embeddings2)
    if fn_name == "cosine":
        return torch.mm(F.normalize(a, p=2, dim=-1), F.normalize(b, p=2, dim=-1).transpose(0, 1))
    if fn_name == "dot":
        return torch.mm(a, b.transpose(0, 1))
    return -torch.cdist(a, b, p=2.0 if fn_name == "euclidean" else 1.0)


def similarity_pairs(fn_name: str, embeddings1: Vectors, embeddings2: Vectors) -> torch.Tensor:
    """(n,) scores of embeddings1[i] with embeddings2[i]."""
    a, b = _as_tensor(embeddings1), _as_tensor(embeddings2)
    if fn_name == "cosine":
        return (F.normalize(a, p=2, dim=-1) * F.normalize(b, p=2, dim=-1)).sum(dim=-1)
    if fn_name == "dot":
        return (a * b).sum(dim=-1)
    if fn_name == "euclidean":
        return -torch.linalg.vector_norm(a - b, dim=-1)
    return -torch.sum(torch.abs(a - b), dim=-1)


class SimilarityInterface:
    """`similarity`, `similarity_pairwise` and `similarity_fn_name` (cosine unless set), as on a SentenceTransformer."""

    _similarity_fn_name: str = "cosine"

    @property
    def similarity_fn_name(self) -> str:
        return self._similarity_fn_name

    @similarity_fn_name.setter
    def similarity_fn_name(self, value: Any) -> None:
        self._similarity_fn_name = "cosine" if value is None else checked_similarity_fn_name(value)

    def similarity(self, embeddings1: Vectors, embeddings2: Vectors) -> torch.Tensor:
        """A (n1, n2) tensor: the `similarity_fn_name` score of every pair of vectors across the two sets."""
        return similarity_matrix(self.similarity_fn_name, embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1: Vectors, embeddings2: Vectors) -> torch.Tensor:
        """A (n,) tensor: the `similarity_fn_name` score of embeddings1[i] with embeddings2[i]."""
        return similarity_pairs(self.similarity_fn_name, embeddings1, embeddings2)


class SentenceTransformerInterface(SimilarityInterface):
    """The rest of the SentenceTransformer interface that fits an `Encoder`: sizes, the tokenizer, query and
    document encoding, Matryoshka truncation, `save_pretrained`. (`tokenize`, `max_seq_length`, `device`,
    `prompts`, `to()`, `eval()`, `len()` and indexing over the modules are the Encoder's own.)"""

    def get_sentence_embedding_dimension(self) -> int:
        """The size of the vectors `encode` returns (after the model's `truncate_dim`, if set)."""
        return self.dim

    get_embedding_dimension = get_sentence_embedding_dimension  # the sentence-transformers 6 name

    def get_max_seq_length(self) -> int | None:
        return self.max_seq_length

    @property
    def tokenizer(self) -> Any:
        """The input module's tokenizer (a Hugging Face tokenizer, or a `tokenizers.Tokenizer` for word vectors)."""
        return self.input_module.tokenizer

    def encode_query(self, texts: Sequence[str] | str, **options: Any) -> np.ndarray | torch.Tensor:
        """`encode` with the model's "query" prompt, unless `prompt` or `prompt_name` is given; a model without
        one encodes the texts as they are (the default prompt is not used, as in sentence-transformers)."""
        return self.encode(texts, **_with_named_prompt(options, QUERY_PROMPT_NAME, self.prompts))

    def encode_document(self, texts: Sequence[str] | str, **options: Any) -> np.ndarray | torch.Tensor:
        """`encode` with the model's "document" prompt (see `encode_query`)."""
        return self.encode(texts, **_with_named_prompt(options, DOCUMENT_PROMPT_NAME, self.prompts))

    @contextmanager
    def truncate_embeddings(self, truncate_dim: int | None) -> Iterator[None]:
        """Within the block, `encode` keeps the first `truncate_dim` dimensions (None: all)."""
        saved = self.truncate_dim
        self.truncate_dim = truncate_dim
        try:
            yield
        finally:
            self.truncate_dim = saved

    def save_pretrained(self, path: str | Path, overwrite: bool = False) -> None:
        """`save` under the Hugging Face name."""
        self.save(path, overwrite=overwrite)


def _with_named_prompt(options: dict[str, Any], prompt_name: str, prompts: dict[str, str]) -> dict[str, Any]:
    if options.get("prompt") is not None or options.get("prompt_name") is not None:
        return options
    if prompt_name in prompts:
        return {**options, "prompt_name": prompt_name}
    return {**options, "prompt": ""}
