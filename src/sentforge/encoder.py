"""The Encoder: an ordered pipeline of modules that turns texts into sentence vectors."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from sentforge import __version__
from sentforge.support.device import to_device, to_device_all
from sentforge.interface.dtypes import weights_in
from sentforge.interface.encode_options import (EncodeOptions, check_finite, encode_options, finish, resolve_prompt,
                                                shape_vectors)
from sentforge.support.errors import ConfigError, ModelFormatError
from sentforge.support.io import atomic_dir
from sentforge.support.threads import one_torch_thread
from sentforge.interface.model_card import ModelCardData, read_card_data, write_model_card
from sentforge.modules import HFBackbone, InputModule, Module
from sentforge.modules.base import Features, read_json, write_json
from sentforge.modules.static import fold_word_pooling, unfold_word_pooling
from sentforge.modules.validation import load_modules
from sentforge.interface.st_methods import SentenceTransformerInterface, checked_similarity_fn_name

logger = logging.getLogger(__name__)

MODULES_FILE = "modules.json"
ST_CONFIG_FILE = "config_sentence_transformers.json"
# Progress bars only for jobs long enough to watch.
_PROGRESS_MIN_BATCHES = 20
# Rows of vectors kept on an accelerator before one copy to the host.
_FLUSH_ROWS = 8192
# Batches per tokenised chunk on accelerators (see tokenizing_chunks).
_CHUNK_BATCHES = 8
# What one more length chunk of a training batch costs on the CPU, in padded tokens: the fixed part of a
# forward and backward call and the lower efficiency of smaller matrix products (see length_chunks).
CHUNK_COST_TOKENS = 64


@runtime_checkable
class SentenceEncoder(Protocol):
    """Anything that maps texts to vectors: evaluation tasks and meta-embeddings accept it."""

    name: str

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], batch_size: int = 32, normalize: bool = False,
               show_progress: bool | None = None, **options: Any) -> np.ndarray: ...


def check_texts(texts: Iterable[str]) -> list[str]:
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ConfigError(f"texts[{i}] is {type(text).__name__}, expected str")
    return texts


def tokenizing_chunks(texts: Sequence[str], batch_size: int, device: torch.device) -> list[np.ndarray]:
    """The row indices of the texts tokenised together, in the order they are encoded.

    On the CPU, one chunk of every text: the forward passes take nearly all the time there, and the
    batches are then cut from all texts sorted by token count. On accelerators the forward passes are
    quick and tokenising is most of an encode call, so the texts, longest (in characters) first, go in
    chunks of `_CHUNK_BATCHES` batches that a thread tokenises one ahead of the device; batches are
    cut from each chunk sorted by token count.
    """
    if device.type == "cpu":
        return [np.arange(len(texts))]
    by_length = np.argsort([-len(text) for text in texts], kind="stable")
    size = _CHUNK_BATCHES * batch_size
    return [by_length[start:start + size] for start in range(0, len(texts), size)]


def tokenized_ahead(chunks: list[np.ndarray],
                    tokenize: Callable[[np.ndarray], Any]) -> Iterator[tuple[np.ndarray, Any]]:
    """(chunk, tokenize(chunk)) for each chunk; with several chunks a second thread tokenises the next
    chunk while the caller works on this one (the tokenizers release the GIL while they run)."""
    if len(chunks) == 1:
        yield chunks[0], tokenize(chunks[0])
        return
    with ThreadPoolExecutor(max_workers=1) as thread:
        pending = thread.submit(tokenize, chunks[0])
        for index, rows in enumerate(chunks):
            tokens = pending.result()
            if index + 1 < len(chunks):
                pending = thread.submit(tokenize, chunks[index + 1])
            yield rows, tokens


def length_chunks(lengths: Sequence[int], chunk_cost: float = CHUNK_COST_TOKENS) -> list[np.ndarray]:
    """The rows of a training batch in length-homogeneous chunks, the chunks in the order they run.

    The texts are sorted longest first (ties in batch order) and cut where the padded tokens of all
    chunks (each chunk padded to its first, longest text) plus `chunk_cost` per chunk are least: an
    exact dynamic programme over the cut points. The chunks depend on the token counts alone, so the
    same batch is always cut the same way.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    widths = lengths[order]
    best = np.zeros(len(order) + 1)  # least cost of the first `end` sorted texts
    start_of = np.zeros(len(order) + 1, dtype=np.int64)  # where the last chunk of that best cut starts
    for end in range(1, len(order) + 1):
        starts = np.arange(end)
        costs = best[:end] + (end - starts) * widths[:end] + chunk_cost
        start_of[end] = int(np.argmin(costs))
        best[end] = costs[start_of[end]]
    chunks, end = [], len(order)
    while end > 0:
        chunks.append(order[start_of[end]:end])
        end = start_of[end]
    return chunks[::-1]


