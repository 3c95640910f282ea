"""The labels output directory and its state file (OUTPUT/labels.json, written atomically after every
run and every few seconds of a running one): the settings of the command, and each finished or skipped
run. A rerun of the same command takes up where it stopped — finished runs are not retrained, the
interrupted one resumes from its checkpoint — and a rerun of a different command on the same output is
refused. The bookkeeping (elapsed time, records, saving) is adapt's (`adaptation/state.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sentforge.adaptation.state import AdaptState
from sentforge.errors import ConfigError, OutputExistsError

STATE_FILE = "labels.json"


class LabelsState(AdaptState):
    def __init__(self, output: Path, settings: dict[str, Any]) -> None:
        super().__init__(output, settings)
        self.path = self.output / STATE_FILE

    def open(self) -> bool:
        """True when resuming a run of the same command."""
        if self.output.exists() and not self.output.is_dir():
            raise OutputExistsError(f"--output {self.output} exists and is not a directory")
        if not self.path.is_file():
            if self.output.is_dir() and any(self.output.iterdir()):
                raise OutputExistsError(f"--output {self.output} is not empty and holds no labels run "
                                        f"({STATE_FILE}); choose a new directory")
            self.output.mkdir(parents=True, exist_ok=True)
            self.save()
            return False
        saved = json.loads(self.path.read_text(encoding="utf-8"))
        changed = [key for key in sorted(set(saved["settings"]) | set(self.settings))
                   if saved["settings"].get(key) != self.settings.get(key)]
        if changed:
            raise ConfigError(f"--output {self.output} holds a labels run of a different command (it differs in "
                              f"{', '.join(changed)}); rerun that command to resume it, or choose a new --output")
        self.results, self.running = saved["results"], saved.get("running")
        return True
