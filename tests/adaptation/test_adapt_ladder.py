"""TSDAE then MNRL with the TSDAE length chosen after MNRL: the tsdae candidate saves the ladder's snapshots,
tsdae+mnrl trains MNRL from each rung and keeps the best on dev; the commands reproduce the snapshots."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

import sentforge.adaptation.trained as trained
import sentforge.harness.run_state as harness_state
from sentforge.adaptation.runner import RecipeRun
from sentforge.adaptation.result import finished
from sentforge.recipes.api import snapshot_dir

from adapt_domain import domain, run  # noqa: F401 - the fixture and the fast adapt call

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_rungs_are_the_snapshots_reached_and_the_kept_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setattr(trained, "LADDER_STEPS", (100, 300, 1000))
    assert trained.ladder_steps(1000) == [100, 300] and trained.ladder_steps(50) == []
    for step in (100, 300):
        snapshot_dir(tmp_path, step).mkdir(parents=True)
    tsdae = finished("train", "tsdae", None, steps=450, best_step=400, model_path="best-model")
    assert trained.rungs(tsdae, tmp_path) == [(100, str(snapshot_dir(tmp_path, 100))),
                                             (300, str(snapshot_dir(tmp_path, 300))), (400, "best-model")]
    tsdae = tsdae.update(best_step=300)  # the kept checkpoint is the 300-step snapshot: one rung
    assert [steps for steps, _ in trained.rungs(tsdae, tmp_path)] == [100, 300]


def test_tsdae_then_mnrl_keeps_the_rung_best_after_mnrl(tiny_bert_dir, domain, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(trained, "LADDER_STEPS", (4, 6))
    monkeypatch.setattr(harness_state, "HEARTBEAT_SECONDS", 0.0)  # every step saves the elapsed time
    key = tiny_bert_dir.name
    rung_seconds, before_ladder = [], []  # each MNRL rung's wall time, timed around the call
    train = RecipeRun.train

    def timed_rung(run, context):
        if run.candidate.name != f"{key}.tsdae+mnrl":
            return train(run, context)
        if not rung_seconds:
            before_ladder.append(context.state.prior_elapsed(run.candidate.name))  # its probe's seconds, if any
        started = time.monotonic()
        result = train(run, context)
        rung_seconds.append(time.monotonic() - started)
        return result

    monkeypatch.setattr(RecipeRun, "train", timed_rung)
    report = run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["tsdae", "mnrl", "tsdae+mnrl"])
    tsdae, chained = report["candidates"][f"{key}.tsdae"], report["candidates"][f"{key}.tsdae+mnrl"]
    assert tsdae["planned_steps"] == 10 and "--snapshot-steps 4,6" in tsdae["commands"][0]
    for step in (4, 6):
        assert snapshot_dir(tmp_path / "adapted" / "runs" / f"{key}.tsdae", step).is_dir()
    rungs = [r["after_steps"] for r in chained["ladder"]]
    assert rungs == sorted({4, 6, tsdae["best_step"]})  # the snapshots and the kept checkpoint
    first = chained["ladder"][0]["steps"]  # every rung trains MNRL as far as the first one did
    assert all(r["steps"] == first for r in chained["ladder"])
    best = max(chained["ladder"], key=lambda r: r["dev"])
    assert chained["dev"] == best["dev"] and chained["after_steps"] == best["after_steps"]
    assert chained["model_path"].endswith(f"after-tsdae-{best['after_steps']}")
    assert chained["chain_steps"] == best["after_steps"] + chained["steps"]
    assert chained["commands"][0] == tsdae["commands"][0] and chained["start"] in chained["commands"][-1]
    # Its time is the rungs' together (each rung's own wall_s also counts the rungs before it).
    assert len(rung_seconds) == len(rungs) >= 2
    assert chained["wall_s"] == pytest.approx(before_ladder[0] + sum(rung_seconds), abs=0.25)


def test_an_extended_tsdae_then_mnrl_keeps_its_ladder(tiny_bert_dir, domain, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(trained, "LADDER_STEPS", (4, 6))
    key = tiny_bert_dir.name
    train = RecipeRun.train

    def ladder_cut_at_step_1(run, context):
        """Every rung stops at step 1, as the time limit does; the extension runs uncut."""
        cut = run.candidate.name == f"{key}.tsdae+mnrl" and not run.extend
        return train(run, replace(context, callbacks=(stop_at_step_1,) if cut else ()))

    def stop_at_step_1(state) -> None:
        if state.step == 1:
            state.should_stop, state.stop_reason = True, "time limit"

    monkeypatch.setattr(RecipeRun, "train", ladder_cut_at_step_1)
    report = run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["tsdae", "tsdae+mnrl"])
    chained = report["candidates"][f"{key}.tsdae+mnrl"]
    assert chained["extensions"] == 1 and chained["steps"] > 1
    assert [r["steps"] for r in chained["ladder"]] == [1] * len(chained["ladder"]) and len(chained["ladder"]) >= 2
    kept = [r for r in chained["ladder"] if r["after_steps"] == chained["after_steps"]]
    assert len(kept) == 1 and chained["chain_steps"] == chained["after_steps"] + chained["steps"]
