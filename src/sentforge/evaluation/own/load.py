"""`load_dataset`: a user's file or BEIR folder as a `Task`, its kind detected from the layout and the
columns, or given (`KIND:PATH` on the command line)."""

from __future__ import annotations

import os
from pathlib import Path

from sentforge.data.classes import is_class_row
from sentforge.support.errors import ConfigError, InputFileError
from sentforge.evaluation.own.base import OwnDataTask, records
from sentforge.evaluation.own.classes import ClassesTask
from sentforge.evaluation.own.pairs import (
    PAIR_FIELDS,
    LabelledPairsTask,
    ScoredPairsTask,
)
from sentforge.evaluation.own.reranking import FIELDS as RERANKING_FIELDS
from sentforge.evaluation.own.reranking import OwnRerankingTask
from sentforge.evaluation.own.retrieval import BEIR_FILES, BeirRetrievalTask

DATASET_KINDS = ("scored-pairs", "labelled-pairs", "reranking", "retrieval", "classes")


def parse_dataset_spec(spec: str) -> tuple[str | None, Path]:
    """`PATH` or `KIND:PATH` (KIND one of DATASET_KINDS) -> (kind or None, path)."""
    kind, sep, rest = spec.partition(":")
    if sep and kind in DATASET_KINDS:
        return kind, Path(rest)
    return None, Path(spec)


def _beir_folder(path: Path) -> tuple[Path, str | None] | None:
    """(folder, split) when `path` is a BEIR folder or a qrels file inside one."""
    if path.is_dir() and all((path / f).exists() for f in BEIR_FILES):
        return path, None
    if path.suffix == ".tsv" and path.parent.name == "qrels" and all((path.parent.parent / f).exists()
                                                                      for f in BEIR_FILES):
        return path.parent.parent, path.stem
    return None


def detect_kind(path: str | os.PathLike) -> str:
    """The kind of a dataset from its layout (a BEIR folder) or its first record's fields."""
    path = Path(path)
    if _beir_folder(path):
        return "retrieval"
    if path.is_dir():
        raise InputFileError(f"{path}: a folder is read as BEIR retrieval data, but it lacks "
                             f"{' or '.join(f for f in BEIR_FILES if not (path / f).exists())}")
    if not path.exists():
        raise InputFileError(f"{path}: file not found")
    line_no, first = records(path)[0]
    fields = set(first)
    if "query" in fields:
        return "reranking"
    if is_class_row(first):
        return "classes"
    if set(PAIR_FIELDS) <= fields and ("score" in fields) != ("label" in fields):
        return "scored-pairs" if "score" in fields else "labelled-pairs"
    present = ", ".join(first) or "none"
    if set(PAIR_FIELDS) <= fields and "score" in fields:
        raise InputFileError(f"{path}:{line_no}: has both 'score' and 'label'; give the kind, e.g. "
                             f"scored-pairs:{path}")
    if set(PAIR_FIELDS) <= fields:
        raise InputFileError(f"{path}:{line_no}: pairs without a 'score' or 'label' column: evaluation compares "
                             "the model's similarities with a gold score (scored-pairs, Spearman) or a 0/1 label "
                             "(labelled-pairs, average precision); add one of these columns")
    raise InputFileError(f"{path}:{line_no}: cannot tell the kind of data from the columns ({present}); expected "
                         f"{', '.join(RERANKING_FIELDS)} (reranking), sentence1, sentence2 and score "
                         "(scored-pairs) or label (labelled-pairs), or text and label (classes)")


def load_dataset(path: str | os.PathLike, kind: str | None = None, dev: str | os.PathLike | None = None,
                 name: str | None = None, seed: int = 1111) -> OwnDataTask:
    """A task that evaluates on the dataset at `path`; `kind` (one of DATASET_KINDS) is detected when None.
    `dev` is a labelled-pairs file whose best thresholds the labelled-pairs metrics use. The data is read
    and checked now, so bad input fails before any model loads. The task is named `name` or the path."""
    path = Path(path)
    try:
        return _load_dataset(path, kind, dev, name, seed)
    except InputFileError as err:
        tasks = builtin_tasks_of(path)
        if not tasks:
            raise
        raise InputFileError(f"{err}; {path.name} is a data file of the built-in task {' or '.join(tasks)}: "
                             f"evaluate it with --tasks {tasks[0]} (tasks= in Python) and the data directory "
                             "that holds it") from None


_GENERIC_STEMS = {"train", "dev", "test", "valid", "validation", "data", "corpus"}


def builtin_tasks_of(path: Path) -> list[str]:
    """The built-in tasks that read a file of this name (its folder too, where the name alone is common)."""
    from sentforge.evaluation.registry import registered_tasks

    tail = Path(path).resolve().parts[-2:]
    by_folder, by_name = [], []
    for cls in registered_tasks().values():
        files = [Path(f).parts for f in cls.metadata.files]
        if any(f[-2:] == tail for f in files):
            by_folder.append(cls.metadata.name)
        elif Path(path).stem.lower() not in _GENERIC_STEMS and any(f[-1] == tail[-1] for f in files):
            by_name.append(cls.metadata.name)
    return by_folder or by_name


def _load_dataset(path: Path, kind: str | None, dev: str | os.PathLike | None, name: str | None,
                  seed: int) -> OwnDataTask:
    if kind is None:
        kind = detect_kind(path)
    elif kind not in DATASET_KINDS:
        raise ConfigError(f"unknown dataset kind {kind!r}; choose from {', '.join(DATASET_KINDS)}")
    if dev is not None and kind != "labelled-pairs":
        raise ConfigError(f"a dev file sets the thresholds of labelled-pairs data, but {path} is {kind}")
    name = name or str(path)
    if kind == "scored-pairs":
        return ScoredPairsTask(path, name, seed)
    if kind == "labelled-pairs":
        return LabelledPairsTask(path, name, Path(dev) if dev is not None else None, seed)
    if kind == "reranking":
        return OwnRerankingTask(path, name, seed)
    if kind == "classes":
        return ClassesTask(path, name, seed=seed)
    folder, split = _beir_folder(path) or (path, None)
    return BeirRetrievalTask(folder, name, split, seed)


def load_own_datasets(specs: list[str], dev: str | os.PathLike | None = None, seed: int = 1111) -> list[OwnDataTask]:
    """Tasks for `PATH` / `KIND:PATH` specs (the command line's --dataset); `dev` applies to every
    labelled-pairs dataset and must have one to apply to."""
    tasks = []
    for spec in specs:
        kind, path = parse_dataset_spec(spec)
        if kind is None:
            try:
                kind = detect_kind(path)
            except InputFileError:
                load_dataset(path)  # raises the error, with a hint where the file belongs to a built-in task
        tasks.append(load_dataset(path, kind, dev if kind == "labelled-pairs" else None, name=spec, seed=seed))
    if dev is not None and not any(t.metadata.extra["kind"] == "labelled-pairs" for t in tasks):
        raise ConfigError(f"--dev {dev}: it sets labelled-pairs thresholds, but no --dataset is labelled-pairs")
    return tasks
