"""A real run re-decided from its recorded per-unit dev scores (tests/fixtures/adapt-redecision/: the report.json
and dev-items/ of a 60-minute Qatar Living adapt from all-MiniLM-L6-v2, seed 5; no weights). On its 43 dev
questions the dev leader, simcse and mnrl are within each other's noise. The run counted the command that resumed
mnrl after the time limit cut it as a training stage of its own, so "simplest" handed over simcse (one stage
against mnrl's "two"); counted as stages, both rules hand over mnrl. The test scores in the record were never
read by a choice: they are what the choices cost on held-out questions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentforge.adaptation.intervals import selection_items
from sentforge.adaptation.result import CandidateResult
from sentforge.adaptation.select import DEFAULT_RULE, select

RUN = Path(__file__).parents[1] / "fixtures" / "adapt-redecision"
START, SIMCSE, MNRL = "all-MiniLM-L6-v2.start", "all-MiniLM-L6-v2.simcse", "all-MiniLM-L6-v2.mnrl"
LEADER = "all-MiniLM-L6-v2.tsdae+mnrl.continued"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def recorded():
    saved = json.loads((RUN / "report.json").read_text(encoding="utf-8"))
    return saved, {name: CandidateResult.from_json(r) for name, r in saved["candidates"].items()}


def redecide(rule: str):
    saved, results = recorded()
    done = {name: r for name, r in results.items() if r.done}
    seed = saved["settings"]["seed"]
    return select(results, [START], rule, selection_items(RUN, done, rule, seed), seed)


def test_a_resumed_run_is_not_a_training_stage_so_simplest_no_longer_hands_over_simcse():
    saved, results = recorded()
    assert results[MNRL].extensions == 1 and len(results[MNRL].commands) == 2  # its run resumed once
    assert "made in 2 training stages instead of 4" in saved["selection"]["why"]  # what the run counted
    before = redecide("simplest")
    assert before.leader == LEADER and before.chosen == MNRL
    assert before.why.startswith(f"{MNRL} is chosen over the dev leader {LEADER}, which is not significantly "
                                 f"better: {MNRL} costs less (made in 1 training stage instead of 3)")


def test_labels_first_hands_over_the_candidate_trained_on_the_labels():
    saved, results = recorded()
    after = redecide(DEFAULT_RULE)
    assert after.chosen == MNRL == saved["selected"]
    assert f"{SIMCSE} learnt from unlabelled text alone, {LEADER} learnt from the labelled pairs" in after.why
    # What the choices cost on the held-out questions (recorded only, never chosen with).
    assert results[MNRL].test - results[SIMCSE].test == pytest.approx(1.48, abs=0.005)
    assert saved["test_regret"]["regret"] == 0.0


def test_significant_keeps_the_dev_leader():
    assert redecide("significant").chosen == LEADER
