"""The recipes layer: `sentforge.train` from Python (files or lists), best-checkpoint selection, the
wall-clock limit, PAUSE --resume, and the run directory's safety (no input lost to --overwrite, a
crash in the final save leaves the old model or the new one, never a mix)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import sentforge
from sentforge.support.errors import ConfigError
from sentforge.recipes import run_dir

from conftest import CORPUS, assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")
FAST = {"steps": 2, "batch_size": 4, "lr": 1e-3, "show_progress": False}


def vectors(path):
    return sentforge.load(path).encode(CORPUS[:6])


def pooling_of(path):
    return [m.modes for m in sentforge.load(path) if hasattr(m, "modes")]


def test_train_from_python_with_sentences_in_memory(tiny_bert_dir, tmp_path):
    encoder = sentforge.train("tsdae", tiny_bert_dir, CORPUS, tmp_path / "out", noise_ratio=0.3, **FAST)
    summary = json.loads((tmp_path / "out/train.json").read_text())
    assert summary["method"] == "tsdae" and summary["data"] == "in memory" and summary["examples"] == len(CORPUS)
    assert summary["method_options"] == {"noise": "delete", "noise_ratio": 0.3, "tied": True}
    assert summary["training"]["lr"] == 1e-3 and summary["training"]["optimizer"] == "adamw"  # paper's optimizer
    np.testing.assert_allclose(encoder.encode(CORPUS[:6]), vectors(tmp_path / "out"), atol=1e-6)
    assert pooling_of(tmp_path / "out") == [("cls",)]  # TSDAE's paper pooling


def test_python_and_cli_runs_are_the_same(tiny_bert_dir, tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"{line}\n" for line in CORPUS), encoding="utf-8")
    sentforge.train("simcse", tiny_bert_dir, corpus, tmp_path / "py", seed=3, **FAST)
    code, _, err = run_cli(["train", "simcse", "--model", tiny_bert_dir, "--corpus", corpus, "--output",
                            tmp_path / "cli", "--steps", 2, "--batch-size", 4, "--lr", 1e-3, "--seed", 3], capsys)
    assert code == 0, err
    np.testing.assert_array_equal(vectors(tmp_path / "py"), vectors(tmp_path / "cli"))


def test_bad_settings_are_named(tiny_bert_dir, tmp_path):
    with pytest.raises(ConfigError, match="unknown setting.*noise_ration"):
        sentforge.train("tsdae", tiny_bert_dir, CORPUS, tmp_path / "o", noise_ration=0.5)
    with pytest.raises(ConfigError, match="noise-ratio"):
        sentforge.train("tsdae", tiny_bert_dir, CORPUS, tmp_path / "o", noise_ratio=1.5)
    with pytest.raises(ConfigError, match="unknown training method 'tsdea'"):
        sentforge.train("tsdea", tiny_bert_dir, CORPUS, tmp_path / "o")
    with pytest.raises(ConfigError, match="example 0"):
        sentforge.train("mnrl", tiny_bert_dir, CORPUS, tmp_path / "o")  # texts where pairs are expected
    assert not (tmp_path / "o").exists()


def test_select_keeps_the_best_evaluated_encoder(tiny_bert_dir, tmp_path):
    steps_seen = []

    def dev(encoder):  # a dev score that peaks at step 2 of 4
        steps_seen.append(len(steps_seen) + 1)
        return {"score": -abs(steps_seen[-1] - 2)}

    settings = {**FAST, "seed": 1}
    best = sentforge.train("ct", tiny_bert_dir, CORPUS, tmp_path / "best", **{**settings, "steps": 4},
                           evaluator=dev, eval_every=1, select="score", negatives=1)
    sentforge.train("ct", tiny_bert_dir, CORPUS, tmp_path / "two", **settings, negatives=1)
    summary = json.loads((tmp_path / "best/train.json").read_text())
    assert summary["steps"] == 4 and summary["best"] == {"step": 2, "metric": "score", "value": 0.0}
    np.testing.assert_array_equal(vectors(tmp_path / "best"), vectors(tmp_path / "two"))
    np.testing.assert_array_equal(best.encode(CORPUS[:6]), vectors(tmp_path / "two"))


def test_time_limit_stops_cleanly_with_a_valid_model(tiny_bert_dir, tmp_path):
    sentforge.train("simcse", tiny_bert_dir, CORPUS, tmp_path / "out", **{**FAST, "steps": 50}, time_limit=1e-6)
    summary = json.loads((tmp_path / "out/train.json").read_text())
    assert summary["steps"] == 1 and summary["stopped"] == "time limit"
    assert np.isfinite(vectors(tmp_path / "out")).all()


def test_pause_resume_ends_with_the_uninterrupted_weights(tiny_bert_dir, tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    labels = ["entailment", "contradiction", None, None]
    pairs.write_text("".join(json.dumps({"sentence1": a, "sentence2": b, "label": labels[i % 4]}) + "\n"
                             for i, (a, b) in enumerate(zip(CORPUS[:24], CORPUS[1:25]))), encoding="utf-8")

    def pause(output, steps, *extra):
        code, _, err = run_cli(["train", "pause", "--model", tiny_bert_dir, "--pairs", pairs, "--output", output,
                                "--steps", steps, "--batch-size", 4, "--lr", 1e-3, "--checkpoint-every", 2,
                                "--seed", 2, "--priors", "contradiction=0.4,entailment=0.6", *extra], capsys)
        assert code == 0, err

    pause(tmp_path / "straight", 4)
    pause(tmp_path / "parts", 4)
    shutil.rmtree(tmp_path / "parts/training/checkpoints/step-00000004")
    pause(tmp_path / "parts", 4, "--resume")
    summary = json.loads((tmp_path / "parts/train.json").read_text())
    assert summary["steps"] == 4 and summary["training"]["batch_size"] == 4 and summary["priors"] == [0.4, 0.6]
    np.testing.assert_array_equal(vectors(tmp_path / "parts"), vectors(tmp_path / "straight"))


# --- the run directory's safety ---------------------------------------------------------------------

def test_overwrite_of_the_input_model_trains_from_it(tiny_bert_dir, tmp_path, capsys):
    start = tmp_path / "m"
    sentforge.train("simcse", tiny_bert_dir, CORPUS, start, **FAST)
    copy = tmp_path / "copy"
    shutil.copytree(start, copy)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"{line}\n" for line in CORPUS), encoding="utf-8")
    common = ["--corpus", corpus, "--steps", 2, "--batch-size", 4, "--lr", 1e-3]
    code, _, err = run_cli(["train", "tsdae", "--model", start, "--output", start, "--overwrite", *common], capsys)
    assert code == 0, err
    code, _, err = run_cli(["train", "tsdae", "--model", copy, "--output", tmp_path / "ref", *common], capsys)
    assert code == 0, err
    np.testing.assert_array_equal(vectors(start), vectors(tmp_path / "ref"))  # trained from the input model
    assert not any(p.name.startswith(".m.") for p in tmp_path.iterdir())  # no staging left behind


def test_an_input_inside_the_output_is_refused_and_kept(tiny_bert_dir, tmp_path, capsys):
    output = tmp_path / "out"
    sentforge.train("simcse", tiny_bert_dir, CORPUS, output, **FAST)
    corpus = output / "corpus.txt"
    corpus.write_text("".join(f"{line}\n" for line in CORPUS), encoding="utf-8")
    before = vectors(output)
    code, _, err = run_cli(["train", "tsdae", "--model", tiny_bert_dir, "--corpus", corpus, "--output", output,
                            "--overwrite", "--steps", 2, "--batch-size", 4], capsys)
    assert_one_line_error(code, err, "--corpus", "corpus.txt", "inside --output")
    assert corpus.read_text(encoding="utf-8").splitlines() == CORPUS
    np.testing.assert_array_equal(vectors(output), before)


@pytest.mark.parametrize("crash_at", ["model", "summary", "swap"])
def test_a_crash_in_the_final_save_leaves_the_old_model(tiny_bert_dir, tmp_path, monkeypatch, crash_at):
    output = tmp_path / "out"
    sentforge.train("simcse", tiny_bert_dir, CORPUS, output, **FAST)  # cls pooling
    before = vectors(output)

    def crash(*args, **kwargs):
        raise OSError("simulated crash")

    if crash_at == "model":  # the new model is half written when the crash comes
        def half_save(self, path, overwrite=False):
            path.mkdir(parents=True)
            (path / "config.json").write_text("{}")
            crash()
        monkeypatch.setattr(sentforge.Encoder, "save", half_save)
    else:
        monkeypatch.setattr(run_dir, {"summary": "save_json", "swap": "_exchange"}[crash_at], crash)
    with pytest.raises(OSError, match="simulated crash"):
        sentforge.train("ct", tiny_bert_dir, CORPUS, output, overwrite=True, negatives=1, **FAST)  # mean pooling
    monkeypatch.undo()
    assert pooling_of(output) == [("cls",)]
    np.testing.assert_array_equal(vectors(output), before)
    assert json.loads((output / "train.json").read_text())["method"] == "simcse"


def test_a_crash_in_the_first_save_leaves_no_model_and_the_run_resumable(tiny_bert_dir, tmp_path, monkeypatch):
    output = tmp_path / "out"
    monkeypatch.setattr(run_dir, "save_json", lambda *a, **k: (_ for _ in ()).throw(OSError("simulated crash")))
    with pytest.raises(OSError, match="simulated crash"):
        sentforge.train("simcse", tiny_bert_dir, CORPUS, output, checkpoint_every=2, **FAST)
    monkeypatch.undo()
    # nothing that loads with a wrong pooling; the marker says the directory is this run's
    assert sorted(p.name for p in output.iterdir()) == [".sentforge-output.json", "training"]
    sentforge.train("simcse", tiny_bert_dir, CORPUS, output, resume=True, checkpoint_every=2, **FAST)
    sentforge.train("simcse", tiny_bert_dir, CORPUS, tmp_path / "straight", **FAST)
    np.testing.assert_array_equal(vectors(output), vectors(tmp_path / "straight"))


def test_the_swap_without_an_atomic_exchange(tmp_path, monkeypatch):
    old, new = tmp_path / "out", tmp_path / ".out.new"
    old.mkdir()
    (old / "a").write_text("old")
    new.mkdir()
    (new / "a").write_text("new")
    monkeypatch.setattr(run_dir, "_exchange", lambda a, b: False)
    run_dir.swap_in(new, old)
    assert (old / "a").read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_each_method_help_lists_only_its_own_options(capsys, monkeypatch):
    from sentforge.recipes import recipes

    monkeypatch.setenv("COLUMNS", "200")  # whole option names in the help table
    flags = {recipe.name: {f"--{name.replace('_', '-')}" for name in recipe.option_names()} for recipe in recipes()}
    for recipe in recipes():
        code, out, _ = run_cli(["train", recipe.name, "--help"], capsys)
        assert code == 0 and ("--pairs" if recipe.name == "pause" else "--corpus") in out and "--seed" in out
        others = set().union(*(f for name, f in flags.items() if name != recipe.name)) - flags[recipe.name]
        assert flags[recipe.name] <= {w.strip("│ ") for w in out.split()}, recipe.name
        assert not others & {w.strip("│ ") for w in out.split()}, recipe.name


def test_batch_sampler_batches_are_shuffled_per_epoch_and_shared_out():
    from collections import Counter

    from sentforge.data.samplers import ProportionalSampler
    from sentforge.training.batch_order import BatchOrder, process_slice

    labels = ["a"] * 16 + ["b"] * 8 + [None] * 40
    sampler = ProportionalSampler(labels, seed=0)
    order = BatchOrder(len(labels), 16, seed=3, sampler=sampler)
    fixed = {tuple(batch) for batch in sampler.batches(16)}
    epochs = [[tuple(order.next_batch()) for _ in range(order.batches_per_epoch)] for _ in range(2)]
    assert order.batches_per_epoch == 4 and set(epochs[0]) == set(epochs[1]) == fixed
    assert epochs[0] != epochs[1]  # the batch order is reshuffled each epoch
    for batch in fixed:  # each of 2 processes gets 8 pairs that mirror the composition (4 : 2 : 10 of 16)
        for rank in (0, 1):
            counts = Counter(labels[i] for i in process_slice(list(batch), rank, 2))
            assert abs(counts["a"] - 2) <= 1 and abs(counts["b"] - 1) <= 1 and abs(counts[None] - 5) <= 1