def progress_enabled(show_progress: bool | None, n_batches: int) -> bool | None:
    """tqdm's `disable` value: None lets tqdm hide the bar when stderr is not a terminal."""
    if show_progress is None:
        return None if n_batches >= _PROGRESS_MIN_BATCHES else True
    return not show_progress


class Encoder(SentenceTransformerInterface, nn.Sequential):
    """Text -> vectors through modules that each read and extend a features dict:
    input module (tokens) -> backbone outputs -> pooling -> [projection] -> [normalize].

    `forward(features)` is the differentiable path objectives train through; `encode(texts)` is the
    fast batched inference path over the same modules. The SentenceTransformer methods (`similarity`,
    `encode_query`, ...) come from `interface.st_methods.SentenceTransformerInterface`.
    """

    def __init__(self, modules: Sequence[Module], name: str = "encoder", prompts: dict[str, str] | None = None,
                 default_prompt_name: str | None = None, card: ModelCardData | None = None,
                 similarity_fn_name: str | None = None, truncate_dim: int | None = None) -> None:
        if not modules or not isinstance(modules[0], InputModule):
            raise ConfigError("an Encoder starts with an input module (a backbone or word vectors)")
        super().__init__(*modules)
        self.name = name
        # Named prefixes for `encode(prompt_name=...)`, e.g. {"query": "query: "}, as sentence-transformers keeps them.
        self.prompts = dict(prompts or {})
        if default_prompt_name is not None and default_prompt_name not in self.prompts:
            raise ConfigError(f"default_prompt_name {default_prompt_name!r} is not one of the prompts "
                              f"({', '.join(map(repr, self.prompts)) or 'none defined'})")
        self.default_prompt_name = default_prompt_name
        self.card = card or ModelCardData()
        self.similarity_fn_name = similarity_fn_name
        self.truncate_dim = truncate_dim
        # How `embed` runs a batch: None decides per device (see `splits_by_length`); True or False forces it.
        self.length_chunked: bool | None = None
        self.chunk_cost_tokens: float = CHUNK_COST_TOKENS

    def with_modules(self, modules: Sequence[Module], name: str | None = None,
                     card: ModelCardData | None = None) -> Encoder:
        """A new encoder over `modules` with this one's settings (prompts, similarity function, truncate_dim)."""
        return Encoder(modules, name=name or self.name, prompts=self.prompts,
                       default_prompt_name=self.default_prompt_name, card=card,
                       similarity_fn_name=self.similarity_fn_name, truncate_dim=self.truncate_dim)

    @property
    def input_module(self) -> InputModule:
        return self[0]

    @property
    def full_dim(self) -> int:
        """The size of the vectors the modules produce (what training sees), before `truncate_dim`."""
        for module in reversed(list(self)):
            if module.output_dim is not None:
                return module.output_dim
        raise ModelFormatError("no module of this encoder defines the embedding size")

    @property
    def dim(self) -> int:
        """The size of the vectors `encode` returns."""
        return min(self.full_dim, self.truncate_dim or self.full_dim)

    @property
    def truncate_dim(self) -> int | None:
        """Keep the first `truncate_dim` dimensions of every encoded vector (Matryoshka models); None: all.
        Saved with the model, as sentence-transformers does; `encode(truncate_dim=...)` overrides it per call."""
        return self._truncate_dim

    @truncate_dim.setter
    def truncate_dim(self, value: int | None) -> None:
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ConfigError(f"truncate_dim must be an integer >= 1 or None, got {value!r}")
        self._truncate_dim = value

    @property
    def max_seq_length(self) -> int | None:
        return self.input_module.max_seq_length

    @max_seq_length.setter
    def max_seq_length(self, value: int | None) -> None:
        self.input_module.max_seq_length = value

    @property
    def device(self) -> torch.device:
        for param in self.parameters():
            return param.device
        return torch.device("cpu")

    def tokenize(self, texts: Sequence[str], max_length: int | None = None) -> Features:
        return self.input_module.tokenize(list(texts), max_length)

    def splits_by_length(self, device: torch.device) -> bool:
        """Whether `embed` runs a batch in length-sorted chunks on `device`: `length_chunked` when set,
        else on the CPU for transformer backbones, whose work grows with every padded token. On
        accelerators the padded batch stays: fused attention kernels prefer one large padded batch,
        and the extra calls of small chunks cost more there than the padding."""
        if self.length_chunked is not None:
            return self.length_chunked
        return device.type == "cpu" and isinstance(self.input_module, HFBackbone)

    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        """Sentence vectors with gradients (the training path), one row per text in the given order.

        Every text is encoded independently of the others, so the batch can be cut for the backbone
        without changing the vectors: where `splits_by_length` says so, the texts run through the
        modules up to pooling in the length-homogeneous chunks of `length_chunks` (almost no compute
        spent on padding), and the vectors are put back in batch order before the modules after pooling
        (projection, normalisation, flow) see the whole batch. The loss and its gradients are those of
        the padded batch, up to float rounding. Dropout draws differ from the padded batch's (other
        shapes, other order) but not between runs: the chunks depend only on the token counts, so the
        same seed and the same batches give the same chunks and the same draws.
        """
        device = self.device
        if not self.splits_by_length(device) or len(texts) < 2:
            return self(to_device_all(self.tokenize(texts), device))["sentence_embedding"]
        ids = self.input_module.token_ids(list(texts))[0]
        chunks = length_chunks([len(row) for row in ids], self.chunk_cost_tokens)
        modules = list(self)
        pooled = []
        for rows in chunks:
            features = to_device_all(self.input_module.pad([ids[i] for i in rows]), device)
            for after_pooling, module in enumerate(modules, start=1):  # noqa: B007 - read after the loop
                features = module(features)
                if "sentence_embedding" in features:
                    break
            pooled.append(features["sentence_embedding"])
        order = np.concatenate(chunks)
        batch_order = np.empty_like(order)
        batch_order[order] = np.arange(len(order))
        vectors = torch.cat(pooled).index_select(0, to_device(torch.from_numpy(batch_order), device))
        features = {"sentence_embedding": vectors}
        for module in modules[after_pooling:]:
            features = module(features)
        return features["sentence_embedding"]

    def encode(self, texts: Sequence[str] | str, batch_size: int = 32, normalize: bool = False,
               show_progress: bool | None = None, max_seq_length: int | None = None,
               device: str | torch.device | None = None, **options: Any) -> np.ndarray | torch.Tensor:
        """Encode texts into a float32 array of shape (n, dim), in the input order.

        Texts are tokenised once, sorted by token count so that each batch pads little (on
        accelerators in chunks that a second thread tokenises ahead of the device; see
        `tokenizing_chunks`), and run under `torch.inference_mode`. A single string gives a vector of shape (dim,).
        The sentence-transformers keywords work too (see `sentforge.interface.encode_options`):
        `show_progress_bar`, `normalize_embeddings`, `prompt`, `prompt_name` (a key of `prompts`),
        `truncate_dim`, `precision` (float32, int8, uint8, binary, ubinary), `convert_to_tensor`,
        `convert_to_numpy`. Non-finite vectors raise ModelFormatError.
        `dtype` (torch.float16 / torch.bfloat16 or "float16" / "bfloat16" / "float32") runs the forward
        pass with the weights in that precision for this call (float16 on GPUs only; see
        `sentforge.interface.dtypes`); the returned vectors are float32 either way (`precision` is what they are
        converted to).
        """
        opts = encode_options(options, batch_size=batch_size, normalize=normalize, show_progress=show_progress,
                              max_seq_length=max_seq_length, device=device)
        if opts.truncate_dim is None and self.truncate_dim is not None:
            opts = dataclasses.replace(opts, truncate_dim=self.truncate_dim)
        if isinstance(texts, str):
            return self.encode([texts], **dataclasses.asdict(opts))[0]
        texts = check_texts(texts)
        prompt = resolve_prompt(opts, self.prompts, self.default_prompt_name)
        if prompt:
            texts = [prompt + text for text in texts]
        if opts.device is not None:
            self.to(opts.device)
        output = np.empty((len(texts), min(self.full_dim, opts.truncate_dim or self.full_dim)), dtype=np.float32)
        if texts:
            self._encode_into(output, texts, opts)
            check_finite(output, texts, self.name)
        return finish(output, opts)

    def _encode_into(self, output: np.ndarray, texts: list[str], opts: EncodeOptions) -> None:
        target = self.device
        chunks = tokenizing_chunks(texts, opts.batch_size, target)
        was_training = self.training
        self.eval()
        n_truncated = 0
        # Vectors stay on the device until a few batches are done: the host pads and copies the next
        # batches meanwhile instead of waiting for each one.
        done: list[tuple[np.ndarray, torch.Tensor]] = []

        def flush() -> None:
            if done:
                vectors = torch.cat([v for _, v in done]).cpu().numpy()
                output[np.concatenate([rows for rows, _ in done])] = vectors
                done.clear()

        def tokenize(rows: np.ndarray) -> tuple[list[list[int]], int]:
            return self.input_module.token_ids([texts[i] for i in rows], opts.max_seq_length)

        n_batches = sum(-(-len(rows) // opts.batch_size) for rows in chunks)
        threads = one_torch_thread if self.input_module.single_threaded else nullcontext
        try:
            with torch.inference_mode(), weights_in(self, opts.dtype, target), threads(), \
                    tqdm(total=n_batches, desc="encode", unit="batch",
                         disable=progress_enabled(opts.show_progress, n_batches)) as progress:
                for rows, (ids, truncated) in tokenized_ahead(chunks, tokenize):
                    n_truncated += truncated
                    # Longest first, so that each batch pads little.
                    order = np.argsort([-len(x) for x in ids], kind="stable")
                    for start in range(0, len(rows), opts.batch_size):
                        picked = order[start:start + opts.batch_size]
                        features = to_device_all(self.input_module.pad([ids[i] for i in picked]), target)
                        done.append((rows[picked], shape_vectors(self(features)["sentence_embedding"], opts).float()))
                        if target.type == "cpu" or len(done) * opts.batch_size >= _FLUSH_ROWS:
                            flush()
                        progress.update(1)
                flush()
        finally:
            self.train(was_training)
        if n_truncated:
            logger.warning("%d of %d texts exceed max_seq_length=%s tokens and were truncated",
                           n_truncated, len(texts), opts.max_seq_length or self.max_seq_length)

    def save(self, path: str | Path, overwrite: bool = False, kind: str | None = None) -> None:
        """Write a sentence-transformers directory (modules.json, module folders, safetensors, tokenizer,
        prompts, similarity function and truncate_dim in config_sentence_transformers.json) with a model card
        (README.md, model_card.json).

        The directory appears whole or not at all; a non-empty one is refused unless `overwrite`. `kind`:
        the command family that writes it (its output marker; see sentforge.support.output_guard).
        """
        with atomic_dir(path, overwrite, kind) as tmp:
            entries = []
            for idx, module in enumerate(fold_word_pooling(list(self))):
                sub = "" if idx == 0 and module.saves_at_root else f"{idx}_{type(module).__name__}"
                module.save(tmp / sub)
                entries.append({"idx": idx, "name": str(idx), "path": sub, "type": module.type_name})
            write_json(tmp / MODULES_FILE, entries)
            settings = {
                "__version__": {"sentforge": __version__, "pytorch": torch.__version__},
                "prompts": self.prompts, "default_prompt_name": self.default_prompt_name,
                "similarity_fn_name": self.similarity_fn_name,
            }
            if self.truncate_dim is not None:  # sentence-transformers writes the key only when set
                settings["truncate_dim"] = self.truncate_dim
            write_json(tmp / ST_CONFIG_FILE, settings)
            write_model_card(tmp, self)

    @classmethod
    def load(cls, path: str | Path, name: str | None = None) -> Encoder:
        """Read a directory written by `save` or by sentence-transformers (with its prompts, similarity function
        and truncate_dim)."""
        path = Path(path)
        modules = load_modules(path)
        settings = read_json(path / ST_CONFIG_FILE) if (path / ST_CONFIG_FILE).exists() else {}
        prompts = settings.get("prompts") or {}
        if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
            raise ModelFormatError(f"{path / ST_CONFIG_FILE}: 'prompts' must map names to strings")
        try:
            similarity_fn_name = checked_similarity_fn_name(settings.get("similarity_fn_name") or "cosine")
        except ConfigError as err:
            raise ModelFormatError(f"{path / ST_CONFIG_FILE}: {err}") from None
        truncate_dim = settings.get("truncate_dim")
        if truncate_dim is not None and (not isinstance(truncate_dim, int) or truncate_dim < 1):
            raise ModelFormatError(f"{path / ST_CONFIG_FILE}: truncate_dim must be a positive integer, "
                                   f"got {truncate_dim!r}")
        return cls(unfold_word_pooling(modules), name=name or str(path), prompts=prompts,
                   default_prompt_name=settings.get("default_prompt_name"), card=read_card_data(path),
                   similarity_fn_name=similarity_fn_name, truncate_dim=truncate_dim)

    def extra_repr(self) -> str:
        return f"name={self.name!r}, dim={self.dim}, max_seq_length={self.max_seq_length}"
