"""`sentforge adapt` on a tiny random model and written domain files: selection by dev score (checked by
scoring every candidate again), never below the start model, each trained candidate's probed cost per step,
resume after a real SIGKILL (no second probe), budget skips, report files, the reproducing commands (a run
probed, then continued, has the weights of one fresh run), and command-line errors."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sentforge
from sentforge.adaptation.step_clock import PROBE_STEPS
from sentforge.support.errors import ConfigError, OutputExistsError
from sentforge.evaluation import load_dataset

import adapt_worker
from adapt_domain import SENTENCES, TEXTS, run, write_jsonl
from conftest import assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")
WORKER = Path(__file__).parents[1] / "helpers" / "adapt_worker.py"
K = ""  # the start model's name in candidate names: the tiny model folder's name


@pytest.fixture(autouse=True)
def model_key(tiny_bert_dir):
    global K
    K = tiny_bert_dir.name


def done(report: dict) -> dict:
    return {name: r for name, r in report["candidates"].items() if r["status"] == "done"}


def test_end_to_end_selection_scores_report_and_card(tiny_bert_dir, domain, tmp_path):
    out = tmp_path / "adapted"
    report = run(tiny_bert_dir, domain, out, test=domain / "test.jsonl",
                 candidates=["tsdae", "mnrl", "tsdae+mnrl", "pause", "meta-concat"])
    assert json.loads((out / "report.json").read_text()) == json.loads(json.dumps(report.to_json()))
    results = done(report)
    assert list(results) == [f"{K}.start", f"{K}.tsdae", f"{K}.mnrl", f"{K}.tsdae+mnrl",
                             "meta-concat"]
    # Every candidate's dev and test score, scored again here from its saved model.
    dev, test = load_dataset(domain / "dev.jsonl"), load_dataset(domain / "test.jsonl")
    for name, r in results.items():
        model = (sentforge.MetaEncoder.load(r["model_path"]) if r["kind"] == "meta"
                 else sentforge.load(r["model_path"]))
        assert dev.evaluate(model)["map"] == pytest.approx(r["dev"], abs=1e-9), name
        assert test.evaluate(model)["map"] == pytest.approx(r["test"], abs=1e-9), name
        if r["kind"] == "train":  # the kept model is the best evaluated checkpoint, every 2 steps
            assert [e["step"] for e in r["evaluations"]] == list(range(2, r["steps"] + 1, 2))
            assert r["dev"] == max(e["score"] for e in r["evaluations"])
    start_vectors = sentforge.load(tiny_bert_dir).encode(TEXTS[:5])
    for name in (f"{K}.tsdae", f"{K}.mnrl"):  # the candidates did train
        assert not np.allclose(sentforge.load(results[name]["model_path"]).encode(TEXTS[:5]), start_vectors)
    best = max(r["dev"] for r in results.values())
    expected = f"{K}.start" if results[f"{K}.start"]["dev"] == best else next(
        name for name, r in results.items() if r["dev"] == best)
    assert report["selected"] == expected
    assert results[f"{K}.tsdae+mnrl"]["commands"][0] == results[f"{K}.tsdae"]["commands"][0]
    # Each trained candidate's steps were timed by a probe of its first steps (tsdae+mnrl: mnrl's, same recipe);
    # its run went on from there to its planned steps.
    probes = json.loads((out / "adapt.json").read_text())["probes"]
    assert set(probes) == {f"{K}.tsdae", f"{K}.mnrl"} and all(p["steps"] == PROBE_STEPS for p in probes.values())
    for name in (f"{K}.tsdae", f"{K}.mnrl"):
        assert results[name]["seconds_per_step"] == probes[name]["seconds_per_step"] > 0
        assert results[name]["steps"] == results[name]["planned_steps"] > PROBE_STEPS
    assert results[f"{K}.tsdae+mnrl"]["seconds_per_step"] == probes[f"{K}.mnrl"]["seconds_per_step"]
    assert report["candidates"][f"{K}.pause"]["status"] == "not applicable"
    markdown = (out / "report.md").read_text()
    assert f"| {expected} (selected) |" in markdown and f"{K}.pause: not applicable" in markdown
    assert f"{K}.mnrl {results[f'{K}.mnrl']['seconds_per_step']:.3g}" in markdown
    assert (out / "dev-curve.png").read_bytes()[:4] == b"\x89PNG"
    # Done: each candidate keeps its model and metrics, not its training checkpoints; report.md gives the size.
    assert not list((out / "runs").rglob("checkpoints")) and (out / f"runs/{K}.mnrl/training/metrics.jsonl").is_file()
    assert "Output: " in markdown and "checkpoints were removed" in markdown and report["output_bytes"] > 0
    if results[expected]["kind"] != "meta":
        from sentence_transformers import SentenceTransformer

        card = json.loads((out / "model" / "model_card.json").read_text())
        assert "sentforge adapt" in card["description"] and expected in card["description"]
        assert {r["task"]: r["value"] for r in card["evaluation"]} == pytest.approx(
            {"dev:dev.jsonl": results[expected]["dev"], "test:test.jsonl": results[expected]["test"]})
        np.testing.assert_allclose(SentenceTransformer(str(out / "model"), device="cpu").encode(TEXTS[:5]),
                                   sentforge.load(results[expected]["model_path"]).encode(TEXTS[:5]), atol=1e-5)


def test_the_reported_command_reproduces_a_candidate(tiny_bert_dir, domain, tmp_path, capsys, monkeypatch):
    report = run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["mnrl"])
    mnrl = report["candidates"][f"{K}.mnrl"]
    args = shlex.split(mnrl["commands"][0])
    args[args.index("--output") + 1] = str(tmp_path / "again")
    code, _, err = run_cli(args[1:], capsys)
    assert code == 0, err
    np.testing.assert_array_equal(sentforge.load(tmp_path / "again").encode(TEXTS[:6]),
                                  sentforge.load(mnrl["model_path"]).encode(TEXTS[:6]))


def test_candidates_forced_worse_are_not_selected(tiny_bert_dir, domain, tmp_path, monkeypatch):
    # The dev task takes 10 points off every model whose vectors are not the start model's: every candidate
    # (the best checkpoints of the trained ones, the meta-embedding) scores below the start model.
    import sentforge.evaluation as evaluation

    start_vectors = sentforge.load(tiny_bert_dir).encode(TEXTS[:3])
    load_dataset_ = evaluation.load_dataset

    def penalised(*args, **kwargs):
        task = load_dataset_(*args, **kwargs)
        evaluate = task.evaluate

        def worse_unless_start(encoder):
            metrics = dict(evaluate(encoder))
            vectors = encoder.encode(TEXTS[:3])
            if vectors.shape != start_vectors.shape or not np.allclose(vectors, start_vectors, atol=1e-6):
                metrics["map"] -= 10.0
            return metrics

        task.evaluate = worse_unless_start
        return task

    monkeypatch.setattr(evaluation, "load_dataset", penalised)
    report = run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["tsdae", "mnrl", "meta-concat"])
    results = done(report)
    assert len(results) == 4
    start = results[f"{K}.start"]["dev"]
    assert all(r["dev"] < start for name, r in results.items() if name != f"{K}.start")
    assert report["selected"] == f"{K}.start"
    np.testing.assert_allclose(sentforge.load(tmp_path / "adapted" / "model").encode(TEXTS[:6]),
                               sentforge.load(tiny_bert_dir).encode(TEXTS[:6]), atol=1e-6)


def test_resume_after_sigkill_reuses_finished_and_continues_the_interrupted(tiny_bert_dir, domain, tmp_path):
    straight = adapt_worker.run(tiny_bert_dir, domain, tmp_path / "straight")
    out = tmp_path / "killed"
    killed = subprocess.run([sys.executable, str(WORKER), str(tiny_bert_dir), str(domain), str(out),
                             "--kill-in-candidate", "2", "--kill-at-step", "4"], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    state = json.loads((out / "adapt.json").read_text())
    assert set(state["results"]) == {f"{K}.start", f"{K}.tsdae"}  # mnrl was interrupted
    assert set(state["probes"]) == {f"{K}.tsdae", f"{K}.mnrl"}  # after mnrl's probe
    assert (out / f"runs/{K}.mnrl/training/checkpoints").is_dir()  # not done: what resumes it stays
    first = (out / "runs" / f"{K}.tsdae" / "train.json").stat().st_mtime_ns
    resumed = adapt_worker.run(tiny_bert_dir, domain, out)
    assert (out / "runs" / f"{K}.tsdae" / "train.json").stat().st_mtime_ns == first  # reused, not retrained
    events = [json.loads(line) for line in (out / f"runs/{K}.mnrl/training/metrics.jsonl").read_text().splitlines()]
    assert any(e.get("event") == "resume" and e["step"] == 4 for e in events)
    for name, expected in done(straight).items():
        got = resumed["candidates"][name]
        for key in ("dev", "test", "best_step", "steps", "evaluations"):
            assert got.get(key) == expected.get(key), (name, key)
    assert resumed["selected"] == straight["selected"]
    assert json.loads((out / "adapt.json").read_text())["probes"] == state["probes"]  # not probed again
    assert resumed["candidates"][f"{K}.mnrl"]["seconds_per_step"] == state["probes"][f"{K}.mnrl"]["seconds_per_step"]
    np.testing.assert_array_equal(sentforge.load(out / f"runs/{K}.mnrl").encode(TEXTS[:6]),
                                  sentforge.load(tmp_path / f"straight/runs/{K}.mnrl").encode(TEXTS[:6]))


def test_keep_checkpoints_keeps_them(tiny_bert_dir, domain, tmp_path):
    out = tmp_path / "adapted"
    report = run(tiny_bert_dir, domain, out, candidates=["mnrl"], keep_checkpoints=True)
    assert report["candidates"][f"{K}.mnrl"]["status"] == "done"
    assert (out / f"runs/{K}.mnrl/training/checkpoints").is_dir()
    assert "training checkpoints kept" in (out / "report.md").read_text()


def test_a_changed_command_is_refused(tiny_bert_dir, domain, tmp_path, capsys):
    out = tmp_path / "adapted"
    run(tiny_bert_dir, domain, out, candidates=[])
    with pytest.raises(ConfigError, match="differs in seed"):
        run(tiny_bert_dir, domain, out, candidates=[], seed=1)
    (domain / "unlabelled.txt").write_text("".join(f"{t}\n" for t in TEXTS[:30]), encoding="utf-8")
    code, _, err = run_cli(["adapt", "--model", tiny_bert_dir, "--unlabelled", domain / "unlabelled.txt",
                            "--dev", domain / "dev.jsonl", "--output", out], capsys)
    assert_one_line_error(code, err, str(out), "unlabelled")


def test_a_tiny_budget_skips_the_trained_candidates_and_lists_them(tiny_bert_dir, domain, tmp_path, capsys):
    out = tmp_path / "adapted"
    code, stdout, err = run_cli(["adapt", "--model", tiny_bert_dir, "--unlabelled", domain / "unlabelled.txt",
                                 "--labelled", domain / "labelled.jsonl", "--dev", domain / "dev.jsonl",
                                 "--output", out, "--budget-minutes", 1e-4, "--candidates", "tsdae,mnrl,meta-gcca",
                                 "--member", tiny_bert_dir, "--keep-dev-texts"], capsys)
    assert code == 0, err
    assert stdout.startswith(f"selected {K}.start: dev map ")
    report = json.loads((out / "report.json").read_text())
    statuses = {name: (r["status"], r.get("reason", "")) for name, r in report["candidates"].items()}
    assert statuses[f"{K}.start"][0] == "done" and report["selected"] == f"{K}.start"
    for name in (f"{K}.tsdae", f"{K}.mnrl", "meta-gcca"):
        assert statuses[name][0] == "skipped" and "budget" in statuses[name][1], statuses[name]
    assert not (out / "runs" / f"{K}.tsdae").exists()
    markdown = (out / "report.md").read_text()
    assert f"- {K}.tsdae: skipped: " in markdown and "- meta-gcca: skipped: " in markdown
    # The headline says that nothing ran, not that no candidate's interval lies above 0.
    assert "no candidate finished: 3 of 3 were skipped" in markdown and "interval" not in markdown.split("\n")[4]


def test_a_probe_that_fails_fails_its_own_candidate_only(tiny_bert_dir, domain, tmp_path):
    """MPNet has no causal-LM decoder for TSDAE: with a BERT and an MPNet start, BERT's TSDAE (whose run probes
    MPNet's as well) trains, and only MPNet's TSDAE and what builds on it are lost."""
    import torch
    from transformers import AutoTokenizer, MPNetConfig, MPNetModel

    mpnet = tmp_path / "tiny-mpnet"
    torch.manual_seed(0)
    MPNetModel(MPNetConfig(vocab_size=len(AutoTokenizer.from_pretrained(tiny_bert_dir)), hidden_size=32,
                           num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                           max_position_embeddings=66)).save_pretrained(mpnet)
    AutoTokenizer.from_pretrained(tiny_bert_dir).save_pretrained(mpnet)
    report = sentforge.adapt([str(tiny_bert_dir), str(mpnet)], domain / "unlabelled.txt", domain / "dev.jsonl",
                             tmp_path / "adapted", labelled=domain / "labelled.jsonl",
                             **{**adapt_worker.FAST, "candidates": ["tsdae", "mnrl", "tsdae+mnrl"]})
    status = {name: (r["status"], r.get("reason", "")) for name, r in report["candidates"].items()}
    assert status["tiny-mpnet.tsdae"][0] == "failed" and "model type 'mpnet'" in status["tiny-mpnet.tsdae"][1]
    assert status["tiny-mpnet.tsdae+mnrl"] == ("skipped", "it starts from tiny-mpnet.tsdae, which did not run")
    for name in (f"{K}.tsdae", f"{K}.mnrl", f"{K}.tsdae+mnrl", "tiny-mpnet.mnrl"):
        assert status[name][0] == "done", (name, status[name])


def test_partial_labels_select_pause_and_binary_positives_feed_mnrl(tiny_bert_dir, domain, tmp_path):
    report = run(tiny_bert_dir, domain, tmp_path / "adapted", labelled=domain / "partial.jsonl",
                 candidates=["pause", "mnrl"], overrides={"pause": {"batch_size": 6}, "mnrl": {"batch_size": 2}})
    results = done(report)
    assert {f"{K}.pause", f"{K}.mnrl"} <= set(results)
    assert results[f"{K}.mnrl"]["examples"] == 6  # the pairs labelled 1, each with a label-0 hard negative
    assert results[f"{K}.pause"]["examples"] == 2 * len(SENTENCES)
    # the command reads the labelled file itself: `sentforge train mnrl` gives its label-1 pairs the same negatives
    assert f"--corpus {domain / 'partial.jsonl'} " in results[f"{K}.mnrl"]["commands"][0]


@pytest.mark.parametrize("change, fragments", [
    ({"--dev": "missing.jsonl"}, ["missing.jsonl", "not found"]),
    ({"--candidates": "tsdae,bogus"}, ["--candidates", "bogus"]),
    ({"--budget-minutes": "0"}, ["--budget-minutes"]),
    ({"--labelled": "classes.jsonl"}, ["--labelled", "classes.jsonl", "class label"]),
    ({"--candidates": "tsdae+mnrl"}, ["tsdae+mnrl", "add tsdae"]),
    ({"--model": "no-such-model"}, ["no-such-model"]),
])
def test_bad_input_is_one_error_line(tiny_bert_dir, domain, tmp_path, capsys, monkeypatch, change, fragments):
    monkeypatch.chdir(domain)
    write_jsonl(domain / "classes.jsonl", [{"sentence1": "a b c", "sentence2": "d e f", "label": "entailment"}])
    args = {"--model": str(tiny_bert_dir), "--unlabelled": "unlabelled.txt", "--dev": "dev.jsonl",
            "--output": str(tmp_path / "out"), **change}
    code, _, err = run_cli(["adapt", *[x for pair in args.items() for x in pair]], capsys)
    assert_one_line_error(code, err, *fragments)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("spelling", ["dev.jsonl", "../data/dev.jsonl", "dev-link.jsonl"])
def test_a_test_set_that_is_the_dev_set_is_refused(tiny_bert_dir, domain, tmp_path, capsys, monkeypatch, spelling):
    monkeypatch.chdir(domain)
    (domain / "dev-link.jsonl").symlink_to(domain / "dev.jsonl")
    code, _, err = run_cli(["adapt", "--model", tiny_bert_dir, "--unlabelled", "unlabelled.txt", "--dev", "dev.jsonl",
                            "--test", spelling, "--output", tmp_path / "out"], capsys)
    assert_one_line_error(code, err, f"--test {spelling} and --dev dev.jsonl are the same data")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["adapt", "labels"])
@pytest.mark.parametrize("minutes", ["0", "-1"])
def test_budget_minutes_has_one_rule_and_message(tiny_bert_dir, domain, tmp_path, capsys, command, minutes):
    inputs = ["--unlabelled", domain / "unlabelled.txt"] if command == "adapt" else [
        "--labelled", domain / "labelled.jsonl"]
    code, _, err = run_cli([command, "--model", tiny_bert_dir, *inputs, "--dev", domain / "dev.jsonl",
                            "--output", tmp_path / "out", "--budget-minutes", minutes], capsys)
    assert_one_line_error(code, err, f"--budget-minutes must be > 0, got {minutes}")


def test_a_non_adapt_output_directory_is_refused(tiny_bert_dir, domain, tmp_path):
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(OutputExistsError, match="holds no adapt run"):
        run(tiny_bert_dir, domain, out, candidates=[])
    assert (out / "keep.txt").read_text() == "mine"


def test_overrides_name_trained_candidates_only(tiny_bert_dir, domain, tmp_path):
    with pytest.raises(ConfigError, match="meta-gcca are not trained candidates"):
        run(tiny_bert_dir, domain, tmp_path / "adapted", overrides={"meta-gcca": {"dim": 8}})
    assert not (tmp_path / "adapted").exists()


def test_without_matplotlib_the_curve_is_skipped_with_a_message(tmp_path, monkeypatch, caplog):
    from sentforge.adaptation.report import plot_curves

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    report = {"metric": "map", "candidates": {"m.start": {"status": "done", "kind": "start", "dev": 50.0}}}
    with caplog.at_level("INFO", logger="sentforge.harness.report_files"):
        plot_curves(tmp_path / "dev-curve.png", report)
    assert not (tmp_path / "dev-curve.png").exists()
    assert "plots" in caplog.text and "dev-curve.png not drawn" in caplog.text


def test_train_eval_every_needs_dev(tiny_bert_dir, domain, tmp_path, capsys):
    code, _, err = run_cli(["train", "tsdae", "--model", tiny_bert_dir, "--corpus", domain / "unlabelled.txt",
                            "--output", tmp_path / "out", "--eval-every", "2"], capsys)
    assert_one_line_error(code, err, "--eval-every needs --dev")


def test_meta_members_are_single_models_never_another_meta_embedding():
    from sentforge.adaptation.meta import member_specs
    from sentforge.adaptation.result import NotRun, finished

    results = {"m.start": finished("start", "start", None, dev=80.0, model_path="start-dir"),
               "m.tsdae": finished("train", "tsdae", None, dev=70.0, model_path="tsdae-dir"),
               "m.mnrl": finished("train", "mnrl", None, dev=85.0, model_path="mnrl-dir"),
               "m.ct": NotRun("train", "ct", "skipped", reason="budget"),
               "meta-concat": finished("meta", "meta-concat", None, dev=90.0, model_path="concat-dir")}
    assert member_specs(results, 2, ["extra"]) == [("m.mnrl", "mnrl-dir"), ("m.start", "start-dir"),
                                                   ("member:extra", "extra")]
