"""The labels output directory and its state file (OUTPUT/labels.json, the run harness's:
`harness/state.py`): the settings of the command, and each finished or skipped run. A rerun of the same
command takes up where it stopped — finished runs are not retrained, the interrupted one resumes from its
checkpoint — and a rerun of a different command on the same output is refused."""

from __future__ import annotations

from sentforge.harness.state import RunState

STATE_FILE = "labels.json"


class LabelsState(RunState):
    kind = "labels"
    state_file = STATE_FILE
