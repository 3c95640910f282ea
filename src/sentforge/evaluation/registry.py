"""The registry of evaluation tasks: it collects the task classes that the modules of evaluation/tasks/
declare (their `TASKS` tuples), and `register_task` adds a user's own; `resolve_tasks` turns a selection of
family and task names into task classes. What a task is: evaluation/task.py.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Sequence

from sentforge.support.errors import ConfigError
from sentforge.evaluation.task import FAMILIES, Task
from sentforge.evaluation.tasks import geometry, pair_classification, reranking, retrieval, sentglue, sts, transfer
# A table of names that imports nothing of sentforge's (read here so that MTEB's names are accepted).
from sentforge.integrations.task_names import TASK_ALIASES

logger = logging.getLogger(__name__)

# Task classes by lower-cased name, in registration order (the order a family's tasks run in).
TASKS: dict[str, type[Task]] = {}


def register_task(cls: type[Task]) -> type[Task]:
    """Make a task selectable by its name (case-insensitive) and its family; returns the class, so it also
    works as a class decorator."""
    key = cls.metadata.name.lower()
    if key in TASKS and TASKS[key] is not cls:
        raise ConfigError(f"two tasks are named {cls.metadata.name!r}")
    TASKS[key] = cls
    return cls


def registered_tasks() -> dict[str, type[Task]]:
    return dict(TASKS)


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


for _task in (*geometry.TASKS, *pair_classification.TASKS, *reranking.TASKS, *retrieval.TASKS, *sentglue.TASKS,
              *sts.TASKS, *transfer.TASKS):
    register_task(_task)
