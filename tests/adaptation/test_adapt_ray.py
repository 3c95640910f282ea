"""`sentforge adapt --engine ray` on a local Ray cluster (a head and a worker node, one CPU each, started by the
test): the trained candidates, probed and trained side by side on the workers, give the sequential run's dev
scores, steps, weights and selection, and a rerun resumes; a worker process SIGKILLed mid-training, or the worker
node removed mid-training, is retried and resumes from the candidate's checkpoint to the same result; without the
flag Ray is never imported; bad engine options and an unreachable cluster are one error line; the budget counts
the wall time of the side-by-side work. The cluster tests skip where Ray is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

import labels_worker
from adapt_domain import run, write_domain
from conftest import assert_one_line_error, run_cli
from ray_cluster import assert_engine_errors, cluster, started  # noqa: F401 - the fixture
from sentforge.adaptation.adapt_state import AdaptState
from sentforge.adaptation.result import finished
from sentforge.adaptation.state_records import Probe

pytestmark = pytest.mark.usefixtures("one_torch_thread")
# tsdae (10 steps) and mnrl (6 steps) side by side, then MNRL from tsdae's model; the 60-minute budget cuts nothing.
CANDIDATES = {"candidates": ["tsdae", "mnrl", "tsdae+mnrl"]}
COMPARED = ("status", "dev", "best_step", "steps", "planned_steps", "evaluations", "test", "dev_gain", "ladder")


@pytest.fixture(scope="module")
def sequential(tiny_bert_dir, tmp_path_factory) -> tuple[Path, dict]:
    """The domain files and the report of the same adapt run, one candidate after another in this process."""
    folder = tmp_path_factory.mktemp("sequential")
    data = write_domain(folder / "data")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as one_torch_thread, for this run of the whole module
    try:
        report = run(tiny_bert_dir, data, folder / "adapted", test=data / "test.jsonl", **CANDIDATES)
    finally:
        torch.set_num_threads(threads)
    return data, report.to_json()


def same_result(report: dict, expected: dict) -> None:
    """Every candidate's status, dev score, steps, evaluations, test score and paired gain, its kept model's
    weights byte for byte, and the selection."""
    assert list(report["candidates"]) == list(expected["candidates"])
    for name, result in expected["candidates"].items():
        for key in COMPARED:
            assert report["candidates"][name].get(key) == result.get(key), (name, key)
        if result["kind"] == "train":
            weights = [(Path(r["model_path"]) / "model.safetensors").read_bytes()
                       for r in (report["candidates"][name], result)]
            assert weights[0] == weights[1], name
    assert report["selected"] == expected["selected"]
    assert report["selection"] == expected["selection"]


def test_candidates_on_the_cluster_give_the_sequential_result_and_a_rerun_resumes(tiny_bert_dir, sequential, tmp_path,
                                                                                  capsys, cluster):  # noqa: F811
    data, expected = sequential
    out = tmp_path / "ray"
    too_large = ["adapt", "--model", tiny_bert_dir, "--unlabelled", data / "unlabelled.txt", "--dev",
                 data / "dev.jsonl", "--output", out, "--engine", "ray", "--address", cluster.address,
                 "--cpus-per-run", "2"]
    assert_one_line_error(*run_cli(too_large, capsys)[::2], "no node of the Ray cluster has 2 CPUs")
    assert not out.exists()
    report = run(tiny_bert_dir, data, out, test=data / "test.jsonl", engine="ray", address=cluster.address,
                 **CANDIDATES)
    same_result(report, expected)
    assert report["cluster"] == {"address": cluster.address, "cpus_per_run": 1, "gpus_per_run": 0.0, "slots": 2}
    trained = {name: r for name, r in report["candidates"].items() if r["kind"] == "train"}
    assert len(trained) == 3 and all(r["worker"]["seconds"] > 0 for r in trained.values())
    # tsdae and mnrl trained at once, one on each node (one CPU each); tsdae+mnrl after tsdae.
    assert len({r["worker"]["node_id"] for name, r in trained.items() if "+" not in name}) == 2
    markdown = (out / "report.md").read_text()
    assert "side by side on a Ray cluster, up to 2 at once, each with 1 CPU;" in markdown
    host = trained[next(iter(trained))]["worker"]["host"]
    assert f"on {host} (" in markdown
    # The coordinator kept the state: every probe (with its worker) and the wall time of the side-by-side work.
    state = AdaptState(out, json.loads((out / "adapt.json").read_text())["settings"])
    assert state.open() and set(state.probes) == {name for name in trained if "+" not in name}
    assert all(probe.worker is not None for probe in state.probes.values())
    assert set(trained) <= state.side_by_side()
    # A rerun of the command, here without Ray, resumes: nothing is trained again.
    times = {name: (Path(r["model_path"]) / "train.json").stat().st_mtime_ns for name, r in trained.items()}
    again = run(tiny_bert_dir, data, out, test=data / "test.jsonl", **CANDIDATES)
    same_result(again.to_json(), expected)
    assert {name: (Path(r["model_path"]) / "train.json").stat().st_mtime_ns for name, r in trained.items()} == times


def test_a_worker_killed_mid_training_is_retried_and_resumes_to_the_same_result(tiny_bert_dir, sequential, tmp_path,
                                                                                cluster):  # noqa: F811
    data, expected = sequential
    out, marker = tmp_path / "ray", tmp_path / "killed-pid"
    # Step 4 is past every probe (3 steps): the first training to reach it is killed after its step-4 checkpoint.
    report = run(tiny_bert_dir, data, out, callbacks=[labels_worker.KillOnce(marker, step=4)],
                 test=data / "test.jsonl", engine="ray", address=cluster.address, **CANDIDATES)
    assert int(marker.read_text()) != os.getpid()  # a worker process was killed, not the coordinator
    assert len(resumed_at(out, step=4)) == 1  # the killed candidate went on from there in a new worker process
    same_result(report.to_json(), expected)


@pytest.fixture()
def cluster_that_loses_a_node(cluster):  # noqa: F811
    """The module's cluster, given a fresh worker node after the test if it removed the one there."""
    yield cluster
    if not cluster.worker_nodes:
        started(lambda: cluster.add_node(num_cpus=1))


