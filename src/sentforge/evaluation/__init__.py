"""Evaluation: tasks with metadata and a registry, and a runner that encodes once and reports.

    from sentforge.evaluation import evaluate
    report = evaluate("all-MiniLM-L6-v2", "sts,geometry", data_dir="/path/to/data", output="results.json")
"""

from sentforge.evaluation.runner import evaluate
from sentforge.evaluation.task import CachedEncoder, Task, TaskMetadata, register_task, registered_tasks, resolve_tasks

__all__ = ["CachedEncoder", "Task", "TaskMetadata", "evaluate", "register_task", "registered_tasks", "resolve_tasks"]
