"""The state of a resumable run (OUTPUT/<kind>.json, written atomically after every record and every few
seconds of a running step): the settings of the command, with its input files' identity (path and sha256), and
each finished or skipped unit of work (an adapt candidate, a labels run). A rerun with the same settings takes
up where it stopped; a rerun with different settings (or changed input files) is refused, so that the results
of two commands are never mixed. The run's wall-clock budget counts the time spent by the earlier calls of the
same run (a resumed run does not start its budget again): every save records the call's elapsed wall time
(`calls_s`), loading and reading included, and an interrupted call saves it once more as it stops.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sentforge.support.errors import ConfigError
from sentforge.support.io import save_json
from sentforge.support.output_guard import Inputs, check_resumable_dir, guard_output

RUNS_DIR = "runs"
HEARTBEAT_SECONDS = 5.0  # how often the running unit's elapsed time is saved


class RunState:
    """`settings`, `results` (finished or skipped units by name) and `running` (the unit in progress and its
    elapsed seconds). A subclass names its command family (`kind`, also the lock's and the messages') and
    its file, and keeps more sections in `SECTIONS` (each saved as a dict after the results; a new run's is {}
    as `section_from_json` reads it).

    `parallel`: the wall seconds of the calls that ran units side by side on a Ray cluster (`elapsed_s`) and
    the units they ran (`runs`); those units' own times overlap, so the budget counts the calls' wall time
    instead of theirs. Saved last, and only once a call ran units side by side (a state file of a command
    that never did keeps the layout it always had)."""

    kind = ""
    state_file = ""
    SECTIONS: tuple[str, ...] = ()

    def __init__(self, output: str | os.PathLike, settings: dict[str, Any], started: float | None = None) -> None:
        self.output = Path(output)
        # This call's start (a time.monotonic() value); each save records its elapsed time after the earlier
        # calls' (`calls_s`), so that a rerun's budget counts all of their wall time.
        self.started = time.monotonic() if started is None else started
        self.calls_s: list[float] = []
        self._opened = False
        self.path = self.output / self.state_file
        self.settings = settings
        self.results: dict[str, Any] = {}
        self.running: dict[str, Any] | None = None
        self.parallel: dict[str, Any] = {}
        for section in self.SECTIONS:
            setattr(self, section, self.section_from_json(section, {}))
        self._last_beat = 0.0

    @classmethod
    def check_output(cls, output: str | os.PathLike, inputs: Inputs) -> Path:
        """The output rule before any work (output_guard.py): no input harmed, and a directory that is
        empty or holds a run of this kind. What that run holds is `open`'s to judge: the same command
        resumes it."""
        return guard_output(output, inputs, cls.kind, False, state_file=cls.state_file)

    def open(self) -> bool:
        """Start a new run in an empty (or missing) directory, or take up the run there; True when resuming."""
        check_resumable_dir(self.output, self.kind, self.state_file)
        if not self.path.is_file():
            self.output.mkdir(parents=True, exist_ok=True)
            self._opened = True
            self.save()
            return False
        saved = json.loads(self.path.read_text(encoding="utf-8"))
        changed = [key for key in sorted(set(saved["settings"]) | set(self.settings))
                   if saved["settings"].get(key) != self.settings.get(key)]
        if changed:
            raise ConfigError(f"--output {self.output} holds {_article(self.kind)} {self.kind} run of a different "
                              f"command (it differs in {', '.join(changed)}); rerun that command to resume it, or "
                              "choose a new --output")
        self.results = {name: self.result_from_json(r) for name, r in saved["results"].items()}
        self.running = saved.get("running")
        self.parallel = saved.get("parallel", {})
        for section in self.SECTIONS:
            setattr(self, section, self.section_from_json(section, saved.get(section, {})))
        self.calls_s = list(saved.get("calls_s", []))
        self._opened = True
        return True

    @contextlib.contextmanager
    def saved_if_interrupted(self) -> Iterator[None]:
        """Save the state once more when the call is interrupted (Ctrl-C), so that the time since the last save
        counts in the rerun's budget (nothing is saved into a directory this state has not opened)."""
        try:
            yield
        except KeyboardInterrupt:
            if self._opened:
                self.save()
            raise

    def run_dir(self, name: str) -> Path:
        return self.output / RUNS_DIR / name

    def spent(self) -> float:
        """Seconds of the budget used by earlier calls: their wall times as saved (`calls_s`: reading the inputs
        and loading models included), and never less than what the units recorded (`units_spent`, all that a
        state file written before `calls_s` was kept tells)."""
        return max(self.units_spent(), sum(self.calls_s))

    def units_spent(self) -> float:
        """The wall times of the units recorded one by one, the interrupted one's elapsed time and the wall time
        of the side-by-side runs."""
        side_by_side = self.side_by_side()
        return (sum(self.result_to_json(r).get("wall_s", 0.0) for name, r in self.results.items()
                    if name not in side_by_side)
                + (self.running or {}).get("elapsed_s", 0.0) + self.parallel.get("elapsed_s", 0.0))

    def side_by_side(self) -> set[str]:
        """The units that ran side by side on a cluster (their times are in `parallel`'s)."""
        return set(self.parallel.get("runs", ()))

    def record_parallel(self, name: str, result: Any, elapsed_s: float) -> None:
        """Record a unit that ran beside others, with the wall time of the side-by-side runs so far."""
        self.beat_parallel(elapsed_s, name)
        self.record(name, result)

    def beat_parallel(self, elapsed_s: float, name: str | None = None) -> None:
        """Save the wall time of the side-by-side runs so far (`name`, when given, among them)."""
        runs = self.parallel.get("runs", [])
        self.parallel = {"elapsed_s": elapsed_s, "runs": runs + [name] if name and name not in runs else runs}
        self.save()

    def result_from_json(self, saved: dict[str, Any]) -> Any:
        """A recorded unit as the command uses it (a subclass may type it)."""
        return saved

    def result_to_json(self, result: Any) -> dict[str, Any]:
        return result

    def section_from_json(self, section: str, saved: dict[str, Any]) -> Any:
        """A section as the command uses it (a subclass may type it)."""
        return saved

    def section_to_json(self, section: str, values: Any) -> dict[str, Any]:
        return values

    def record(self, name: str, result: Any) -> None:
        self.results[name] = result
        self._done_running(name)

    def beat(self, name: str, elapsed: float, force: bool = False) -> None:
        """Save the running unit's elapsed time (at most every few seconds)."""
        now = time.monotonic()
        if force or now - self._last_beat >= HEARTBEAT_SECONDS:
            self.running, self._last_beat = {"name": name, "elapsed_s": elapsed}, now
            self.save()

    def heartbeat(self, name: str, prior: float, stop_at: int | None = None) -> Heartbeat:
        """A training callback that saves `name`'s elapsed time; the unit starts running now."""
        return Heartbeat(self, name, prior, stop_at)

    def prior_elapsed(self, name: str) -> float:
        """Seconds the unit ran before an interruption."""
        return self.running["elapsed_s"] if self.running and self.running["name"] == name else 0.0

    def to_json(self) -> dict[str, Any]:
        """What the state file holds."""
        return {"settings": self.settings,
                "results": {name: self.result_to_json(r) for name, r in self.results.items()},
                "running": self.running,
                **{section: self.section_to_json(section, getattr(self, section)) for section in self.SECTIONS},
                **({"parallel": self.parallel} if self.parallel else {}),
                "calls_s": [*self.calls_s, round(time.monotonic() - self.started, 2)]}

    def save(self) -> None:
        save_json(self.path, self.to_json())

    def _done_running(self, name: str) -> None:
        """`name` no longer runs: its time is in what was just recorded."""
        if self.running and self.running["name"] == name:
            self.running = None
        self.save()


