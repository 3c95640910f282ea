"""Checkpoints: exact round trip, crash safety while writing, and SIGKILL + resume == uninterrupted."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import resume_worker
import torch
from conftest import CORPUS, REPO
from safetensors.torch import load_file

from sentforge import build_encoder
from sentforge.support.errors import ModelFormatError
from sentforge.objectives import MaskedLanguageModeling
from sentforge.training import checkpoint
from sentforge.training.checkpoint import (
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
    verify_checkpoint,
)
from sentforge.training.optim import Schedule, build_optimizer, build_scheduler

WORKER = Path(__file__).parents[1] / "helpers" / "resume_worker.py"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _setup(model_dir, optimizer_name="adamw", seed=0):
    torch.manual_seed(seed)
    encoder = build_encoder(model_dir)
    objective = MaskedLanguageModeling(encoder)
    optimizer = build_optimizer(objective.parameters(), optimizer_name, lr=1e-3)
    scheduler = build_scheduler(optimizer, Schedule("linear", total_steps=10, warmup_steps=2))
    return objective, optimizer, scheduler


def _step(objective, optimizer, scheduler):
    objective(CORPUS[:4]).backward()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()


@pytest.mark.parametrize("optimizer_name", ["adamw", "adafactor"])
def test_round_trip_continues_exactly(tiny_bert_dir, tmp_path, optimizer_name):
    objective, optimizer, scheduler = _setup(tiny_bert_dir, optimizer_name)
    for _ in range(2):
        _step(objective, optimizer, scheduler)
    save_checkpoint(tmp_path, 2, objective, optimizer, scheduler, {"note": "kept"})
    # The step after saving (new masks drawn from the saved RNG state, the saved optimizer moments).
    _step(objective, optimizer, scheduler)
    continued = {k: v.clone() for k, v in objective.state_dict().items()}
    draws = (np.random.rand(3), random.random())

    fresh, fresh_optimizer, fresh_scheduler = _setup(tiny_bert_dir, optimizer_name, seed=1)
    assert load_checkpoint(tmp_path / "step-00000002", fresh, fresh_optimizer, fresh_scheduler) == {"note": "kept"}
    # Tied weights stay tied after loading (the MLM decoder is the word-embedding matrix).
    assert fresh.lm.cls.predictions.decoder.weight is fresh.encoder[0].model.embeddings.word_embeddings.weight
    _step(fresh, fresh_optimizer, fresh_scheduler)
    assert continued.keys() == fresh.state_dict().keys()
    for key, value in fresh.state_dict().items():
        assert torch.equal(value, continued[key]), key
    assert fresh_scheduler.last_epoch == 3
    assert np.array_equal(np.random.rand(3), draws[0]) and random.random() == draws[1]


def test_the_loaded_optimizer_state_equals_the_saved_one(tiny_bert_dir, tmp_path):
    objective, optimizer, scheduler = _setup(tiny_bert_dir, "adamw")
    _step(objective, optimizer, scheduler)
    save_checkpoint(tmp_path, 1, objective, optimizer, scheduler)
    fresh, fresh_optimizer, fresh_scheduler = _setup(tiny_bert_dir, "adamw", seed=3)
    load_checkpoint(tmp_path / "step-00000001", fresh, fresh_optimizer, fresh_scheduler)
    saved, loaded = optimizer.state_dict(), fresh_optimizer.state_dict()
    assert saved["param_groups"] == loaded["param_groups"]
    assert saved["state"].keys() == loaded["state"].keys()
    for index, values in saved["state"].items():
        for name, value in values.items():
            assert torch.equal(value, loaded["state"][index][name]), (index, name)
    assert fresh_scheduler.state_dict()["last_epoch"] == scheduler.state_dict()["last_epoch"] == 1
    assert fresh_scheduler.get_last_lr() == scheduler.get_last_lr()


FAILURE_POINTS = ["rng", "model", "optimizer", "state", "manifest", "rename"]


@pytest.mark.parametrize("failure", FAILURE_POINTS)
def test_a_crash_while_writing_never_leaves_a_loadable_partial_checkpoint(tiny_bert_dir, tmp_path, monkeypatch,
                                                                          failure):
    objective, optimizer, scheduler = _setup(tiny_bert_dir)
    save_checkpoint(tmp_path, 1, objective, optimizer, scheduler, {"step": 1})
    _step(objective, optimizer, scheduler)

    class Crash(RuntimeError):
        pass

    real_save, real_json, real_replace = checkpoint.save_file, checkpoint._write_json, os.replace

    def save_file(tensors, path):
        if Path(path).name.startswith({"rng": "rng", "model": "model", "optimizer": "optimizer"}.get(failure, "-")):
            Path(path).write_bytes(b"partial")  # half-written file, then the crash
            raise Crash(path)
        real_save(tensors, path)

    def write_json(path, obj):
        if path.name == {"state": checkpoint.STATE_FILE, "manifest": checkpoint.MANIFEST_FILE}.get(failure):
            raise Crash(path)
        real_json(path, obj)

    def replace(src, dst):
        if failure == "rename" and Path(dst).name == "step-00000002":
            raise Crash(dst)
        real_replace(src, dst)

    monkeypatch.setattr(checkpoint, "save_file", save_file)
    monkeypatch.setattr(checkpoint, "_write_json", write_json)
    monkeypatch.setattr(checkpoint.os, "replace", replace)
    with pytest.raises(Crash):
        save_checkpoint(tmp_path, 2, objective, optimizer, scheduler, {"step": 2})
    monkeypatch.undo()

    assert [p.name for p in list_checkpoints(tmp_path)] == ["step-00000001"]
    assert latest_checkpoint(tmp_path).name == "step-00000001"
    assert load_checkpoint(latest_checkpoint(tmp_path), objective, optimizer, scheduler) == {"step": 1}
    # The next attempt at the same step succeeds over the leftovers.
    save_checkpoint(tmp_path, 2, objective, optimizer, scheduler, {"step": 2})
    assert latest_checkpoint(tmp_path).name == "step-00000002"


def test_damaged_checkpoints_are_rejected_and_skipped(tiny_bert_dir, tmp_path):
    objective, optimizer, scheduler = _setup(tiny_bert_dir)
    for step in (1, 2, 3):
        save_checkpoint(tmp_path, step, objective, optimizer, scheduler, keep_last=2)
    assert [p.name for p in list_checkpoints(tmp_path)] == ["step-00000002", "step-00000003"]
    model = tmp_path / "step-00000003" / checkpoint.MODEL_FILE
    model.write_bytes(model.read_bytes()[:-10])  # truncated
    with pytest.raises(ModelFormatError, match="wrong size"):
        verify_checkpoint(tmp_path / "step-00000003")
    with pytest.raises(ModelFormatError):
        load_checkpoint(tmp_path / "step-00000003", objective, optimizer, scheduler)
    assert latest_checkpoint(tmp_path).name == "step-00000002"
    state = tmp_path / "step-00000002" / checkpoint.STATE_FILE
    state.write_text(state.read_text().replace('"step": 2', '"step": 9'))  # same size, other bytes
    with pytest.raises(ModelFormatError, match="SHA-256"):
        verify_checkpoint(tmp_path / "step-00000002")
    assert latest_checkpoint(tmp_path) is None


def _run_worker(model_dir, corpus, output, result, steps, *extra) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, str(WORKER), str(model_dir), str(corpus), str(output), str(result),
                           str(steps), *extra], env=env, capture_output=True, text=True, timeout=300)


def test_sigkilled_and_resumed_run_ends_with_identical_weights(tiny_bert_dir, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS), encoding="utf-8")
    steps = 14
    expected = resume_worker.run(tiny_bert_dir, corpus, tmp_path / "straight", steps)

    run = tmp_path / "interrupted"
    result = tmp_path / "interrupted.safetensors"
    # SIGKILL part-way, while the checkpoint of step 8 is being written (every tensor file on disk,
    # manifest not yet): the run must come back from step 4.
    killed = _run_worker(tiny_bert_dir, corpus, run, result, steps, "--kill-writing-checkpoint", "8")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (run / "checkpoints" / ".step-00000008.tmp").is_dir()
    assert [p.name for p in list_checkpoints(run / "checkpoints")] == ["step-00000004"]
    finished = _run_worker(tiny_bert_dir, corpus, run, result, steps, "--resume", "--kill-at-step", str(steps + 1))
    assert finished.returncode == 0, finished.stderr

    actual = load_file(result)
    assert expected.keys() == actual.keys()
    for key in expected:
        assert torch.equal(expected[key], actual[key]), key

    # The resumed log holds every step once, with the losses of the uninterrupted run.
    def losses(path):
        records = [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
        return [(r["step"], r["loss"]) for r in records if "loss" in r]

    assert losses(run) == losses(tmp_path / "straight")
    assert [s for s, _ in losses(run)] == list(range(1, steps + 1))


def test_resume_without_a_complete_checkpoint_starts_afresh(tiny_bert_dir, tmp_path):
    from sentforge.training.trainer import Trainer, TrainingConfig

    (tmp_path / "metrics.jsonl").write_text('{"step": 0, "event": "start"}\n{"step": 3, "loss": 1.0}\n')
    (tmp_path / "checkpoints" / ".step-00000004.tmp").mkdir(parents=True)  # a crash before the first one
    encoder = build_encoder(tiny_bert_dir)
    config = TrainingConfig(steps=2, batch_size=4, output_dir=tmp_path, resume=True, log_every=1,
                            show_progress=False)
    result = Trainer(encoder, MaskedLanguageModeling(encoder), CORPUS, config).train()
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert result.steps == 2 and [r["step"] for r in records if "loss" in r] == [1, 2]
    assert sum(1 for r in records if r.get("event") == "start") == 1


def test_a_run_a_callback_stops_saves_that_step_and_resumes_to_the_same_weights(tiny_bert_dir, tmp_path):
    """A callback's stop (adapt's probe, the ladder's step cap) keeps the step it stopped at, between the
    periodic checkpoints; resumed, the run ends with the weights of one that never stopped."""
    from sentforge.training.trainer import Trainer, TrainingConfig

    def run(output, callbacks=(), resume=False):
        torch.manual_seed(0)
        encoder = build_encoder(tiny_bert_dir)
        config = TrainingConfig(steps=6, batch_size=4, lr=1e-3, output_dir=output, checkpoint_every=4,
                                resume=resume, show_progress=False, seed=0)
        return Trainer(encoder, MaskedLanguageModeling(encoder), CORPUS, config, callbacks=list(callbacks)).train(), \
            encoder

    def stop_at_3(state):
        if state.step == 3:
            state.should_stop = True

    run(tmp_path / "stopped", [stop_at_3])
    assert [p.name for p in sorted((tmp_path / "stopped" / "checkpoints").iterdir())] == ["step-00000003"]
    resumed, resumed_encoder = run(tmp_path / "stopped", resume=True)
    whole, whole_encoder = run(tmp_path / "whole")
    assert resumed.steps == whole.steps == 6
    for name, value in whole_encoder.state_dict().items():
        torch.testing.assert_close(resumed_encoder.state_dict()[name], value, atol=0, rtol=0, msg=name)
