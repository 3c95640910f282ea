"""Racing (adaptation/racing.py): the evaluation cadence and the stop rule on hand-made scores, and on a tiny adapt
run a candidate forced below the start model stopped at its first evaluation, its time going to the next
candidate, a candidate that is not worse running on, the report, and the stop kept after a SIGKILL."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sentforge
import sentforge.evaluation as evaluation
from sentforge.adaptation.racing import Race, Reference, decide, encodings_kept, evaluation_cadence, first_judged_step
from sentforge.adaptation.report import markdown
from sentforge.adaptation.result import RaceDecision
from sentforge.adaptation.intervals import evaluation_items
from sentforge.adaptation.runner import RecipeRun
from sentforge.evaluation.paired import ItemScores, PairedInterval

import adapt_worker
from adapt_domain import TEXTS, domain  # noqa: F401 (the fixture)

pytestmark = pytest.mark.usefixtures("one_torch_thread")
WORKER = Path(__file__).parents[1] / "helpers" / "adapt_worker.py"
# TSDAE gets a long schedule: without racing it trains all of it before MNRL starts.
LONG_TSDAE = {"tsdae": {"lr": 1e-3, "steps": 60}, "mnrl": {"lr": 1e-3, "batch_size": 4}}


@pytest.mark.parametrize("seconds_per_step, steps, expected", [
    (2.4, 480, 62),     # CT on two CPU cores: every 150 s is 62.5 steps, below 480 / 4
    (0.05, 100, 25),    # fast steps: at least 4 evaluations over the schedule
    (0.0, 7, 2),        # no cost measured: 4 evaluations, rounded up
    (400.0, 1000, 1),   # a step longer than the cadence: every step
])
def test_the_default_cadence_is_minutes_of_training_and_at_least_four_evaluations(seconds_per_step, steps, expected):
    assert evaluation_cadence(seconds_per_step, steps) == expected


def test_the_cadence_leaves_evaluations_inside_the_time_limit():
    # 0.69 s a step: every 217 steps by minutes; a 330 s share fits 478 steps, so at least 4 evaluations: every 119
    assert evaluation_cadence(0.69, 940) == 217
    assert evaluation_cadence(0.69, 940, time_limit=330.0) == 119
    assert evaluation_cadence(10.0, 100, time_limit=20.0) == 1  # a share of two steps: every step


@pytest.mark.parametrize("planned, warmup, allowed, expected", [
    (130, 13, None, 13),      # MNRL on WikiQA: inside its 13 warm-up steps no stop (it was stopped at step 3)
    (940, 0, 478, 48),        # TSDAE, no warm-up, a share of 478 steps: a tenth of those
    (45_710, 0, 1_300, 130),  # ten epochs of tweets, a share of 1,300 steps
    (60, 0, None, 6),
    (3, 0, None, 1),          # never before the first step
])
def test_a_candidate_is_judged_only_after_its_warmup_and_a_tenth_of_its_schedule(planned, warmup, allowed, expected):
    assert first_judged_step(planned, warmup, allowed) == expected


def test_a_stop_decided_before_the_first_judged_step_is_dropped():
    class State:
        def __init__(self, step):
            self.step, self.should_stop, self.stop_reason = step, False, None

    decisions = []
    race = Race(None, Reference("m.start", _mean([1.0])), None, 50.0, 0, decisions.append, lambda: 6.0,
                judged_from=13)
    for step in (3, 13):
        race.pending = RaceDecision("below the leader", "m.mnrl", PairedInterval(-5.0, -7.0, -3.0, 1.0, 0.95, 2000, 1),
                                    dev=40.0)
        state = State(step)
        race.after_step(state)
        assert state.should_stop == (step == 13)
    assert [d.step for d in decisions] == [13]


def test_a_racing_evaluation_encodes_the_dev_texts_once_and_returns_the_tasks_metrics(tiny_bert_dir, domain):  # noqa: F811
    task, encoder = evaluation.load_dataset(domain / "dev.jsonl"), sentforge.load(tiny_bert_dir)
    expected, items = task.evaluate(encoder), task.item_scores(encoder)
    calls = []
    encode = encoder.encode

    def counted(texts, *args, **kwargs):
        calls.append(len(texts))
        return encode(texts, *args, **kwargs)

    encoder.encode = counted
    start = Reference("m.start", items)
    decisions = []
    race = Race(task, start, None, expected["map"], 0, decisions.append, lambda: 60.0)
    assert race.evaluate(encoder) == expected and len(calls) == 1
    with encodings_kept(encoder):  # a copy each time: changing one result changes no other
        first = encoder.encode(TEXTS[:3])
        first[:] = 0
        assert not np.allclose(encoder.encode(TEXTS[:3]), 0) and len(calls) == 2
    assert encoder.encode is counted  # the wrapped method is back
    # The same model as the start: no reason to stop it.
    assert race.pending is None and decisions == []


def _mean(values) -> ItemScores:
    return ItemScores("mean", np.asarray(values, dtype=float))


def test_the_rule_stops_beyond_a_point_below_the_start_and_behind_the_leader_only_when_not_improving():
    rng = np.random.default_rng(0)
    start = Reference("m.start", _mean(rng.uniform(40, 60, size=50)))
    # Every unit 5 points lower: the whole interval is -5.
    below = decide(_mean(start.items.values - 5), start, None, new_best=False, seed=0)
    assert below.reason == "below the start" and below.against == "m.start"
    assert below.gain.difference == below.gain.low == below.gain.high == pytest.approx(-5)
    # 0.5 lower on every unit: significant, but within the margin of a candidate that has barely moved.
    assert decide(_mean(start.items.values - 0.5), start, None, new_best=False, seed=0) is None
    assert decide(_mean(start.items.values + 12.5), start, Reference("m.mnrl", _mean(start.items.values + 13)),
                  new_best=False, seed=0) is None
    # Half the units 5 lower, half 5 higher: the interval holds 0, the candidate runs on.
    mixed = start.items.values + np.where(np.arange(50) % 2, 5.0, -5.0)
    assert decide(_mean(mixed), start, None, new_best=False, seed=0) is None
    # 3 above the start, 10 below the leader on every unit: stopped only when this evaluation is no new best.
    leader = Reference("m.mnrl", _mean(start.items.values + 13))
    behind = _mean(start.items.values + 3)
    assert decide(behind, start, leader, new_best=True, seed=0) is None
    stopped = decide(behind, start, leader, new_best=False, seed=0)
    assert stopped.reason == "below the leader" and stopped.against == "m.mnrl"
    assert stopped.gain.high == pytest.approx(-10)
    # The leader rule needs a leader other than the start model.
    assert decide(behind, start, Reference("m.start", start.items), new_best=False, seed=0) is None


@pytest.fixture()
def penalised_tsdae(monkeypatch) -> None:
    """TSDAE's models score 100 points lower on dev and test (adapt_worker.penalise), in this test only."""
    monkeypatch.setattr(RecipeRun, "train", RecipeRun.train)  # restored at teardown
    monkeypatch.setattr(RecipeRun, "probe", RecipeRun.probe)
    monkeypatch.setattr(evaluation, "load_dataset", evaluation.load_dataset)
    adapt_worker.penalise("tsdae")


