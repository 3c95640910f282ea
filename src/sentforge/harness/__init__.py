"""The run harness of the budgeted, resumable commands (`sentforge adapt`, `sentforge labels`): the state
file that makes a rerun resume, with the input files' identity and the wall-clock budget across resumed calls
(`run_state.py`), the labelled pairs (`labelled.py`), a task's main score and each run's per-unit dev scores
and paired gains (`dev_scores.py`), the report files with their optional figures (`report_files.py`), runs as
Ray tasks (`ray_runs.py`) side by side (`side_by_side.py`), and a recipe run's batch and steps (`schedule.py`). The
output's lock and checks are `output_guard.py`'s; the `sentforge train` line that reproduces a run,
`recipes/command.py`'s."""
