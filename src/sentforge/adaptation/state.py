"""The adapt output directory and its state file, which makes a rerun of the same command resume.

OUTPUT/adapt.json holds the settings of the run (model specs, input files with their sha256, budget,
seed, candidates, ...) and each candidate's result as it finishes. A rerun with the same settings
reuses the finished candidates and resumes the interrupted one from its checkpoint; a rerun with
different settings is refused, so that results of two commands are never mixed.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from sentforge.adaptation.result import CandidateResult
from sentforge.errors import ConfigError, OutputExistsError
from sentforge.io import save_json

STATE_FILE = "adapt.json"
RUNS_DIR = "runs"
HEARTBEAT_SECONDS = 5.0  # how often the running candidate's elapsed time is saved


class AdaptState:
    """`results` (finished or skipped candidates by name), `running` (the candidate in progress and its
    elapsed seconds), `measured` (timings of the start model's evaluations), `probes` (each probed trained
    candidate's seconds per step, probe steps and wall seconds: a rerun does not probe it again), `races`
    (racing's decision to stop a candidate, saved as it is taken: a rerun keeps it stopped); `save()` writes
    them."""

    def __init__(self, output: str | os.PathLike, settings: dict[str, Any]) -> None:
        self.output = Path(output)
        self.path = self.output / STATE_FILE
        self.settings = settings
        self.results: dict[str, CandidateResult] = {}
        self.running: dict[str, Any] | None = None
        self.measured: dict[str, float] = {}
        self.probes: dict[str, dict[str, float]] = {}
        self.races: dict[str, dict[str, Any]] = {}
        self._last_beat = 0.0

    def open(self) -> bool:
        """Start a new run in an empty (or missing) directory, or take up the run there; True when resuming."""
        if self.output.exists() and not self.output.is_dir():
            raise OutputExistsError(f"--output {self.output} exists and is not a directory")
        if self.path.is_file():
            saved = json.loads(self.path.read_text(encoding="utf-8"))
            changed = [key for key in sorted(set(saved["settings"]) | set(self.settings))
                       if saved["settings"].get(key) != self.settings.get(key)]
            if changed:
                raise ConfigError(f"--output {self.output} holds an adapt run of a different command (it differs in "
                                  f"{', '.join(changed)}); rerun that command to resume it, or choose a new --output")
            self.results = {name: CandidateResult.from_json(r) for name, r in saved["results"].items()}
            self.running = saved.get("running")
            self.measured, self.probes = saved.get("measured", {}), saved.get("probes", {})
            self.races = saved.get("races", {})
            return True
        if self.output.is_dir() and any(self.output.iterdir()):
            raise OutputExistsError(f"--output {self.output} is not empty and holds no adapt run ({STATE_FILE}); "
                                    "choose a new directory")
        (self.output / RUNS_DIR).mkdir(parents=True, exist_ok=True)
        self.save()
        return False

    def run_dir(self, name: str) -> Path:
        return self.output / RUNS_DIR / name

    def spent(self) -> float:
        """Seconds of the budget used by earlier calls: the candidates' wall times, the interrupted one's
        elapsed time, the probes of those still to run (reading the inputs and loading models between
        candidates is not carried over)."""
        done = sum(_json(r).get("wall_s", 0.0) for r in self.results.values())
        running = self.running or {}
        probed = sum(p["wall_s"] for name, p in self.probes.items()
                     if name not in self.results and name != running.get("name"))
        return done + running.get("elapsed_s", 0.0) + probed

    def record(self, name: str, result: CandidateResult) -> None:
        self.results[name] = result
        if self.running and self.running["name"] == name:
            self.running = None
        self.save()

    def beat(self, name: str, elapsed: float, force: bool = False) -> None:
        """Save the running candidate's elapsed time (at most every few seconds)."""
        now = time.monotonic()
        if force or now - self._last_beat >= HEARTBEAT_SECONDS:
            self.running, self._last_beat = {"name": name, "elapsed_s": elapsed}, now
            self.save()

    def probed(self, name: str, probe: dict[str, float]) -> None:
        """Record a finished probe; its seconds count as the candidate's until the candidate is recorded."""
        self.probes[name] = probe
        if self.running and self.running["name"] == name:
            self.running = None
        self.save()

    def raced(self, name: str, decision: dict[str, Any]) -> None:
        """Record racing's decision to stop the candidate (racing.py), before its run stops."""
        self.races[name] = decision
        self.save()

    def prior_elapsed(self, name: str) -> float:
        """Seconds the candidate ran before: before an interruption, or in its probe."""
        if self.running and self.running["name"] == name:
            return self.running["elapsed_s"]
        return self.probes[name]["wall_s"] if name in self.probes and name not in self.results else 0.0

    def save(self) -> None:
        save_json(self.path, {"settings": self.settings,
                              "results": {name: _json(r) for name, r in self.results.items()}, "running": self.running,
                              "measured": self.measured, "probes": self.probes, "races": self.races})


def _json(result: CandidateResult | dict[str, Any]) -> dict[str, Any]:
    # (the labels run, learning_curve/state.py, records its runs as plain dicts)
    return result.to_json() if isinstance(result, CandidateResult) else result
