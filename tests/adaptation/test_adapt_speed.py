"""Encode speeds timed in interleaved rounds (median and spread), the front and the speed bound where the spreads
do not tell two speeds apart, and front.png's names placed clear of each other. Fake models and a fake clock."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sentforge.adaptation.front import off_front_within_noise, pareto_front
from sentforge.adaptation.result import CandidateResult
from sentforge.adaptation.speed import (MIN_PASS_TEXTS, MIN_ROUNDS, ROUNDS, WARM_UP_TEXTS, ModelCost, SpeedRecord,
                                        interleaved_rates, measure, pass_size, summary, told_apart,
                                        within_noise_of_bound)

TEXTS = [f"text {i}" for i in range(512)]


class Machine:
    """A fake clock and the load on it: `busy[i]` slows the i-th timed encode call by that factor."""

    def __init__(self, busy: dict[int, float] | None = None) -> None:
        self.now, self.calls, self.busy = 0.0, [], busy or {}

    def clock(self) -> float:
        return self.now


class FakeModel:
    def __init__(self, machine: Machine, name: str, per_text_s: float, parameters: int = 1, dim: int = 4,
                 encoders: int = 1) -> None:
        self.machine, self.name, self.per_text_s, self.dim = machine, name, per_text_s, dim
        self.cost = {"parameters": parameters, "dim": dim, "encoders": encoders}

    def encode(self, texts):
        calls = self.machine.calls
        calls.append(self.name)
        self.machine.now += len(texts) * self.per_text_s * self.machine.busy.get(len(calls) - 1, 1.0)


def test_models_are_timed_in_interleaved_rounds_and_the_median_resists_a_busy_moment():
    machine = Machine()
    models = {"a": FakeModel(machine, "a", 0.01), "b": FakeModel(machine, "b", 0.01)}
    # Calls 0-1 are the warm-ups; b's second timed pass (call 4) runs while the machine is three times as busy.
    machine.busy = {4: 3.0}
    rates, size = interleaved_rates(models, TEXTS, seconds=1000.0, clock=machine.clock)
    assert size == len(TEXTS)  # time enough for every round over the whole sample
    assert machine.calls == ["a", "b"] + ["a", "b", "b", "a"] * 2 + ["a", "b"]  # A B, B A, ...: interleaved
    assert [len(r) for r in rates.values()] == [ROUNDS, ROUNDS]
    a, b = summary(rates["a"]), summary(rates["b"])
    assert a["texts_per_second"] == b["texts_per_second"] == 100.0  # the same model: the same median
    assert b["texts_per_second_range"] == [pytest.approx(33.3), 100.0] and b["rounds"] == ROUNDS
    assert told_apart(SpeedRecord(1, 4, 1, **a), SpeedRecord(1, 4, 1, **b)) == 0  # never ranked by the busy moment


def test_the_passes_and_rounds_fit_the_time_given():
    machine = Machine()
    models = {"a": FakeModel(machine, "a", 0.01), "meta": FakeModel(machine, "meta", 0.03)}
    # 16 texts of warm-up each (0.64 s); 5 rounds of n texts cost 5 * n * 0.04 s: 20 s hold n = 96 after them.
    rates, size = interleaved_rates(models, TEXTS, seconds=20.0, clock=machine.clock)
    assert size == pass_size(20.0 - WARM_UP_TEXTS * 0.04, [0.01, 0.03], len(TEXTS)) == 96
    assert len(rates["a"]) == ROUNDS and machine.now <= 20.0 + 1e-9
    # Far too little time: MIN_ROUNDS rounds of MIN_PASS_TEXTS texts all the same (a median and a spread).
    short = Machine()
    models = {"a": FakeModel(short, "a", 0.01), "meta": FakeModel(short, "meta", 0.03)}
    rates, size = interleaved_rates(models, TEXTS, seconds=0.5, clock=short.clock)
    assert size == MIN_PASS_TEXTS and len(rates["a"]) == MIN_ROUNDS


def test_one_model_of_each_architecture_is_timed_and_its_twins_take_its_speed():
    machine = Machine()
    loaded = {"start": FakeModel(machine, "start", 0.01, parameters=10),
              "start.mnrl": FakeModel(machine, "start.mnrl", 0.01, parameters=10),
              "distil": FakeModel(machine, "distil", 0.011, parameters=11, dim=8)}
    for model in loaded.values():
        model.parameters = lambda m=model: iter(())  # not a torch module: the cost record below is patched in

    records = measure(loaded.__getitem__, list(loaded), TEXTS, 1000.0, clock=machine.clock)
    assert set(machine.calls) == {"start", "distil"}  # the trained twin is loaded, never timed
    assert records["start.mnrl"].same_as == "start"
    assert replace(records["start.mnrl"], same_as=None) == records["start"]
    assert records["distil"].texts_per_second == pytest.approx(90.9, abs=0.1)
    assert records["start"].rounds == ROUNDS and records["start"].texts == len(TEXTS)
    assert told_apart(records["start"], records["distil"]) == 1  # a steady machine tells them apart


@pytest.fixture(autouse=True)
def fake_costs(monkeypatch):
    """The fake models' parameters, dimension and encoders as speed.cost_record reads them."""
    monkeypatch.setattr("sentforge.adaptation.speed.cost_record", lambda model: ModelCost(**model.cost))


