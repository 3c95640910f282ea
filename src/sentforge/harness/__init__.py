"""The run harness of the budgeted, resumable commands (`sentforge adapt`, `sentforge labels`): the state
file that makes a rerun resume (`state.py`), the input files' identity kept in it (`inputs.py`), the
labelled pairs (`labelled.py`), each run's per-unit dev scores and paired gains (`dev_items.py`), a task's
main score (`scoring.py`), the wall-clock budget (`budget.py`), the report files (`report.py`) and the
report's optional figures (`plots.py`). The output's lock and checks
are `output_guard.py`'s; the `sentforge train` line that reproduces a run, `recipes/command.py`'s."""
