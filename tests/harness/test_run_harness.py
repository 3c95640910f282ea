"""The run harness of adapt and labels (sentforge/harness/): the state file (resume, the refusal of another
command, sections of a subclass, the heartbeat), the reproducing `sentforge train` line, the optional plots."""

from __future__ import annotations

import json
import shlex
import sys
import time
from types import SimpleNamespace

import pytest

from sentforge.adaptation.adapt_state import AdaptState
from sentforge.adaptation.result import CandidateResult, RaceDecision
from sentforge.adaptation.state_records import Leftover, MeasuredCosts, Probe
from sentforge.support.errors import ConfigError, OutputExistsError
from sentforge.evaluation.paired import PairedInterval
from sentforge.harness.run_state import input_record
from sentforge.harness.report_files import pyplot
from sentforge.learning_curve.run import LabelsState
from sentforge.learning_curve.run_record import LabelsRun
from sentforge.recipes.command import train_command


def test_a_new_state_is_saved_and_a_rerun_of_the_same_command_resumes(tmp_path):
    state = LabelsState(tmp_path / "out", {"seed": 0})
    assert state.open() is False
    state.record("a", LabelsRun(status="done", wall_s=2.0))
    again = LabelsState(tmp_path / "out", {"seed": 0})
    assert again.open() is True
    assert again.results == {"a": LabelsRun(status="done", wall_s=2.0)} and again.spent() == 2.0
    saved = json.loads((tmp_path / "out" / "labels.json").read_text())
    calls = saved.pop("calls_s")
    assert saved == {"settings": {"seed": 0}, "results": {"a": {"status": "done", "wall_s": 2.0}}, "running": None}
    assert len(calls) == 1 and 0 <= calls[0] < 60  # this process's call, its elapsed time at the last save


def test_the_budget_counts_the_earlier_calls_whole_wall_time_and_an_interrupted_call_saves_it(tmp_path):
    """Reading the inputs and loading models lie outside every unit: a rerun's budget counts the earlier calls'
    wall time as saved (`calls_s`), the interrupted call's up to the moment it stopped."""
    first = LabelsState(tmp_path / "out", {"seed": 0}, started=time.monotonic() - 30.0)  # 30 s of loading so far
    first.open()
    first.record("a", LabelsRun(status="done", wall_s=2.0))
    with pytest.raises(KeyboardInterrupt), first.saved_if_interrupted():
        first.started -= 10.0  # 10 s more before Ctrl-C, and no save in between
        raise KeyboardInterrupt
    again = LabelsState(tmp_path / "out", {"seed": 0})
    again.open()
    assert again.spent() == pytest.approx(40.0, abs=1.0)  # not the 2 s that the one unit recorded
    again.save()
    calls = json.loads(again.path.read_text())["calls_s"]
    assert len(calls) == 2 and calls[0] == pytest.approx(40.0, abs=1.0)
    # Nothing is saved into a directory that the state has not opened.
    other = LabelsState(tmp_path / "other", {"seed": 0})
    with pytest.raises(KeyboardInterrupt), other.saved_if_interrupted():
        raise KeyboardInterrupt
    assert not (tmp_path / "other").exists()


def test_a_rerun_of_another_command_is_refused_naming_the_settings_that_differ(tmp_path):
    AdaptState(tmp_path / "out", {"seed": 0, "budget_minutes": 1}).open()
    with pytest.raises(ConfigError, match="holds an adapt run of a different command .it differs in seed."):
        AdaptState(tmp_path / "out", {"seed": 1, "budget_minutes": 1}).open()
    LabelsState(tmp_path / "curve", {"seed": 0}).open()
    with pytest.raises(ConfigError, match="holds a labels run of a different command"):
        LabelsState(tmp_path / "curve", {"seed": 2}).open()


