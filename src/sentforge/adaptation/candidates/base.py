"""What every candidate kind declares (`CandidateKind`): the result type it records, what the time plan and the
run ask of it, and its `run` (and, for a run the time limit can cut, `extend`). One kind per file of this
package; the package's collector (`__init__.py`) gathers them and the methods they declare."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, NamedTuple

from sentforge.adaptation.method import Candidate
from sentforge.adaptation.result import CandidateResult, Finished
from sentforge.adaptation.runner import RunContext, failed
from sentforge.support.errors import SentforgeError

if TYPE_CHECKING:
    from sentforge.adaptation.inputs import AdaptInputs
    from sentforge.adaptation.planning import Costs, Planner


class DiskUse(NamedTuple):
    """What a candidate may write: training runs (each with a checkpoint until it ends), saved encoders (the TSDAE
    ladder's snapshots) and meta-embeddings (each a copy of its members)."""

    runs: int = 0
    snapshots: int = 0
    metas: int = 0


class CandidateKind:
    """One kind of candidate, run for `candidate` (a frozen dataclass in each subclass).

    result_type: the finished result it records (its KIND is the "kind" of adapt.json and report.json).
    trained: a recipe trained from a start model within its planned share of the time, probed first and
    raced; its method takes recipe overrides. probed: a trained kind probed before the first share (augsbert's
    data is made in its own run: it takes the mean cost per step of the probes). per_model: one candidate per
    start model (else one in all).
    start_model: the start model itself, scored first: the time plan is measured on it, and a failure of it
    stops the run. combines: it combines finished candidates, so it runs once the cut ones are extended.
    by_default: it runs when no --candidates are named (else only when named). outruns_start: its model may
    encode faster than every start model, so a --min-texts-per-second above theirs can still be met.
    """

    result_type: ClassVar[type[Finished]]
    trained: ClassVar[bool] = False
    per_model: ClassVar[bool] = True
    start_model: ClassVar[bool] = False
    combines: ClassVar[bool] = False
    by_default: ClassVar[bool] = True
    probed: ClassVar[bool] = True
    outruns_start: ClassVar[bool] = False
    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        raise NotImplementedError

    def extend(self, context: RunContext, share: float) -> CandidateResult:
        """The run the time limit cut, continued for `share` seconds (only a trained kind is ever cut)."""
        raise NotImplementedError(f"{type(self).__name__} runs are not cut by a time limit")

    def run_or_fail(self, context: RunContext) -> CandidateResult:
        """The candidate's result; a SentforgeError (a recipe that cannot train on this data) fails it alone."""
        try:
            return self.run(context)
        except SentforgeError as err:
            return failed(context, self.candidate, err)

    @classmethod
    def timed_encoders(cls, meta_members: int) -> int | None:
        """The encoders its model runs when the speed measurement times it apart (planning.py, step 5); None when
        it is timed with the start model it was trained from (same architecture)."""
        return None

    @classmethod
    def reserve_s(cls, costs: Costs, meta_members: int, texts: int) -> float:
        """The seconds kept for it while the trained candidates wait (planning.py)."""
        return 0.0

    @classmethod
    def disk(cls, candidate: Candidate, plan: Planner) -> DiskUse:
        """What it may write (run.py's disk note)."""
        return DiskUse()

    @classmethod
    def data_s(cls, candidate: Candidate, inputs: AdaptInputs, costs: Costs) -> float:
        """The seconds it takes to make its training data in its own share (0: its data exists before it runs)."""
        return 0.0

    @classmethod
    def trainings(cls, candidate: Candidate, plan: Planner) -> int:
        """How many times its schedule is trained in its share (the plan's need counts each)."""
        return 1

