"""The adapt output directory and its state file (the run harness's, `harness/run_state.py`), which makes a
rerun of the same command resume.

OUTPUT/adapt.json holds the settings of the run (model specs, input files with their sha256, budget,
seed, candidates, ...) and each candidate's result as it finishes. A rerun with the same settings
reuses the finished candidates and resumes the interrupted one from its checkpoint; a rerun with
different settings is refused, so that results of two commands are never mixed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sentforge.adaptation.result import CandidateResult, RaceDecision
from sentforge.adaptation.state_records import Leftover, MeasuredCosts, Probe
from sentforge.harness.run_state import RUNS_DIR, RunState

__all__ = ["RUNS_DIR", "STATE_FILE", "AdaptState"]  # RUNS_DIR: run.py reads it here

STATE_FILE = "adapt.json"


class AdaptState(RunState):
    """The harness's `results` and `running`, and `measured` (the costs the time plan is measured on, None
    before the first start model is scored: `measured_start`, `measured_load`), `probes` (each probed trained
    candidate's `Probe`: a rerun does not probe it again), `races` (racing's decision to stop a candidate, saved
    as it is taken: a rerun keeps it stopped), `leftover` (what the time left once every schedule had ended was
    spent on, None before that decision: a rerun keeps it). The records are state_records.py's."""

    kind = "adapt"
    state_file = STATE_FILE
    SECTIONS = ("measured", "probes", "races", "leftover")
    measured: MeasuredCosts | None
    probes: dict[str, Probe]
    races: dict[str, RaceDecision]
    leftover: Leftover | None

    def open(self) -> bool:
        resumed = super().open()
        (self.output / RUNS_DIR).mkdir(exist_ok=True)
        return resumed

    def result_from_json(self, saved: dict[str, Any]) -> CandidateResult:
        return CandidateResult.from_json(saved)

    def result_to_json(self, result: CandidateResult) -> dict[str, Any]:
        return result.to_json()

    def section_from_json(self, section: str, saved: dict[str, Any]) -> Any:
        if section == "measured":
            return MeasuredCosts.from_json(saved) if saved else None
        if section == "leftover":
            return Leftover.from_json(saved) if saved else None
        record = {"probes": Probe, "races": RaceDecision}[section]
        return {name: record.from_json(value) for name, value in saved.items()}

    def section_to_json(self, section: str, values: Any) -> dict[str, Any]:
        if section in ("measured", "leftover"):
            return {} if values is None else values.to_json()
        return {name: value.to_json() for name, value in values.items()}

    def units_spent(self) -> float:
        """The harness's, and the probes of the candidates still to run; a probe on a cluster's worker (it names
        its `worker`) is in the wall time of the side-by-side runs."""
        running = (self.running or {}).get("name")
        probed = sum(p.wall_s for name, p in self.probes.items()
                     if name not in self.results and name != running and p.worker is None)
        return super().units_spent() + probed

    def probed(self, name: str, probe: Probe) -> None:
        """Record a finished probe; its seconds count as the candidate's until the candidate is recorded."""
        self.probes[name] = probe
        self._done_running(name)

    def raced(self, name: str, decision: RaceDecision) -> None:
        """Record racing's decision to stop the candidate (racing.py), before its run stops."""
        self.races[name] = decision
        self.save()

    def measured_start(self, timings: MeasuredCosts) -> None:
        """A start model's timings: the first one's are the costs the time plan is measured on (planning.Costs);
        a later start model's only add a load time that a state written before loads were timed lacks."""
        if self.measured is None:
            self.measured = timings
        elif self.measured.load_s is None:
            self.measured = replace(self.measured, load_s=timings.load_s)

    def measured_interval(self, seconds: float) -> None:
        """One paired bootstrap interval on the first start model's per-unit dev scores, timed once."""
        if self.measured.interval_s is None:
            self.measured = replace(self.measured, interval_s=round(seconds, 3))

    def measured_load(self, seconds: float) -> None:
        """A candidate model loaded from its run directory (after the start model's, which `measured` holds): the
        loads planned take the slowest."""
        self.measured = replace(self.measured, load_s=max(self.measured.load_s or 0.0, round(seconds, 3)))

    def prior_elapsed(self, name: str) -> float:
        """Seconds the candidate ran before: before an interruption, or in its probe."""
        if self.running and self.running["name"] == name:
            return self.running["elapsed_s"]
        return self.probes[name].wall_s if name in self.probes and name not in self.results else 0.0