def test_a_directory_of_something_else_is_refused_and_left_alone(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine")
    with pytest.raises(OutputExistsError, match="holds no labels run .labels.json."):
        LabelsState(tmp_path / "busy", {}).open()
    assert [p.name for p in (tmp_path / "busy").iterdir()] == ["keep.txt"]
    data = tmp_path / "data.txt"
    data.write_text("text\n")
    with pytest.raises(ConfigError, match="lies inside"):
        LabelsState.check_output(tmp_path, [("--labelled", data)])


def test_adapt_sections_are_saved_after_the_results_and_resumed(tmp_path):
    state = AdaptState(tmp_path / "out", {"seed": 0})
    state.open()
    assert (tmp_path / "out" / "runs").is_dir()
    assert (state.measured, state.probes, state.leftover) == (None, {}, None)  # saved as {}
    state.measured_start(MeasuredCosts(1.5, 0.5, 0.01))
    state.probed("m.tsdae", Probe(seconds_per_step=0.5, steps=4, wall_s=3.0))
    decision = RaceDecision("below the start", "m.start", PairedInterval(-5.0, -7.0, -3.0, 1.0, 0.95, 2000, 8), step=4)
    state.raced("m.tsdae", decision)
    state.leftover = Leftover(600.0, why="the budget is spent")
    state.save()
    assert list(json.loads(state.path.read_text())) == ["settings", "results", "running", "measured", "probes",
                                                        "races", "leftover", "calls_s"]
    again = AdaptState(tmp_path / "out", {"seed": 0})
    again.open()
    assert (again.measured, again.races) == (MeasuredCosts(1.5, 0.5, 0.01), {"m.tsdae": decision})
    assert again.leftover == state.leftover and again.probes == state.probes
    # The probe's seconds count as the candidate's until it is recorded.
    assert again.spent() == 3.0 and again.prior_elapsed("m.tsdae") == 3.0
    again.record("m.tsdae", CandidateResult.from_json({"kind": "start", "method": "start", "model": "m",
                                                       "status": "done", "model_path": "m", "dev": 80.0,
                                                       "evaluations": [], "wall_s": 7.0}))
    assert again.spent() == 7.0 and again.prior_elapsed("m.tsdae") == 0.0


def test_a_labels_state_written_with_adapt_sections_resumes(tmp_path):
    """labels.json once carried adapt's (always empty) sections: such a run still resumes."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "labels.json").write_text(json.dumps({
        "settings": {"seed": 0}, "results": {"start": {"status": "done", "wall_s": 1.0}},
        "running": {"name": "n6-r0", "elapsed_s": 4.0}, "measured": {}, "probes": {}, "races": {}}))
    state = LabelsState(out, {"seed": 0})
    assert state.open() is True
    assert state.spent() == 5.0 and state.prior_elapsed("n6-r0") == 4.0 and state.prior_elapsed("n6-r1") == 0.0


def test_the_heartbeat_saves_the_elapsed_time_and_stops_at_its_step(tmp_path):
    state = LabelsState(tmp_path / "out", {})
    state.open()
    heartbeat = state.heartbeat("n6-r0", prior=10.0, stop_at=3)
    assert json.loads(state.path.read_text())["running"] == {"name": "n6-r0", "elapsed_s": 10.0}  # at once
    trainer = SimpleNamespace(step=2, should_stop=False)
    heartbeat(trainer)
    assert not trainer.should_stop and heartbeat.elapsed() >= 10.0
    trainer.step = 3
    heartbeat(trainer)
    assert trainer.should_stop
    state.record("n6-r0", LabelsRun(status="done", wall_s=round(heartbeat.elapsed(), 2)))
    assert json.loads(state.path.read_text())["running"] is None


def test_train_command_spells_options_and_flags_as_the_train_cli_reads_them(tmp_path):
    data = tmp_path / "my pairs.jsonl"
    line = train_command("mnrl", "tiny model", data, tmp_path / "run", [
        ("pooling", "keep"), ("batch_size", 4), ("split", False), ("resume", True), ("device", None)])
    assert shlex.split(line) == ["sentforge", "train", "mnrl", "--model", "tiny model", "--corpus", str(data),
                                 "--output", str(tmp_path / "run"), "--pooling", "keep", "--batch-size", "4",
                                 "--no-split", "--resume"]


def test_input_record_names_the_file_and_its_sha256(tmp_path):
    import hashlib

    path = tmp_path / "dev.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    assert input_record(path) == {"path": str(path), "sha256": hashlib.sha256(b'{"a": 1}\n').hexdigest()}
    assert input_record(None) is None


def test_without_matplotlib_a_figure_says_why_it_is_not_drawn(tmp_path, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    with caplog.at_level("INFO", logger="sentforge.harness.report_files"):
        assert pyplot(tmp_path / "learning-curve.png") is None
    assert "the `plots` extra" in caplog.text and "learning-curve.png not drawn" in caplog.text