def test_a_node_lost_mid_training_resumes_on_another_node_to_the_same_result(tiny_bert_dir, sequential, tmp_path,
                                                                             cluster_that_loses_a_node):
    data, expected = sequential
    nodes, out, marker = cluster_that_loses_a_node, tmp_path / "ray", tmp_path / "held-pid"
    lost, done = next(iter(nodes.worker_nodes)), threading.Event()
    # The worker node's training is held at step 4 (past every 3-step probe, after its checkpoint) and the node
    # removed; the task resumes on the head, the one node left, once the candidate training there is done.
    with ThreadPoolExecutor(max_workers=1) as pool:
        removal = pool.submit(remove_when_marked, nodes, lost, marker, done)
        try:
            report = run(tiny_bert_dir, data, out, callbacks=[labels_worker.HoldOnNode(marker, 4, lost.node_id)],
                         test=data / "test.jsonl", engine="ray", address=nodes.address, **CANDIDATES)
        finally:
            done.set()
        assert removal.result(), "no training reached step 4 on the worker node"
    assert len(resumed_at(out, step=4)) == 1  # the held candidate went on from its step-4 checkpoint
    trained = [r for r in report.to_json()["candidates"].values() if r["kind"] == "train"]
    assert {r["worker"]["node_id"] for r in trained} == {nodes.head_node.node_id}
    same_result(report.to_json(), expected)


def remove_when_marked(nodes, node, marker: Path, done: threading.Event) -> bool:
    """Remove `node` from the cluster `nodes` once `marker` exists; False when `done` is set first."""
    while not marker.exists():
        if done.wait(0.2):
            return False
    nodes.remove_node(node)
    return True


def resumed_at(out: Path, step: int) -> list[Path]:
    """The trainings under `out`/runs that resumed from their checkpoint at `step` (their metrics files)."""
    return [path for path in (out / "runs").glob("**/training/metrics.jsonl")
            if any(json.loads(line).get("event") == "resume" and json.loads(line)["step"] == step
                   for line in path.read_text().splitlines())]


def test_without_the_ray_engine_ray_is_never_imported(tiny_bert_dir, tmp_path):
    data = write_domain(tmp_path / "data")
    code = ("import sys, torch\ntorch.set_num_threads(1)\nfrom sentforge.cli import main\nsys.argv = sys.argv[1:]\n"
            "try:\n    main()\nexcept SystemExit as end:\n    assert not end.code, end.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'ray'))\n")
    args = ["sentforge", "adapt", "--model", tiny_bert_dir, "--unlabelled", data / "unlabelled.txt", "--labelled",
            data / "labelled.jsonl", "--dev", data / "dev.jsonl", "--output", tmp_path / "o", "--candidates", "mnrl",
            "--max-epochs", "1", "--eval-every", "2", "--keep-dev-texts"]
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    result = json.loads((tmp_path / "o" / "report.json").read_text())["candidates"][f"{tiny_bert_dir.name}.mnrl"]
    assert result["status"] == "done" and "worker" not in result


def test_bad_engine_options_or_a_cluster_out_of_reach_are_one_error_line(tiny_bert_dir, domain, tmp_path, capsys,
                                                                         monkeypatch):
    base = ["adapt", "--model", tiny_bert_dir, "--unlabelled", domain / "unlabelled.txt", "--dev",
            domain / "dev.jsonl", "--output", tmp_path / "o", "--engine", "ray"]
    assert_engine_errors(base, tmp_path / "o", capsys, monkeypatch)


def test_the_budget_counts_the_wall_time_of_side_by_side_candidates_not_their_sum(tmp_path):
    state = AdaptState(tmp_path / "o", {"models": ["m"]})
    state.open()
    state.record("m.start", finished("start", "start", "m", dev=50.0, wall_s=3.0))
    worker = {"host": "node-1", "node": "10.0.0.1", "node_id": "n1", "seconds": 2.0}
    state.probes = {"m.tsdae": Probe(0.5, 4, 2.0, worker), "m.mnrl": Probe(0.25, 4, 1.0, worker),
                    "m.simcse": Probe(0.4, 4, 1.5)}  # simcse probed in this process, before a resume on a cluster
    state.beat_parallel(4.0)  # the probes side by side
    state.record_parallel("m.tsdae", finished("train", "tsdae", "m", dev=51.0, wall_s=10.0), 10.5)
    state.beat_parallel(12.0)  # mnrl still training beside it
    resumed = AdaptState(tmp_path / "o", {"models": ["m"]})
    assert resumed.open() and resumed.spent() == state.spent() == 3.0 + 12.0 + 1.5
