"""What each trained candidate still to run needs, in seconds: its steps at the cost per step its probe
measured (probe.py), and its evaluations at its cadence (racing.py); the inputs of shares.plan."""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.adaptation import shares
from sentforge.adaptation.budget import Costs
from sentforge.adaptation.candidates import Candidate
from sentforge.adaptation.inputs import AdaptInputs
from sentforge.adaptation.ladder import ladder_steps, rungs
from sentforge.adaptation.probe import PROBE_STEPS
from sentforge.adaptation.racing import evaluation_cadence
from sentforge.adaptation.state import AdaptState
from sentforge.adaptation.trained import TrainSettings, recipe_settings, training_data


@dataclass(frozen=True)
class Needs:
    state: AdaptState
    inputs: AdaptInputs
    train: TrainSettings
    planned: list[Candidate]

    def seconds(self, candidate: Candidate, costs: Costs) -> float:
        """The steps after its probe, or for tsdae+mnrl (not probed: it starts after TSDAE) MNRL's steps once per
        rung at the cost of its start model's mnrl probe; with their evaluations."""
        steps, every = self._planned_steps(candidate), self.cadence(candidate)
        if candidate.after is None:
            steps -= self.state.probes.get(candidate.name, {}).get("steps", 0)
            return shares.need(steps, self.step_cost(candidate), every, costs)
        before = self.state.results.get(candidate.after)
        tsdae = next(c for c in self.planned if c.name == candidate.after)
        runs = len(rungs(before, self.state.run_dir(candidate.after))) if before and before["status"] == "done" \
            else len(self.snapshots(tsdae)) + 1
        return shares.need(steps, self.step_cost(candidate), every, costs, runs)

    def cadence(self, candidate: Candidate, time_limit: float | None = None) -> int:
        """Steps between the candidate's dev evaluations: --eval-every, else from its cost per step (and its
        time limit, once its share is known)."""
        return self.train.eval_every or evaluation_cadence(self.step_cost(candidate), self._planned_steps(candidate),
                                                           time_limit)

    def probe_cadence(self) -> int:
        """--eval-every during a probe; without it, none of the probe's steps is evaluated."""
        return self.train.eval_every or PROBE_STEPS + 1

    def _planned_steps(self, candidate: Candidate) -> int:
        _, examples = training_data(candidate, self.inputs)
        return recipe_settings(candidate, examples, self.train)["steps"]

    def step_cost(self, candidate: Candidate) -> float:
        """Seconds per step: the probe's; tsdae+mnrl's are those of the mnrl candidate of its start model (the
        method named like its recipe: same recipe, data and model), else the mean of the probes."""
        measured = {name: probe["seconds_per_step"] for name, probe in self.state.probes.items()}
        return shares.step_cost(candidate.name, measured, f"{candidate.model_key}.{candidate.method.recipe}")

    def snapshots(self, candidate: Candidate) -> list[int]:
        """The TSDAE ladder's steps when tsdae+mnrl starts from this candidate."""
        later = [c for c in self.planned if c.after == candidate.name]
        return ladder_steps(recipe_settings(candidate, len(self.inputs.texts), self.train)["steps"]) \
            if later and candidate.method.name == "tsdae" else []
