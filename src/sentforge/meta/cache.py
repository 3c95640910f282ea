"""On-disk cache of member embeddings: a corpus is encoded by each member once, however many
meta-embedding methods, hyper-parameters or member subsets are fitted on it afterwards."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError
from sentforge.support.io import save_npy

logger = logging.getLogger(__name__)


def member_spec(member: Any) -> str | None:
    """The spec that `sentforge.load` turns back into this member, if it has one.

    A CallableEncoder made from a short name carries `spec`; an Encoder loaded from a spec carries it as
    `name`. A CallableEncoder wrapping an arbitrary function has none.
    """
    spec = getattr(member, "spec", None)
    if spec:
        return str(spec)
    from sentforge.encoder import Encoder

    return member.name if isinstance(member, Encoder) else None


# Texts whose vectors identify what a member computes (see `member_cache_key`).
PROBE_TEXTS = ("A man is playing a guitar.", "the weather is cold today , is n't it ?", "sentforge 2020")


def _output_fingerprint(member: Any) -> str:
    """A digest of the member's vectors for fixed probe texts (rounded to 1e-4, so that bit-level noise
    from thread scheduling does not matter). It changes when a model under the same spec is retrained, and
    ignores weights that never reach the output (e.g. a pooler that a checkpoint lacks and that
    transformers initialises at random on every load)."""
    vectors = np.asarray(member.encode(list(PROBE_TEXTS), batch_size=len(PROBE_TEXTS)), dtype=np.float64)
    return hashlib.sha256((np.round(vectors, 4) + 0.0).tobytes()).hexdigest()[:20]


def member_cache_key(member: Any) -> str | None:
    """Spec plus a fingerprint of the member's outputs; None when the member has no spec."""
    spec = member_spec(member)
    return None if spec is None else f"{spec}|{_output_fingerprint(member)}"


def corpus_fingerprint(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def cache_path(cache_dir: str | Path, member: Any, texts: Sequence[str]) -> Path | None:
    key = member_cache_key(member)
    if key is None:
        return None
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(member_spec(member)).name or "member")[:60]
    digest = hashlib.sha256(f"{key}\n{corpus_fingerprint(texts)}".encode()).hexdigest()[:24]
    return Path(cache_dir) / f"{slug}-{len(texts)}-{digest}.npy"


def cached_member_embeddings(member: Any, texts: Sequence[str], cache_dir: str | Path | None = None,
                             batch_size: int = 32, show_progress: bool | None = None) -> np.ndarray:
    """`member.encode(texts)` (raw, not normalised), read from `cache_dir` when this member already encoded
    exactly these texts, else computed and written there (npy, keyed by member spec and corpus hash)."""
    path = cache_path(cache_dir, member, texts) if cache_dir is not None else None
    if cache_dir is not None and path is None:
        logger.warning("member %s has no spec to key a cache by: its embeddings are not cached",
                       getattr(member, "name", member))
    if path is not None and path.exists():
        vectors = np.load(path, allow_pickle=False)
        if vectors.shape == (len(texts), member.dim):
            logger.info("member %s: %d cached embeddings from %s", member.name, len(texts), path)
            return vectors
        logger.warning("%s holds shape %s, expected %s: encoding again", path, vectors.shape, (len(texts), member.dim))
    vectors = np.asarray(member.encode(list(texts), batch_size=batch_size, show_progress=show_progress),
                         dtype=np.float32)
    if vectors.shape != (len(texts), member.dim):
        raise ConfigError(f"member {member.name} returned shape {vectors.shape} for {len(texts)} texts, "
                          f"expected ({len(texts)}, {member.dim})")
    if path is not None:
        save_npy(path, vectors)
        logger.info("member %s: cached %d embeddings in %s", member.name, len(texts), path)
    return vectors
