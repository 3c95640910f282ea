"""The evaluation tasks, one module per kind of task. Every module in this package is imported when the
registry is first read (`sentforge.evaluation.task.discover_tasks`); a module defines tasks by decorating
`Task` subclasses with `@register_task`. Task modules import readers (`sentforge.evaluation.readers`),
scoring helpers (`similarity`, `ranking`, `search`, `classifier`) and the task contract, never each other."""
