"""The evaluation contract: a `Task` with metadata, and the per-model embedding cache (the registry of
tasks: evaluation/registry.py).

A task reads its files from a data directory laid out as the standard distributions are (SentEval's
`downstream/`, GLUE's `glue_data/`, ...), encodes through whatever encoder it is given (usually a
`CachedEncoder`, so that tasks of one run share one encoding pass) and returns a flat dict of metrics.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sentforge.interface.encode_options import supported_keywords
from sentforge.support.errors import ConfigError, DataNotFoundError

FAMILIES = ("sts", "transfer", "sentglue", "useb", "geometry", "own")  # own: a user's files (evaluation/own)


@dataclass(frozen=True)
class TaskMetadata:
    """What a task is: MTEB-style metadata that the runner and the report read."""

    name: str
    family: str
    main_metric: str
    description: str
    # Paths relative to the data directory that must exist for the task to run.
    files: tuple[str, ...]
    splits: tuple[str, ...] = ("test",)
    reference: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ConfigError(f"task {self.name}: unknown family {self.family!r}; choose from {', '.join(FAMILIES)}")


class Task(ABC):
    """One benchmark. Subclasses set `metadata` and implement `evaluate`; `texts` lets the runner
    encode the texts of all tasks in one pass before any task runs."""

    metadata: ClassVar[TaskMetadata]

    def __init__(self, data_dir: str | Path, seed: int = 1111) -> None:
        self.data_dir = Path(data_dir)
        self.seed = seed

    @property
    def name(self) -> str:
        return self.metadata.name

    def missing_files(self) -> list[Path]:
        return [self.data_dir / f for f in self.metadata.files if not (self.data_dir / f).exists()]

    def check_available(self) -> None:
        missing = self.missing_files()
        if missing:
            raise DataNotFoundError(f"task {self.name}: missing {', '.join(str(p) for p in missing)}")

    def supports(self, model: Any) -> bool:
        """Whether this task can evaluate `model`; encoders (anything with `encode`) by default.
        Tasks that also take a lexical scorer such as BM25 override this."""
        return hasattr(model, "encode")

    def texts(self) -> list[str]:
        """Every text this task will encode (may repeat). Empty means: no pre-encoding."""
        return []

    @abstractmethod
    def evaluate(self, encoder: Any) -> dict[str, Any]:
        """Run the task with `encoder.encode(texts) -> (n, dim) float32` and return its metrics
        (floats, ×100 where the literature reports percentages); `metadata.main_metric` is a key."""


class CachedEncoder:
    """Wraps an encoder so that each distinct text is encoded once per run, whichever task asks."""

    def __init__(self, encoder: Any, batch_size: int = 64, show_progress: bool | None = None) -> None:
        self.encoder = encoder
        self.name = getattr(encoder, "name", type(encoder).__name__)
        self.batch_size = batch_size
        self.show_progress = show_progress
        self._rows: dict[str, int] = {}
        self._blocks: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def warm(self, texts: Sequence[str]) -> None:
        """Encode the texts not seen yet, in one pass."""
        new = list(dict.fromkeys(t for t in texts if t not in self._rows))
        if not new:
            return
        # sentence-transformers' keyword names, passed only where `encode` takes them: any encoder works.
        options = supported_keywords(self.encoder, {"batch_size": self.batch_size,
                                                    "show_progress_bar": self.show_progress})
        vectors = self.encoder.encode(new, **options)
        offset = len(self._rows)
        self._rows.update((text, offset + i) for i, text in enumerate(new))
        self._blocks.append(np.asarray(vectors, dtype=np.float32))
        self._matrix = None

    def encode(self, texts: Sequence[str], normalize: bool = False, **_: Any) -> np.ndarray:
        """Cached vectors of `texts` (encoding the new ones); batch options are the cache's own."""
        texts = list(texts)
        self.warm(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        if self._matrix is None:
            self._matrix = np.concatenate(self._blocks)
            self._blocks = [self._matrix]
        vectors = self._matrix[[self._rows[t] for t in texts]]
        if normalize:
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors

    def __len__(self) -> int:
        return len(self._rows)
