"""The evaluation tasks, one module per kind of task. Each module declares its `Task` subclasses in a
module-level `TASKS` tuple and registers nothing; `sentforge.evaluation.registry` imports the modules by
name and collects those tuples. Task modules import readers (`sentforge.evaluation.readers`), scoring
helpers (`similarity`, `ranking`, `search`, `classifier`) and the task contract, never each other."""
