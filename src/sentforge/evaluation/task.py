"""The evaluation contract: a `Task` with metadata, a registry, and the per-model embedding cache.

A task reads its files from a data directory laid out as the standard distributions are (SentEval's
`downstream/`, GLUE's `glue_data/`, ...), encodes through whatever encoder it is given (usually a
`CachedEncoder`, so that tasks of one run share one encoding pass) and returns a flat dict of metrics.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sentforge.encode_options import supported_keywords
from sentforge.errors import ConfigError, DataNotFoundError

logger = logging.getLogger(__name__)

FAMILIES = ("sts", "transfer", "sentglue", "useb", "geometry", "own")  # own: a user's files (evaluation/own)
# Every module of this package is imported on first use of the registry; its tasks register on import.
TASKS_PACKAGE = "sentforge.evaluation.tasks"


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


_TASKS: dict[str, type[Task]] = {}


def register_task(cls: type[Task]) -> type[Task]:
    """Class decorator: make a task selectable by its name (case-insensitive) and its family."""
    key = cls.metadata.name.lower()
    if key in _TASKS and _TASKS[key] is not cls:
        raise ConfigError(f"two tasks are named {cls.metadata.name!r}")
    _TASKS[key] = cls
    return cls


def discover_tasks() -> None:
    """Import every module of the task package, in name order, so that their `@register_task` classes
    register; a module added to the package is found without being listed anywhere."""
    package = importlib.import_module(TASKS_PACKAGE)
    for module in pkgutil.iter_modules(package.__path__, f"{TASKS_PACKAGE}."):
        importlib.import_module(module.name)


def registered_tasks() -> dict[str, type[Task]]:
    discover_tasks()
    return dict(_TASKS)


def resolve_tasks(selection: str | Sequence[str]) -> list[type[Task]]:
    """Task classes for a comma-separated mix of family names and task names, in the order given; a family
    brings its tasks in registry order."""
    names = [s.strip() for s in (selection.split(",") if isinstance(selection, str) else selection) if s.strip()]
    if not names:
        raise ConfigError("no tasks selected")
    tasks = registered_tasks()
    chosen: list[type[Task]] = []
    for name in names:
        key = name.lower()
        if key in FAMILIES:
            matches = [cls for cls in tasks.values() if cls.metadata.family == key]
            if not matches:
                raise ConfigError(f"task family {name!r} has no tasks in this installation")
        elif key in tasks:
            matches = [tasks[key]]
        else:
            matches = [_mteb_alias(name, tasks)]
        chosen.extend(cls for cls in matches if cls not in chosen)
    return chosen


# Names people use for a task in papers (suggested for a close unknown name, never selected silently).
NICKNAMES = {"sts-b": "STSBenchmark", "stsb": "STSBenchmark", "sts-benchmark": "STSBenchmark",
             "sick": "SICKRelatedness", "sickr": "SICKRelatedness", "sick-relatedness": "SICKRelatedness"}


def _mteb_alias(name: str, tasks: dict[str, type[Task]]) -> type[Task]:
    """The task that an MTEB task name stands for; else an error with the closest names."""
    import difflib

    # A table of names that imports nothing of sentforge's (read here so that MTEB's names are accepted).
    from sentforge.integrations.task_names import TASK_ALIASES

    for alias in TASK_ALIASES:
        mteb = {m.lower(): m for m in alias.mteb}
        if name.lower() in mteb and alias.sentforge.lower() in tasks:
            task = tasks[alias.sentforge.lower()]
            logger.info("task %s is MTEB's name of sentforge's %s%s", mteb[name.lower()], task.metadata.name,
                        "" if alias.same_metric else f" (the scores differ: {alias.note})")
            return task
    names = list(FAMILIES) + sorted(cls.metadata.name for cls in tasks.values())
    candidates = ({n.lower(): n for n in names} | {m.lower(): m for alias in TASK_ALIASES for m in alias.mteb}
                  | {nickname: task for nickname, task in NICKNAMES.items() if task.lower() in tasks})
    close = list(dict.fromkeys(candidates[c] for c in difflib.get_close_matches(name.lower(), list(candidates), n=3,
                                                                               cutoff=0.6)))
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise ConfigError(f"unknown task {name!r}; {hint}valid families and tasks: {', '.join(names)} "
                      "(and their MTEB names, e.g. SICK-R)")


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
