"""TSDAE before MNRL, the TSDAE length chosen by what it is for: the dev score after MNRL.

TSDAE's own dev score says little about how good a start it is for supervised training. The `tsdae`
candidate saves its encoder at a few step counts (the ladder) when `tsdae+mnrl` is planned; `tsdae+mnrl`
then runs MNRL from each rung reached and from TSDAE's kept checkpoint, shortest TSDAE first, sharing
its time, and keeps the rung whose MNRL model scores best on dev (the shorter one on a tie).
"""

from __future__ import annotations

from pathlib import Path
from sentforge.adaptation.result import CandidateResult
from sentforge.recipes.api import snapshot_dir

LADDER_STEPS = (100, 300, 1000)


def ladder_steps(planned_steps: int) -> list[int]:
    """The ladder's step counts below a TSDAE schedule of `planned_steps` (its end is the kept checkpoint)."""
    return [step for step in LADDER_STEPS if step < planned_steps]


def rungs(tsdae: CandidateResult, tsdae_dir: Path) -> list[tuple[int, str]]:
    """(TSDAE steps, the encoder to start MNRL from) for each snapshot reached and TSDAE's kept checkpoint,
    fewest steps first."""
    found = {step: str(snapshot_dir(tsdae_dir, step)) for step in LADDER_STEPS
             if step <= tsdae.steps and snapshot_dir(tsdae_dir, step).is_dir()}
    found.setdefault(tsdae.best_step, tsdae.model_path)  # a snapshot of the same step is the same encoder
    return sorted(found.items())


def rung_name(steps: int) -> str:
    return f"after-tsdae-{steps}"
