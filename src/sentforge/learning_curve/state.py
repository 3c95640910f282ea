"""The labels output directory and its state file (OUTPUT/labels.json, written atomically after every
run): the settings of the command, and each finished or skipped run. A rerun of the same command takes
up where it stopped — finished runs are not retrained, the interrupted one resumes from its checkpoint —
and a rerun of a different command on the same output is refused."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sentforge.errors import ConfigError, OutputExistsError
from sentforge.io import save_json

STATE_FILE = "labels.json"
HEARTBEAT_SECONDS = 5.0


class LabelsState:
    def __init__(self, output: Path, settings: dict[str, Any]) -> None:
        self.output, self.settings = output, settings
        self.path = output / STATE_FILE
        self.results: dict[str, dict[str, Any]] = {}
        self.running: dict[str, Any] | None = None
        self._last_beat = 0.0

    def open(self) -> bool:
        """True when resuming a run of the same command."""
        if self.output.exists() and not self.output.is_dir():
            raise OutputExistsError(f"--output {self.output} exists and is not a directory")
        if self.path.is_file():
            saved = json.loads(self.path.read_text(encoding="utf-8"))
            changed = [key for key in sorted(set(saved["settings"]) | set(self.settings))
                       if saved["settings"].get(key) != self.settings.get(key)]
            if changed:
                raise ConfigError(f"--output {self.output} holds a labels run of a different command (it differs "
                                  f"in {', '.join(changed)}); rerun that command to resume it, or choose a new "
                                  "--output")
            self.results, self.running = saved["results"], saved.get("running")
            return True
        if self.output.is_dir() and any(self.output.iterdir()):
            raise OutputExistsError(f"--output {self.output} is not empty and holds no labels run ({STATE_FILE}); "
                                    "choose a new directory")
        self.output.mkdir(parents=True, exist_ok=True)
        self.save()
        return False

    def spent(self) -> float:
        """Seconds of the budget used by earlier calls (finished runs and the interrupted one)."""
        return sum(r.get("wall_s", 0.0) for r in self.results.values()) + (self.running or {}).get("elapsed_s", 0.0)

    def prior_elapsed(self, name: str) -> float:
        return self.running["elapsed_s"] if self.running and self.running["name"] == name else 0.0

    def beat(self, name: str, elapsed: float, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_beat >= HEARTBEAT_SECONDS:
            self.running, self._last_beat = {"name": name, "elapsed_s": round(elapsed, 2)}, now
            self.save()

    def record(self, name: str, result: dict[str, Any]) -> None:
        self.results[name] = result
        if self.running and self.running["name"] == name:
            self.running = None
        self.save()

    def save(self) -> None:
        save_json(self.path, {"settings": self.settings, "results": self.results, "running": self.running})
