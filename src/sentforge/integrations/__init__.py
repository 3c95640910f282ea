"""Bridges to other tools. `task_names` needs nothing extra; `mteb` needs the `mteb` extra."""
