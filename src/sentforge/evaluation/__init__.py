"""Evaluation: tasks with metadata and a registry, and a runner that encodes once and reports.

    from sentforge.evaluation import evaluate
    report = evaluate("all-MiniLM-L6-v2", "sts,geometry", data_dir="/path/to/data", output="results.json")
    report = evaluate("all-MiniLM-L6-v2", [load_dataset("my-dev.jsonl")])  # a user's own data
    report = evaluate_datasets("all-MiniLM-L6-v2", "results.json", datasets=["my-dev.jsonl"])  # sentforge eval
"""

from sentforge.evaluation.own import load_dataset
from sentforge.evaluation.runner import add_results_to_card, evaluate, evaluate_datasets
from sentforge.evaluation.registry import register_task, registered_tasks, resolve_tasks
from sentforge.evaluation.task import CachedEncoder, Task, TaskMetadata

__all__ = ["CachedEncoder", "Task", "TaskMetadata", "add_results_to_card", "evaluate", "evaluate_datasets",
           "load_dataset", "register_task", "registered_tasks", "resolve_tasks"]
