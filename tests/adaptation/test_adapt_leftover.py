"""The time left once every schedule has ended: the leading trained candidate is trained on from its kept model
only when its best dev evaluation was its last and the time reaches its continuation's first evaluation, with
its step cost re-measured from its own run; otherwise the run ends early and says why. Selection takes a
continuation over what it continues only when significantly better on dev."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from sentforge.adaptation.candidates import METHODS, Candidate, continuation_of
from sentforge.adaptation.planning import LOADS_AFTER_TRAINING, Costs, Planner
from sentforge.adaptation.result import finished
from sentforge.adaptation.select import select
from sentforge.adaptation.state_records import Leftover, MeasuredCosts, Probe
from sentforge.adaptation.trained import TrainSettings
from sentforge.evaluation.paired import ItemScores
from sentforge.harness.run_state import Budget

from adapt_domain import domain, run  # noqa: F401 - the fixture and the fast adapt call

COSTS = Costs(dev_s=10.0, test_s=5.0, per_text_s=0.0, load_s=1.0)  # the trained minimum: 25 s


def candidate(method: str) -> Candidate:
    return Candidate(f"m.{method}", METHODS[method], "m", "m")


PLANNED = [candidate(m) for m in ("start", "tsdae", "mnrl", "simcse")]


def planner(results: dict, total_s: float, probes: dict | None = None, monkeypatch=None) -> Planner:
    state = SimpleNamespace(results=results, probes=probes or {"m.mnrl": Probe(5.0, 0, 0.0)},
                            measured=MeasuredCosts(COSTS.dev_s, COSTS.test_s, 0.0, 1.0))
    train = TrainSettings(eval_every=10, max_epochs=1, seed=0, device=None, show_progress=False, overrides={},
                          race=True)
    plan = Planner(state, SimpleNamespace(texts=[]), train, list(PLANNED), Budget(total_s, 0.0),
                   meta_members=2)
    monkeypatch.setattr(Planner, "planned_steps", lambda self, c: 60)
    monkeypatch.setattr(Planner, "end_reserve", lambda self, costs=None: 0.0)
    return plan


def mnrl(best_step: int, wall_s: float = 60 * 5.0 + 6 * 10.0 + 5.0 + 6 * 1.0, **values):
    """A finished mnrl run of 60 steps evaluated every 10 (by default at 5 s a step, as probed)."""
    return finished("train", "mnrl", "m", dev=80.0, best_step=best_step, steps=60, planned_steps=60,
                    eval_every=10, evaluations=[{"step": s, "score": 70.0 + s / 10} for s in range(10, 61, 10)],
                    wall_s=wall_s, model_path="runs/m.mnrl", **values)


def results(leader) -> dict:
    return {"m.start": finished("start", "start", "m", dev=70.0),
            "m.tsdae": finished("train", "tsdae", "m", dev=60.0, best_step=40, steps=40, planned_steps=400,
                                evaluations=[{"step": 40, "score": 60.0}], stopped="racing", wall_s=100.0),
            "m.mnrl": leader}


def test_the_leader_whose_best_evaluation_was_its_last_is_continued_with_the_time_left(monkeypatch):
    leftover = planner(results(mnrl(60)), 600.0, monkeypatch=monkeypatch).leftover()
    assert leftover.continued == "m.mnrl" and leftover.seconds == pytest.approx(600.0, abs=1.0)
    assert continuation_of(PLANNED[2]).name == "m.mnrl.continued"
    assert continuation_of(PLANNED[2]).method.recipe == "mnrl" and continuation_of(PLANNED[2]).after is None


def test_a_leader_that_peaked_before_its_last_evaluation_ends_the_run_early(monkeypatch):
    leftover = planner(results(mnrl(30)), 600.0, monkeypatch=monkeypatch).leftover()
    assert leftover.continued is None
    assert leftover.why == ("the leading trained candidate, m.mnrl, scored best on dev at step 30, before its last "
                            "evaluation (step 60): more steps of it are not measured to help")


def test_a_leader_cut_by_its_time_limit_says_so_rather_than_that_it_peaked_before_its_last_evaluation(
        monkeypatch):
    cut = finished("train", "mnrl", "m", dev=80.0, best_step=5, steps=5, planned_steps=60, eval_every=5,
                   evaluations=[{"step": 5, "score": 80.0}], stopped="time limit", wall_s=60.0,
                   model_path="runs/m.mnrl")
    leftover = planner(results(cut), 600.0, monkeypatch=monkeypatch).leftover()
    assert leftover.continued is None
    assert leftover.why == ("the leading trained candidate, m.mnrl, was stopped by its time limit at step 5 of 60, "
                            "and the time left does not take it to another dev evaluation")


def test_too_little_time_to_reach_the_first_evaluation_or_none_at_all_ends_it_too(monkeypatch):
    # The first evaluation after 10 steps at 5 s, the trained minimum (25 s) and the loads (6 s): 81 s.
    need = 10 * 5.0 + COSTS.trained_minimum + (LOADS_AFTER_TRAINING + 1) * COSTS.load_s
    assert planner(results(mnrl(60)), need + 1.0, monkeypatch=monkeypatch).leftover().continued == "m.mnrl"
    short = planner(results(mnrl(60)), need - 1.0, monkeypatch=monkeypatch).leftover()
    assert short.continued is None and short.why.startswith("continuing m.mnrl needs about 81 s")
    spent = planner(results(mnrl(60)), 20.0, monkeypatch=monkeypatch).leftover()
    assert spent.continued is None and spent.why == "the budget is spent"
    overrun = planner(results(mnrl(60)), -4.0, monkeypatch=monkeypatch).leftover()  # the loads took more
    assert overrun.seconds == 0.0 and overrun.why == "the budget is spent"


def test_the_step_cost_is_re_measured_from_the_candidates_own_run(monkeypatch):
    # Probed at 5 s a step on a busy machine; the run itself took 2 s a step (its wall time less its six dev
    # evaluations, its test and the loads): the continuation is planned at 2 s a step.
    quiet = mnrl(60, wall_s=60 * 2.0 + 6 * 10.0 + 5.0 + 6 * 1.0)
    plan = planner(results(quiet), 600.0, monkeypatch=monkeypatch)
    assert plan.observed_step_cost(PLANNED[2]) == pytest.approx(2.0)
    assert plan.step_cost(PLANNED[2]) == 5.0
    # A run slower than its probe keeps the probe's cost (the run's time holds more than its steps).
    assert planner(results(mnrl(60, wall_s=900.0)), 600.0,
                   monkeypatch=monkeypatch).observed_step_cost(PLANNED[2]) == 5.0
    # With 2 s a step, 10 steps and the rest fit in 51 s, which 5 s a step (81 s) would not.
    assert planner(results(quiet), 60.0, monkeypatch=monkeypatch).leftover().continued == "m.mnrl"


def test_the_continuation_is_planned_to_end_within_the_time_left(monkeypatch):
    # 303 s left at 5 s a step: 303 less what follows its last step (a step, two dev evaluations, the test, five
    # loads: 35 s) and its load (1 s) is 267 s of training, each step 5 s and a tenth of a 10 s evaluation:
    # 44 steps, its schedule's end inside its time, where the planned 60 would be cut with its rate still high.
    assert planner(results(mnrl(60)), 303.0, monkeypatch=monkeypatch).leftover().steps == 44
    # With more time than its planned schedule needs, the planned schedule.
    assert planner(results(mnrl(60)), 900.0, monkeypatch=monkeypatch).leftover().steps == 60
    assert json.loads(json.dumps(Leftover(300.0, "m.mnrl", steps=44).to_json()))["steps"] == 44
    assert "steps" not in Leftover(300.0, why="the budget is spent").to_json()


def test_setfit_trains_its_one_epoch_and_a_continuation_up_to_max_epochs():
    setfit = METHODS["setfit"]
    assert setfit.epochs == 1 and METHODS["tsdae+setfit"].epochs == 1
    assert continuation_of(Candidate("m.setfit", setfit, "m", "m")).method.epochs is None


UNITS = 40
SWING = np.tile([1.0, -1.0], UNITS // 2)


def continued_selection(continuation_gain: float):
    base = np.full(UNITS, 50.0)
    scores = {"m.start": base, "m.mnrl": base + 3 + SWING, "m.mnrl.continued": base + 3 + continuation_gain + SWING}
    results = {name: finished("start" if name == "m.start" else "train", name.split(".")[1], "m",
                              dev=float(values.mean())) for name, values in scores.items()}
    results["m.mnrl.continued"] = results["m.mnrl.continued"].update(continues="m.mnrl")
    items = {name: ItemScores("mean", values) for name, values in scores.items()}
    return select(results, ["m.start"], "significant", items)


def test_a_continuation_is_selected_only_when_significantly_better_than_what_it_continues():
    # A tie up to a swing: the continuation's gain over m.mnrl holds 0, so m.mnrl is kept.
    tied = continued_selection(0.05 - SWING)
    assert tied.chosen == "m.mnrl"
    assert tied.continuations["m.mnrl.continued"].low < 0 < tied.continuations["m.mnrl.continued"].high
    better = continued_selection(1.0)
    assert better.chosen == "m.mnrl.continued" and better.continuations["m.mnrl.continued"].low > 0
    assert json.loads(json.dumps(better.to_json()))["continuations"]["m.mnrl.continued"]["difference"] == \
        pytest.approx(1.0)


@pytest.mark.usefixtures("one_torch_thread")
def test_adapt_trains_the_continuation_reports_it_and_resumes_it(tiny_bert_dir, domain, tmp_path,  # noqa: F811
                                                                 monkeypatch):
    # The decision is tested above; here it is taken (whatever the tiny model's dev curve) to test what follows.
    decide = Planner.leftover
    monkeypatch.setattr(Planner, "leftover", lambda self: Leftover(
        decide(self).seconds, max((n for n, r in self.state.results.items() if r.trained),
                                  key=lambda n: self.state.results[n].dev), steps=2))
    report = run(tiny_bert_dir, domain, tmp_path / "out", candidates=["mnrl"], test=domain / "test.jsonl")
    name = f"{tiny_bert_dir.name}.mnrl"
    leader = report["candidates"][name]
    assert report["leftover"]["continued"] == name and report["leftover"]["seconds"] > 60
    continued = report["candidates"][f"{name}.continued"]
    assert continued["continues"] == name and continued["status"] == "done" and continued["method"] == "mnrl"
    # Its schedule is the one planned to the time left: 2 steps, its learning rate decayed to 0 at their end.
    assert continued["start"] == leader["model_path"] and continued["planned_steps"] == continued["steps"] == 2
    assert "--steps 2" in continued["commands"][-1]
    assert continued["commands"][:-1] == leader["commands"]
    assert f"--model {leader['model_path']}" in continued["commands"][-1]
    assert continued["test"] is not None and name + ".continued" in report["selection"]["continuations"]
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"{name}, whose best dev evaluation was its last, was trained on from its kept model" in markdown
    # A rerun resumes: the decision kept, the continuation reused, the same choice.
    monkeypatch.setattr(Planner, "leftover", lambda self: pytest.fail("decided again"))
    again = run(tiny_bert_dir, domain, tmp_path / "out", candidates=["mnrl"], test=domain / "test.jsonl")
    assert again["candidates"][f"{name}.continued"] == continued and again["selected"] == report["selected"]
