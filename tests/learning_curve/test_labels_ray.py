"""`sentforge labels --engine ray` on a local Ray cluster (a head and a worker node, one CPU each, started by the
test): the runs give the sequential curve exactly, a worker process SIGKILLed mid-run is retried and resumes from
its checkpoint to the same curve, a rerun resumes; without the flag Ray is never imported; a missing Ray or an
unreachable cluster is one error line. The cluster tests skip where Ray is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import labels_worker
from labels_domain import write_domain
from ray_cluster import assert_engine_errors, cluster  # noqa: F401 - the fixture
from sentforge.learning_curve.run import LabelsState
from sentforge.learning_curve.run_record import LabelsRun

# Three sizes (3, 6 and 12 pairs), two repeats, four steps each: enough sizes for a fitted curve and an answer.
CURVE = {"fractions": [25, 50, 100]}


@pytest.fixture()
def domain(tmp_path) -> Path:
    return write_domain(tmp_path / "data")


def same_curve(output: Path, report: dict, expected_output: Path, expected: dict) -> None:
    """Every run's trained weights (byte for byte), dev score, steps, paired gain and command, the per-size table,
    the fit and the answer are equal."""
    assert set(report["runs"]) == set(expected["runs"])
    for name, run in expected["runs"].items():
        assert report["runs"][name]["status"] == run["status"] == "done"
        for key in ("dev", "steps", "dev_gain"):
            assert report["runs"][name][key] == run[key], (name, key)
        assert report["runs"][name]["command"] == run["command"].replace(str(expected_output), str(output))
        weights = [(folder / "runs" / name / "model.safetensors").read_bytes() for folder in (output, expected_output)]
        assert weights[0] == weights[1], name
    for key in ("start", "sizes", "fit", "answer", "holdout"):
        assert report[key] == expected[key], key


@pytest.mark.usefixtures("one_torch_thread")
def test_runs_on_the_cluster_give_the_sequential_curve_and_a_rerun_resumes(tiny_bert_dir, domain, tmp_path,
                                                                           cluster):  # noqa: F811
    sequential = labels_worker.run(tiny_bert_dir, domain, tmp_path / "sequential", **CURVE)
    out = tmp_path / "ray"
    report = labels_worker.run(tiny_bert_dir, domain, out, engine="ray", address=cluster.address, **CURVE)
    same_curve(out, report, tmp_path / "sequential", sequential)
    assert report["cluster"]["slots"] == 2 and report["cluster"]["cpus_per_run"] == 1
    workers = [run["worker"] for run in report["runs"].values()]
    assert len({worker["node_id"] for worker in workers}) == 2  # one CPU per node: two runs at once, one on each
    assert all(worker["seconds"] > 0 for worker in workers)
    markdown = (out / "report.md").read_text()
    assert "up to 2 at once, each with 1 CPU;" in markdown
    assert f"| {workers[0]['host']} ({workers[0]['node']}) |" in markdown
    # The coordinator kept the state; the command's wall time, not the sum of the runs' overlapping times, is spent.
    state = LabelsState(out, json.loads((out / "labels.json").read_text())["settings"])
    assert state.open() and set(state.parallel["runs"]) == set(report["runs"])
    assert state.units_spent() == pytest.approx(state.results["start"].wall_s + state.parallel["elapsed_s"])
    assert state.spent() >= state.units_spent()  # the calls' own wall time (loading included) when it is longer
    # A rerun of the command, here without Ray, resumes: nothing is retrained.
    trained = {name: (out / "runs" / name / "train.json").stat().st_mtime_ns for name in report["runs"]}
    again = labels_worker.run(tiny_bert_dir, domain, out, **CURVE)
    assert again["runs"] == report["runs"]
    assert {name: (out / "runs" / name / "train.json").stat().st_mtime_ns for name in trained} == trained


@pytest.mark.usefixtures("one_torch_thread")
def test_a_worker_killed_mid_run_is_retried_and_resumes_to_the_same_curve(tiny_bert_dir, domain, tmp_path,
                                                                          cluster):  # noqa: F811
    sequential = labels_worker.run(tiny_bert_dir, domain, tmp_path / "sequential", **CURVE)
    out, marker = tmp_path / "ray", tmp_path / "killed-pid"
    report = labels_worker.run(tiny_bert_dir, domain, out, [labels_worker.KillOnce(marker, step=2)], engine="ray",
                               address=cluster.address, **CURVE)
    assert int(marker.read_text()) != os.getpid()  # a worker process was killed, not the coordinator
    resumed = [name for name in report["runs"]
               if any(json.loads(line).get("event") == "resume" and json.loads(line)["step"] == 2
                      for line in (out / "runs" / name / "training" / "metrics.jsonl").read_text().splitlines())]
    assert len(resumed) == 1  # the killed run went on from its step-2 checkpoint in a new worker process
    same_curve(out, report, tmp_path / "sequential", sequential)


def test_without_the_ray_engine_ray_is_never_imported(tiny_bert_dir, domain, tmp_path):
    code = ("import sys\nfrom sentforge.cli import main\nsys.argv = sys.argv[1:]\ntry:\n    main()\n"
            "except SystemExit as end:\n    assert not end.code, end.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'ray'))\n")
    args = ["sentforge", "labels", "--model", tiny_bert_dir, "--labelled", domain / "labelled.jsonl", "--dev",
            domain / "dev.jsonl", "--output", tmp_path / "o", "--fractions", "50,100", "--repeats", "1",
            "--steps", "1", "--batch-size", "4"]
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert json.loads((tmp_path / "o" / "report.json").read_text())["runs"]["n12-r0"]["status"] == "done"


def test_ray_missing_or_out_of_reach_is_one_error_line(tiny_bert_dir, domain, tmp_path, capsys, monkeypatch):
    base = ["labels", "--model", tiny_bert_dir, "--labelled", domain / "labelled.jsonl", "--dev",
            domain / "dev.jsonl", "--output", tmp_path / "o", "--engine", "ray"]
    assert_engine_errors(base, tmp_path / "o", capsys, monkeypatch)


def test_the_budget_counts_the_wall_time_of_side_by_side_runs_not_their_sum(tmp_path):
    state = LabelsState(tmp_path / "o", {"model": "m"})
    state.open()
    state.record("start", LabelsRun(status="done", wall_s=3.0))
    state.record("n6-r0", LabelsRun(status="done", wall_s=5.0))  # alone, before a resume on a cluster
    state.record_parallel("n12-r0", LabelsRun(status="done", wall_s=10.0), 10.5)
    state.record_parallel("n6-r1", LabelsRun(status="done", wall_s=9.0), 11.0)  # beside n12-r0
    state.beat_parallel(12.0)
    resumed = LabelsState(tmp_path / "o", {"model": "m"})
    assert resumed.open() and resumed.spent() == state.spent() == 3.0 + 5.0 + 12.0