def _run(tiny_bert_dir, data: Path, output: Path, **settings) -> dict:
    return sentforge.adapt(str(tiny_bert_dir), data / "unlabelled.txt", data / "dev.jsonl", output,
                           labelled=data / "labelled.jsonl", **{**adapt_worker.FAST, "overrides": LONG_TSDAE,
                                                                **settings})


@pytest.mark.usefixtures("penalised_tsdae")
def test_a_candidate_below_the_start_stops_at_its_first_evaluation_and_its_time_goes_on(
        tiny_bert_dir, domain, tmp_path):  # noqa: F811 (the fixture)
    key = tiny_bert_dir.name
    raced = _run(tiny_bert_dir, domain, tmp_path / "raced")
    unraced = _run(tiny_bert_dir, domain, tmp_path / "unraced", race=False)
    tsdae, mnrl = raced["candidates"][f"{key}.tsdae"], raced["candidates"][f"{key}.mnrl"]
    # Stopped at its first evaluation from a tenth of its 60 steps on (step 6; the one at step 2, in its probe,
    # is not judged), significantly below the start model; its best evaluated checkpoint is its model.
    assert tsdae["status"] == "done" and tsdae["stopped"] == "racing"
    assert tsdae["steps"] == 6 and [e["step"] for e in tsdae["evaluations"]] == [2, 4, 6]
    assert tsdae["dev"] == max(e["score"] for e in tsdae["evaluations"])
    race = tsdae["race"]
    assert race["step"] == 6 and race["reason"] == "below the start" and race["against"] == f"{key}.start"
    assert race["gain"]["high"] < 0 and race["dev"] == tsdae["dev"]
    assert json.loads((tmp_path / "raced" / "adapt.json").read_text())["races"] == {f"{key}.tsdae": race}
    # Not significantly worse: MNRL runs its whole schedule.
    assert "race" not in mnrl and mnrl["steps"] == mnrl["planned_steps"]
    # Without racing TSDAE trains its 60 steps, below the start at every evaluation, and MNRL gets less time.
    assert unraced["candidates"][f"{key}.tsdae"]["steps"] == 60
    assert all(e["score"] < raced["candidates"][f"{key}.start"]["dev"]
               for e in unraced["candidates"][f"{key}.tsdae"]["evaluations"])
    assert mnrl["share_s"] > unraced["candidates"][f"{key}.mnrl"]["share_s"]
    assert mnrl["time_limit_s"] > unraced["candidates"][f"{key}.mnrl"]["time_limit_s"]
    markdown = (tmp_path / "raced" / "report.md").read_text()
    assert f"- {key}.tsdae: stopped at step 6 (minute " in markdown and f"below the start {key}.start: " in markdown
    assert f"{key}.mnrl {mnrl['share_s'] / 60:.1f} given" in markdown
    # Every evaluation's per-unit dev scores are kept: the last one's are the stopped model's own.
    kept = evaluation_items(tmp_path / "raced", f"{key}.tsdae")
    assert sorted(kept) == [2, 4, 6] and kept[6].score() == pytest.approx(tsdae["evaluations"][-1]["score"])
    assert "Racing: off" in (tmp_path / "unraced" / "report.md").read_text()


