"""Time limits planned from a measured cost per step: each candidate's need, the shares of needs that fit and
of needs that do not (max-min fair, a minimum, the lowest-priority ones skipped), the probe's
timing of the first steps, and the probes kept in the state so that a rerun does not probe again."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from sentforge.adaptation.adapt_state import AdaptState
from sentforge.adaptation.planning import Costs, need, step_cost
from sentforge.adaptation.step_clock import PROBE_STEPS, StepClock
from sentforge.adaptation.planning import plan_shares as plan
from sentforge.adaptation.result import finished
from sentforge.adaptation.state_records import Probe

COSTS = Costs(dev_s=2.0, test_s=3.0, per_text_s=0.0)


def test_a_need_is_the_steps_their_evaluations_and_a_test():
    assert need(100, 0.5, 10, COSTS) == 100 * 0.5 + 11 * 2.0 + 3.0 == 75.0
    assert need(100, 0.5, 10, COSTS, runs=3) == 3 * (100 * 0.5 + 11 * 2.0) + 3.0 == 219.0  # the ladder's rungs
    assert need(0, 0.5, 10, COSTS) == 2.0 + 3.0  # a probe that ran the whole schedule: its last evaluation and test


def test_needs_that_fit_share_the_time_in_proportion_to_them():
    assert plan(1000.0, [75.0, 225.0], 7.0) == pytest.approx([250.0, 750.0])  # each its need and more
    assert plan(300.0, [75.0, 225.0], 7.0) == pytest.approx([75.0, 225.0])  # just fits
    assert plan(100.0, [1.0, 49.0], 4.0) == pytest.approx([4.0, 96.0])  # never below the minimum


def test_needs_that_do_not_fit_are_shared_max_min_fair():
    assert plan(50.0, [75.0, 10.0], 7.0) == pytest.approx([40.0, 10.0])  # the small need in full
    assert plan(20.0, [75.0, 25.0], 4.0) == pytest.approx([10.0, 10.0])  # neither fits its half: equal parts
    # 400 s of supervised steps beside unsupervised needs 30 times the time left: the short one runs whole.
    assert plan(3300.0, [400.0, 1200.0, 8200.0, 9500.0, 12000.0], 60.0) == pytest.approx(
        [400.0, 725.0, 725.0, 725.0, 725.0])


def test_a_share_below_the_minimum_is_raised_to_it_and_the_others_share_the_rest():
    # 10 in full (below the minimum 14): raised to 14, and 60 and 30 share the 36 left equally.
    assert plan(50.0, [60.0, 30.0, 10.0], 14.0) == pytest.approx([18.0, 18.0, 14.0])
    # Needs that fit: 1 of 50 in proportion is 2 < 4: 4, and the other gets the 96 left.
    assert plan(100.0, [1.0, 49.0], 4.0) == pytest.approx([4.0, 96.0])


def test_candidates_that_cannot_get_the_minimum_are_skipped_lowest_priority_first():
    # Three minimums (12 s) do not fit in 10 s: the third is skipped; the first two share 10 s equally.
    shares = plan(10.0, [75.0, 25.0, 10.0], 4.0)
    assert shares[:2] == pytest.approx([5.0, 5.0]) and shares[2] is None
    assert plan(3.0, [1.0, 1.0], 4.0) == [None, None]


def test_a_cost_per_step_is_measured_else_borrowed_else_the_mean():
    measured = {"m.tsdae": 0.3, "m.mnrl": 0.1}
    assert step_cost("m.tsdae", measured) == 0.3
    assert step_cost("m.tsdae+mnrl", measured, like="m.mnrl") == 0.1  # MNRL's steps, from another start
    assert step_cost("m.simcse", measured, like="m.simcse") == pytest.approx(0.2)
    assert step_cost("m.simcse", {}) == 0.0


def ticks(clock: StepClock, steps: list[int], times: list[float]) -> list[bool]:
    """Feed `clock` the ends of `steps` at `times`; whether it asked to stop after each."""
    now = iter(times)
    clock.clock = lambda: next(now)
    stops = []
    for step in steps:
        state = SimpleNamespace(step=step, should_stop=False)
        clock(state)
        stops.append(state.should_stop)
    return stops


def test_the_probe_times_steps_after_the_first_leaving_out_evaluations_and_stops():
    clock = StepClock(eval_every=2)
    # Step 1 ends at 10 s (loading and warm-up before it do not count); step 2 evaluates (1 s); step 3 takes 0.25 s.
    assert ticks(clock, [1, 2, 3], [10.0, 11.0, 11.25]) == [False] * (PROBE_STEPS - 1) + [True]
    assert clock.seconds_per_step() == pytest.approx(0.25)
    every = StepClock(eval_every=1)  # every step evaluates: their evaluations are in the timing
    ticks(every, [1, 2, 3], [10.0, 11.0, 11.25])
    assert every.seconds_per_step() == pytest.approx((1.0 + 0.25) / 2)
    resumed = StepClock(eval_every=100)  # a probe resumed from a checkpoint counts its own steps
    assert ticks(resumed, [3, 4, 5], [0.0, 0.5, 1.0])[-1] and resumed.seconds_per_step() == pytest.approx(0.5)
    short = StepClock(eval_every=2)  # a one-step schedule: nothing to time between two step ends
    ticks(short, [1], [10.0])
    assert short.seconds_per_step() is None


def test_probes_are_saved_counted_as_spent_and_read_back(tmp_path):
    state = AdaptState(tmp_path / "out", {"seed": 0})
    state.open()
    state.record("m.start", finished("start", "start", None, wall_s=1.0))
    state.beat("m.tsdae", 0.5, force=True)
    state.probed("m.tsdae", Probe(seconds_per_step=0.25, steps=3, wall_s=2.0))
    assert state.running is None and state.spent() == 1.0 + 2.0
    assert state.prior_elapsed("m.tsdae") == 2.0  # the candidate's run continues the probe's time
    again = AdaptState(tmp_path / "out", {"seed": 0})
    assert again.open() and again.probes == {"m.tsdae": Probe(seconds_per_step=0.25, steps=3, wall_s=2.0)}
    assert json.loads(again.path.read_text())["probes"] == {"m.tsdae": {"seconds_per_step": 0.25, "steps": 3,
                                                                        "wall_s": 2.0}}
    again.beat("m.tsdae", 2.5, force=True)  # its run, interrupted: the probe's time is in its elapsed time
    assert again.spent() == 1.0 + 2.5
    again.record("m.tsdae", finished("train", "tsdae", None, wall_s=4.0))
    assert again.spent() == 1.0 + 4.0 and again.prior_elapsed("m.tsdae") == 0.0