def result(dev: float, median: float, low: float, high: float) -> CandidateResult:
    speed = {"texts_per_second": median, "texts_per_second_iqr": [low, high], "parameters": 1, "dim": 4,
             "encoders": 1}
    return CandidateResult.from_json({"kind": "train", "method": "m", "status": "done", "dev": dev, "speed": speed})


def test_the_front_counts_speeds_within_the_noise_as_equal_and_says_which():
    results = {"start": result(80.0, 110.0, 95.0, 115.0),  # the best dev score
               "distil": result(78.0, 112.0, 60.0, 118.0),  # faster by its median only: within the noise
               "meta": result(81.0, 40.0, 38.0, 42.0),  # slower, beyond the noise, and better on dev
               "slow": result(70.0, 30.0, 28.0, 33.0)}  # slower and worse
    assert pareto_front(results) == ["start", "meta"]
    assert off_front_within_noise(results) == {"distil": ["start"]}
    # Timed apart (the ranges apart), the faster one is on the front again.
    results["distil"] = result(78.0, 160.0, 150.0, 170.0)
    assert pareto_front(results) == ["distil", "start", "meta"] and off_front_within_noise(results) == {}


def test_the_speed_bound_names_the_candidates_the_noise_puts_on_both_sides_of_it():
    speeds = {name: r.speed for name, r in {"start": result(80.0, 110.0, 95.0, 115.0),
                                            "meta": result(81.0, 40.0, 38.0, 42.0),
                                            "point": result(1.0, 100.0, 100.0, 100.0)}.items()}
    assert within_noise_of_bound(speeds, 100.0) == {"start": [95.0, 115.0]}
    assert within_noise_of_bound(speeds, 50.0) == {} and within_noise_of_bound(speeds, None) == {}


def test_front_png_names_do_not_overlap():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sentforge.harness.figure_labels import name_box, place_labels

    # Six candidates within a hair of each other, as a start model and its trained candidates lie.
    points = [(110.0, 87.2), (110.0, 87.3), (111.0, 87.25), (109.5, 87.1), (40.0, 88.0), (41.0, 88.02)]
    names = ["all-MiniLM-L6-v2.start", "all-MiniLM-L6-v2.mnrl", "all-MiniLM-L6-v2.tsdae+mnrl",
             "all-MiniLM-L6-v2.simcse", "meta-concat", "meta-gcca"]
    figure, axes = plt.subplots(figsize=(7, 4.5))
    axes.scatter(*zip(*points))
    axes.margins(x=0.15, y=0.1)
    figure.tight_layout()
    labels = place_labels(axes, points, names)
    renderer = figure.canvas.get_renderer()
    boxes = [name_box(label, renderer) for label in labels]  # the names, not their lines to the points
    assert [label.get_text() for label in labels] == names
    for i, box in enumerate(boxes):
        assert not any(box.overlaps(other) for other in boxes[i + 1:]), names[i]
    plt.close(figure)