@pytest.mark.usefixtures("penalised_tsdae")
def test_a_stopped_candidate_stays_stopped_after_a_sigkill(tiny_bert_dir, domain, tmp_path):  # noqa: F811
    key = tiny_bert_dir.name
    out = tmp_path / "killed"
    # Killed at TSDAE's first evaluation (step 2 of its probe; its short schedule is judged from there on),
    # after racing recorded its decision.
    killed = subprocess.run([sys.executable, str(WORKER), str(tiny_bert_dir), str(domain), str(out),
                             "--kill-in-candidate", "1", "--kill-at-step", "2", "--penalise", "tsdae"],
                            capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    state = json.loads((out / "adapt.json").read_text())
    assert state["races"][f"{key}.tsdae"]["step"] == 2 and f"{key}.tsdae" not in state["results"]
    resumed = adapt_worker.run(tiny_bert_dir, domain, out)
    straight = _run(tiny_bert_dir, domain, tmp_path / "straight", overrides=adapt_worker.FAST["overrides"],
                    test=domain / "test.jsonl")
    tsdae, expected = resumed["candidates"][f"{key}.tsdae"], straight["candidates"][f"{key}.tsdae"]
    assert tsdae["stopped"] == "racing" and tsdae["race"] == state["races"][f"{key}.tsdae"]
    for field in ("step", "reason", "against", "gain", "dev"):
        assert tsdae["race"][field] == expected["race"][field], field
    for field in ("dev", "best_step", "evaluations", "test"):
        assert tsdae[field] == expected[field], field
    # Killed between the stop and the end of its run, the resumed run takes one more step before it stops;
    # its model is the same best evaluated checkpoint.
    assert tsdae["steps"] == expected["steps"] + 1
    np.testing.assert_array_equal(sentforge.load(tsdae["model_path"]).encode(TEXTS[:6]),
                                  sentforge.load(expected["model_path"]).encode(TEXTS[:6]))
    for field in ("dev", "test", "steps", "evaluations"):
        assert resumed["candidates"][f"{key}.mnrl"][field] == straight["candidates"][f"{key}.mnrl"][field], field


def test_the_report_lists_every_rung_of_the_ladder_that_racing_stopped():
    def race(step):
        return {"step": step, "candidate_minutes": 0.5, "adapt_minutes": 9.0, "reason": "below the leader",
                "against": "m.mnrl", "gain": {"difference": -3.0, "low": -5.0, "high": -1.5, "confidence": 0.95}}

    ladder = [{"after_steps": 100, "dev": 70.0, "steps": 20, "race": race(20)},
              {"after_steps": 300, "dev": 71.0, "steps": 20, "race": race(20)},
              {"after_steps": 349, "dev": 69.0, "steps": 20}]
    done = {"status": "done", "kind": "train", "method": "mnrl", "dev": 50.0, "wall_s": 1.0}
    report = {"selected": "m.start", "selection": {"rule": "labels-first", "why": "none passes", "base": "m.start"},
              "front": ["m.start"], "speed_texts": 8, "metric": "map", "dev": "dev.jsonl", "budget_minutes": 1,
              "wall_s": 60.0, "hygiene": {"applied": True, "heldout_texts": 0}, "settings": {"race": True},
              "output_bytes": 1, "keep_checkpoints": False,
              "candidates": {"m.start": {**done, "kind": "start"}, "m.mnrl": done,
                             "m.tsdae+mnrl": {**done, "race": race(20), "ladder": ladder}}}
    lines = [line for line in markdown(report).splitlines() if line.startswith("- ")]
    assert lines == [f"- m.tsdae+mnrl (after {n} TSDAE steps): stopped at step 20 (minute 0.5 of its training, "
                     "9.0 of the run), below the leader m.mnrl: -3.00 [-5.00, -1.50] (95 % paired interval)"
                     for n in (100, 300)]


def test_the_cross_fitted_rule_weighs_every_evaluated_checkpoint_of_a_finished_run(tiny_bert_dir, domain,  # noqa: F811
                                                                                   tmp_path):
    from sentforge.adaptation.intervals import candidate_evaluations, cross_fitted
    from sentforge.harness.dev_scores import load_items, paired_gain

    key = tiny_bert_dir.name
    output = tmp_path / "fitted"
    report = _run(tiny_bert_dir, domain, output, select_rule="cross-fitted", overrides=adapt_worker.FAST["overrides"])
    assert report["selection"]["rule"] == "cross-fitted"
    mnrl = report["candidates"][f"{key}.mnrl"]
    checkpoints = candidate_evaluations(output, f"{key}.mnrl")
    assert len(checkpoints) == len(mnrl["evaluations"]) > 1
    expected = paired_gain(load_items(output, f"{key}.start"), cross_fitted(checkpoints, 0), 0)
    assert mnrl["dev_gain"] == expected.to_json()
    assert report["dev_cross_fitted"][f"{key}.mnrl"] == round(cross_fitted(checkpoints, 0).score(), 4)
    assert f"{key}.mnrl {report['dev_cross_fitted'][f'{key}.mnrl']:.2f} ({mnrl['dev']:.2f})" in \
        (output / "report.md").read_text()