class Heartbeat:
    """Called with the TrainerState after every training step: saves the unit's elapsed time, `prior`
    (what it ran before) included, and stops the training at step `stop_at` (None: never)."""

    def __init__(self, state: RunState, name: str, prior: float, stop_at: int | None = None) -> None:
        self.state, self.name, self.prior, self.stop_at = state, name, prior, stop_at
        self.started = time.monotonic()
        state.beat(name, prior, force=True)

    def elapsed(self) -> float:
        return self.prior + time.monotonic() - self.started

    def __call__(self, trainer_state: Any) -> None:
        self.state.beat(self.name, self.elapsed())
        if self.stop_at is not None and trainer_state.step >= self.stop_at:
            trainer_state.should_stop = True


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def file_digest(path: str | os.PathLike) -> str:
    """sha256 of a file, or of every file under a folder (a BEIR dataset), in name order."""
    path = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file()):
        digest.update(str(file.relative_to(path) if file != path else "").encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def input_record(path: str | os.PathLike | None) -> dict[str, str] | None:
    """{"path", "sha256"} of an input file or folder; None for an input not given."""
    return None if path is None else {"path": str(path), "sha256": file_digest(path)}


def check_budget_minutes(minutes: float) -> None:
    """The one rule of --budget-minutes (adapt, labels): a time greater than 0."""
    if not minutes > 0:
        raise ConfigError(f"--budget-minutes must be > 0, got {minutes:g}")


@dataclass
class Budget:
    total_s: float
    spent_before_s: float  # by earlier calls of the same run (resume)
    started: float = field(default_factory=time.monotonic)

    def remaining(self) -> float:
        return self.total_s - self.spent_before_s - (time.monotonic() - self.started)
