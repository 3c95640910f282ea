"""The budget holds the whole run: the end (speed measurement and report) planned before the candidates' shares,
and a trained candidate's deadline that stops its training where what follows its last step still fits in its
share. Fake clocks and costs: no model trains here."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from sentforge.adaptation.candidates import METHODS, Candidate
from sentforge.adaptation.deadline import Deadline
from sentforge.adaptation import select as selection
from sentforge.adaptation.planning import (INTERVALS_PER_CANDIDATE, LOADS_AFTER_TRAINING, REPORT_S, SPEED_SHARE, Costs,
                                           Planner, to_next_evaluation)
from sentforge.adaptation.result import NotRun, finished
from sentforge.adaptation.speed import MIN_PASS_TEXTS, ROUNDS, WARM_UP_TEXTS
from sentforge.adaptation.state_records import MeasuredCosts
from sentforge.harness.run_state import Budget
from sentforge.training.stopping import TIME_LIMIT

from selection_tables import BASE, L3, L6, SWING, table

COSTS = Costs(dev_s=7.0, test_s=10.0, per_text_s=0.02, load_s=1.5)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def candidate(method: str) -> Candidate:
    is_meta = not METHODS[method].kind.per_model  # the meta-embeddings and distil
    return Candidate(method if is_meta else f"m.{method}", METHODS[method], None if is_meta else "m",
                     None if is_meta else "m")


PLANNED = [candidate(m) for m in ("start", "tsdae", "mnrl", "meta-concat", "meta-gcca", "distil")]


def planner(clock: FakeClock, monkeypatch, results: dict | None = None, total_s: float = 240.0,
            sample: int = 512) -> Planner:
    monkeypatch.setattr("sentforge.harness.run_state.time.monotonic", clock)
    state = SimpleNamespace(results=results or {}, measured=MeasuredCosts(COSTS.dev_s, COSTS.test_s,
                                                                                 COSTS.per_text_s, COSTS.load_s))
    return Planner(state, SimpleNamespace(texts=["text"] * 400), None, PLANNED, Budget(total_s, 0.0, clock()),
                   meta_members=2, speed_sample=["text"] * sample)


def test_the_speed_measurement_is_planned_from_the_cost_per_text_and_held_to_a_share_of_the_budget():
    encoders = [1, 2, 2, 1]  # the start model, two meta-embeddings of 2 members, distil: 6 encoders per round
    loads, per_round_text = 6, 6 * COSTS.per_text_s
    warm = WARM_UP_TEXTS * per_round_text
    # A long budget: every round over the whole sample (5 x 512 texts x 6 encoders x 20 ms = 307 s, below 5 % of it).
    assert COSTS.speed_estimate(encoders, loads, 512, 10000.0) == pytest.approx(
        loads * 1.5 + warm + ROUNDS * 512 * per_round_text)
    # 4 minutes: the passes are cut to what 5 % of the budget holds, but not below MIN_PASS_TEXTS texts.
    assert COSTS.speed_estimate(encoders, loads, 512, 240.0) == pytest.approx(loads * 1.5 + warm + SPEED_SHARE * 240)
    least = ROUNDS * MIN_PASS_TEXTS * per_round_text
    assert least > SPEED_SHARE * 60.0
    assert COSTS.speed_estimate(encoders, loads, 512, 60.0) == pytest.approx(loads * 1.5 + warm + least)
    assert COSTS.report_estimate(4) == REPORT_S + 2 * 1.5


def test_the_candidates_are_planned_on_the_time_left_before_the_end(monkeypatch):
    clock = FakeClock()
    plan = planner(clock, monkeypatch)
    reserve = plan.end_reserve()
    expected = COSTS.speed_estimate([1, 2, 2, 1], len(PLANNED), 512, 240.0) + COSTS.report_estimate(len(PLANNED))
    assert reserve == pytest.approx(expected)
    clock.now += 60.0
    assert plan.available() == pytest.approx(240.0 - 60.0 - reserve)
    # Candidates that did not run are not measured at the end: their part of the reserve goes back to the others.
    skipped = {"meta-concat": NotRun("meta", "meta-concat", "skipped", reason="no time"),
               "meta-gcca": NotRun("meta", "meta-gcca", "skipped", reason="no time"),
               "distil": NotRun("distil", "distil", "skipped", reason="no time")}
    fewer = planner(clock, monkeypatch, skipped)
    assert fewer.end_reserve() == pytest.approx(COSTS.speed_estimate([1], 3, 512, 240.0) + COSTS.report_estimate(3))
    assert fewer.available() > plan.available()
    # Past the budget nothing is left to plan: every trained candidate's room is None (skipped, with why).
    clock.now += 300.0
    assert plan.room().equal_s is None


def test_the_selection_s_intervals_are_planned_at_the_cost_timed_on_the_start_model(monkeypatch):
    timed = Costs(dev_s=7.0, test_s=10.0, per_text_s=0.02, load_s=1.5, interval_s=4.0)
    assert timed.report_estimate(5) == pytest.approx(COSTS.report_estimate(5) + INTERVALS_PER_CANDIDATE * 5 * 4.0)
    # The selection computes no more intervals than planned: five candidates, a leader and others within its noise.
    results, items = table({"l6.start": (BASE, L6, 0), "l6.tsdae+mnrl": (BASE + 4.5 + 4 * SWING, L6, 88),
                            "l6.simcse": (BASE + 3.0 - 4 * SWING, L6, 32), "l6.mnrl": (BASE + 2.9 - 4 * SWING, L6, 40),
                            "l3.mnrl": (BASE + 3.5 - 4 * SWING, L3, 40)})
    calls = []
    original = selection.paired_gain
    monkeypatch.setattr(selection, "paired_gain", lambda *args: calls.append(args) or original(*args))
    chosen = selection.select(results, ["l6.start"], "labels-first", items)
    assert len(chosen.comparisons) == 3 and 0 < len(calls) <= INTERVALS_PER_CANDIDATE * len(results)


def test_the_end_reserve_holds_the_intervals_of_every_candidate_that_may_finish(monkeypatch):
    clock = FakeClock()
    plan = planner(clock, monkeypatch)
    untimed = plan.end_reserve()
    plan.state.measured = MeasuredCosts(COSTS.dev_s, COSTS.test_s, COSTS.per_text_s, COSTS.load_s, interval_s=3.0)
    assert plan.end_reserve() == pytest.approx(untimed + INTERVALS_PER_CANDIDATE * len(PLANNED) * 3.0)


def test_a_deadline_stops_training_where_the_rest_of_the_candidate_still_fits_its_share():
    clock = FakeClock()
    step_s, share, prior = 2.0, 100.0, 12.0  # 12 s of an earlier call (or its probe) count in the share
    started = clock()

    def elapsed() -> float:
        return prior + clock() - started

    after_s = COSTS.after_step_s(step_s)
    assert after_s == step_s + 2 * COSTS.dev_s + COSTS.test_s + LOADS_AFTER_TRAINING * COSTS.load_s
    deadline = Deadline(share, after_s, elapsed)
    clock.now += 5.0  # loading the model and reading the data, before the first step: in the share too
    state = SimpleNamespace(step=0, total_steps=1000, should_stop=False, stop_reason=None)
    while not state.should_stop:
        state.step += 1
        clock.now += step_s + (COSTS.dev_s if state.step % 10 == 0 else 0.0)  # a dev evaluation every 10 steps
        deadline(state)
    assert state.stop_reason == TIME_LIMIT
    # What follows the last step: a checkpoint, the kept model loaded and saved, its test and per-unit dev scores.
    clock.now += LOADS_AFTER_TRAINING * COSTS.load_s + COSTS.test_s + COSTS.dev_s
    assert elapsed() <= share
    assert elapsed() > share - after_s - step_s - COSTS.dev_s  # and it stopped no earlier than it had to
    # A schedule that ends by itself is not marked as stopped by the time limit.
    done = SimpleNamespace(step=1000, total_steps=1000, should_stop=False, stop_reason=None)
    Deadline(1.0, after_s, lambda: 1e6)(done)
    assert not done.should_stop


def test_an_extension_reaches_its_next_evaluation_only_with_the_time_its_deadline_keeps():
    cut = finished("train", "tsdae", None, steps=4, planned_steps=500, eval_every=10)
    # 6 steps to step 10, its evaluations and test, a load before it and the loads its deadline keeps after it.
    assert to_next_evaluation(cut, 2.0, COSTS) == pytest.approx(
        6 * 2.0 + COSTS.trained_minimum + (LOADS_AFTER_TRAINING + 1) * COSTS.load_s)
