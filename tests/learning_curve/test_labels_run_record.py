"""The labels run record (run_record.py): a labels.json written before the records were typed loads, resumes
and is written back byte for byte; report.json's runs keep their layout; a record of unknown entries is refused."""

from __future__ import annotations

import json

import pytest

from sentforge.harness.run_state import Budget
from sentforge.learning_curve.report import build_report, markdown, report_runs
from sentforge.learning_curve.run import LabelsState
from sentforge.learning_curve.run_record import LabelsRun
from sentforge.support.errors import ConfigError
from sentforge.support.io import save_json

SETTINGS = {"model": "tiny", "labelled": {"path": "labelled.jsonl", "sha256": "ab"},
            "dev": {"path": "dev.jsonl", "sha256": "cd"}, "method": "mnrl", "sizes": [6, 12],
            "fractions": [50.0, 100.0], "shots": None, "repeats": 2, "steps": 4, "epochs": 1, "batch_size": 4,
            "max_seq_length": None, "seed": 0, "budget_minutes": 10.0, "device": None}


def trained(size: int, repeat: int, dev: float, steps: int, stopped: str | None, wall_s: float) -> dict:
    """A finished run as the labels command wrote it before its records were typed (the same keys, in order)."""
    return {"size": size, "repeat": repeat, "status": "done", "dev": dev, "labels": size, "examples": size,
            "steps": steps, "planned_steps": 4, "stopped": stopped, "time_limit_s": 590.3,
            "command": f"sentforge train mnrl --model tiny --data subsets/n{size}-r{repeat}.jsonl --seed {repeat}",
            "wall_s": wall_s}


# Every kind of record: the start model's, finished runs (one cut by its time limit, one on a cluster's worker),
# a failed run on a worker, a skipped run; an interrupted run and the side-by-side wall time.
OLD_STATE = {
    "settings": SETTINGS,
    "results": {
        "start": {"status": "done", "dev": 41.25, "dev_s": 0.81, "wall_s": 0.81},
        "n6-r0": trained(6, 0, 43.5, 4, None, 12.4),
        "n12-r0": trained(12, 0, 47.0, 3, "time limit", 20.02),
        "n6-r1": trained(6, 1, 44.0, 4, None, 11.0) | {"worker": {"host": "node-a", "node": "10.0.0.2",
                                                                   "node_id": "f00d", "seconds": 10.5}},
        "n12-r1": {"size": 12, "repeat": 1, "status": "failed", "reason": "no positive pairs",
                   "wall_s": 1.5, "worker": {"host": "node-b", "node": "10.0.0.3", "node_id": "beef", "seconds": 1.2}},
        "n24-r1": {"size": 24, "repeat": 1, "status": "skipped",
                   "reason": "3 s of the budget left; a run needs more than 2 s"}},
    "running": {"name": "n24-r0", "elapsed_s": 2.5},
    "parallel": {"elapsed_s": 12.0, "runs": ["n6-r1", "n12-r1"]},
    "calls_s": [30.5]}


def test_a_state_file_written_before_the_typed_records_resumes_and_is_written_back_unchanged(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    save_json(out / "labels.json", OLD_STATE)
    state = LabelsState(out, SETTINGS)
    assert state.open() is True
    assert all(isinstance(r, LabelsRun) for r in state.results.values())
    assert state.results["start"].dev_s == 0.81 and state.results["n12-r0"].stopped == "time limit"
    assert state.results["n6-r1"].done and not state.results["n12-r1"].done
    assert state.results["n6-r1"].worker["host"] == "node-a" and state.results["n24-r1"].reason.startswith("3 s")
    # The units' seconds: the start model's and the runs' alone, the interrupted run's and the side-by-side time.
    assert state.units_spent() == pytest.approx(0.81 + 12.4 + 20.02 + 2.5 + 12.0)
    state.save()
    saved = json.loads((out / "labels.json").read_text())
    assert saved["calls_s"][0] == 30.5 and len(saved["calls_s"]) == 2  # this call's time follows
    save_json(tmp_path / "expected.json", OLD_STATE | {"calls_s": saved["calls_s"]})
    assert (out / "labels.json").read_bytes() == (tmp_path / "expected.json").read_bytes()


def test_the_report_keeps_each_runs_layout_with_its_gain_last():
    state = LabelsState("unused", SETTINGS)
    state.results = {name: LabelsRun.from_json(r) for name, r in OLD_STATE["results"].items()}
    names = ["n6-r0", "n12-r0", "n6-r1", "n12-r1", "n24-r1"]
    gains = {name: {"difference": 1.0 + i, "low": 0.5, "high": 1.5 + i} for i, name in
             enumerate(("n6-r0", "n12-r0", "n6-r1"))}
    report = build_report(state, names, gains, "ndcg@10", "dev", None, 1.0, Budget(600.0, 0.0))
    expected = {name: OLD_STATE["results"][name] | ({"dev_gain": gains[name]} if name in gains else {})
                for name in names}
    assert json.dumps(report["runs"]) == json.dumps(expected)  # the same keys in the same order
    assert report["start"] == 41.25 and report["skipped"] == ["n12-r1", "n24-r1"]
    assert [(row["labels"], row["runs"], row["skipped"]) for row in report["sizes"]] == [(6, 2, 0), (12, 1, 1),
                                                                                          (24, 0, 1)]
    assert report_runs(report)["n12-r0"].dev_gain == gains["n12-r0"]
    report |= {"keep_checkpoints": False, "output_bytes": 2048}
    text = markdown(report)
    assert "| n12-r0 | 12 | 0 | 47.00 | +2.00 [+0.50, +2.50] | 3 of 4 | 20 |" in text
    assert "| n12-r1 | 12 | 1 | failed: no positive pairs | | | |" in text
    assert "**Cut by the budget's time limit** (fewer steps than planned" in text and "): n12-r0." in text


def test_a_record_with_unknown_entries_is_refused():
    with pytest.raises(ConfigError, match="unknown entries colour"):
        LabelsRun.from_json({"status": "done", "dev": 1.0, "colour": "blue"})
