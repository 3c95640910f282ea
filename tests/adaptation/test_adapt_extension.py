"""The time left resumes a candidate the time limit cut: it continues from its last checkpoint and ends
with the weights of a run that was never stopped; a candidate another one started from is not extended, nor
one whose share cannot reach its next dev evaluation."""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import load_file

from sentforge.adaptation.candidates import METHODS, Candidate
from sentforge.adaptation.planning import Costs, cut_candidates, to_next_evaluation
from sentforge.adaptation.result import NotRun, finished

from adapt_domain import domain, run  # noqa: F401 - the fixture and the fast adapt call

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def stop_once_at(step: int):
    """A callback that stops the first training it sees at `step`, as the time limit does."""
    fired = []

    def callback(state) -> None:
        if not fired and state.step == step:
            fired.append(step)
            state.should_stop, state.stop_reason = True, "time limit"
    return callback


def weights(model_dir) -> dict[str, np.ndarray]:
    return load_file(str(next(model_dir.rglob("model.safetensors"))))


def test_a_cut_candidate_resumes_and_ends_with_the_uninterrupted_weights(tiny_bert_dir, domain, tmp_path):  # noqa: F811
    straight = run(tiny_bert_dir, domain, tmp_path / "straight", candidates=["tsdae"])
    cut = run(tiny_bert_dir, domain, tmp_path / "cut", candidates=["tsdae"], callbacks=[stop_once_at(4)])
    name = f"{tiny_bert_dir.name}.tsdae"
    planned = straight["candidates"][name]["planned_steps"]
    result = cut["candidates"][name]
    assert planned > 4 and result["steps"] == planned and result["extensions"] == 1 and not result["stopped"]
    assert len(result["commands"]) == 2 and result["commands"][1].endswith("--resume")
    assert result["evaluations"] == straight["candidates"][name]["evaluations"]
    expected, got = weights(tmp_path / "straight" / "runs" / name), weights(tmp_path / "cut" / "runs" / name)
    assert expected.keys() == got.keys()
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


def test_only_cut_candidates_no_other_started_from_are_extended_best_first():
    def candidate(method: str) -> Candidate:
        return Candidate(f"m.{method}", METHODS[method], "m", "m")

    planned = [candidate(m) for m in ("start", "tsdae", "mnrl", "tsdae+mnrl", "simcse", "ct")]
    cut = finished("train", "tsdae", None, stopped="time limit", steps=10, planned_steps=100)
    results = {"m.start": finished("start", "start", None, dev=50.0),
               "m.tsdae": cut.update(dev=60.0),  # tsdae+mnrl started from it
               "m.mnrl": cut.update(method="mnrl", dev=55.0, steps=100),  # finished its schedule
               "m.tsdae+mnrl": cut.update(method="tsdae+mnrl", dev=52.0),
               "m.simcse": cut.update(method="simcse", dev=58.0),
               "m.ct": cut.update(method="ct", dev=57.0, stopped="early stopping")}
    assert [c.name for c in cut_candidates(planned, results)] == ["m.simcse", "m.tsdae+mnrl"]
    del results["m.tsdae+mnrl"]
    assert [c.name for c in cut_candidates(planned, results)] == ["m.tsdae", "m.simcse"]
    results["m.tsdae+mnrl"] = NotRun("train", "tsdae+mnrl", "skipped", reason="budget")  # never started
    assert [c.name for c in cut_candidates(planned, results)] == ["m.tsdae", "m.simcse"]


def test_an_extension_is_planned_only_to_reach_the_next_evaluation():
    costs = Costs(dev_s=10.0, test_s=5.0, per_text_s=0.01)  # the trained minimum: 2 × 10 + 5 = 25 s
    cut = finished("train", "simcse", None, stopped="time limit", steps=391, planned_steps=5710,
                          eval_every=104)
    # The next evaluation is at step 416: 25 steps at 2 s, plus the minimum.
    assert to_next_evaluation(cut, 2.0, costs) == 25 * 2.0 + 25.0
    assert to_next_evaluation(cut.update(steps=416), 2.0, costs) == 104 * 2.0 + 25.0
    # The schedule ends before the next cadence step: its last step, 400, is evaluated (9 steps on).
    assert to_next_evaluation(cut.update(planned_steps=400), 2.0, costs) == 9 * 2.0 + 25.0
    # A schedule run to its end has no evaluation left.
    assert to_next_evaluation(cut.update(steps=400, planned_steps=400), 2.0, costs) is None
    assert to_next_evaluation(cut.update(eval_every=None), 2.0, costs) == 25.0  # an older result: the minimum
