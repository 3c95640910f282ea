"""The Sentence-T5 experiment driver (benchmarks/experiments/sentence_t5.py) and the shared experiment plumbing
(benchmarks/benchlib/drivers.py): the run plan, the training command, the STS figure Sentence-T5 reports,
the report's mean ± std tables and plot from fake results, resuming and failure handling, the TSDAE
drivers' plan and report on that plumbing, and one end-to-end `run` of a tiny random T5 on tiny data
(raw and QA -> NLI, one training step per stage)."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np
import pytest

from conftest import CORPUS, REPO


@pytest.fixture
def st5(monkeypatch):
    import importlib

    monkeypatch.syspath_prepend(str(REPO / "benchmarks" / "experiments"))
    return importlib.import_module("sentence_t5")


@pytest.fixture
def benchlib(monkeypatch):
    import importlib

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    return importlib.import_module("benchlib.drivers")


def test_plan_runs_raw_once_then_seed_major(st5):
    runs = st5.plan(st5.T5_VARIANTS, tuple(st5.SETTINGS), (0, 1))
    assert [r.name for r in runs[:3]] == ["enc-mean-raw", "enc-first-raw", "encdec-first-raw"]
    assert all(r.seed is None for r in runs[:3]) and len(runs) == 3 + 3 * 2 * 2
    assert [(r.setting, r.seed) for r in runs[3:9]] == [("nli", 0)] * 3 + [("qa-nli", 0)] * 3
    assert {r.seed for r in runs[9:]} == {1}
    assert len({r.name for r in runs}) == len(runs)
    assert [r.name for r in st5.plan(("own",), ("qa-nli",), (2,))] == ["own-qa-nli-s2"]


def test_default_variants_follow_the_checkpoint(st5, tiny_t5_dir, tiny_bert_dir):
    assert st5.default_variants(str(tiny_t5_dir)) == ("enc-mean", "enc-first", "encdec-first")
    assert st5.default_variants(str(tiny_bert_dir)) == ("own",)


def test_training_command(st5, tmp_path):
    args = argparse.Namespace(model="M", batch_size=8, qa_data=["qa1", "qa2"], nli_data=["nli"], stage_steps=5,
                              stage_epochs=None, qa_steps=None, projection_dim=16, lr=None, max_seq_length=None,
                              checkpoint_every=None, device=None)
    model_dir = tmp_path / "model"
    two_stages = st5.training_arguments(st5.Run("encdec-first", "qa-nli", 3), args, model_dir)
    assert two_stages == ["train", "st5", "--model", "M", "--output", str(model_dir), "--batch-size", "8", "--seed",
                          "3", "--pooling", "encdec-first", "--stage", "qa", "--stage", "nli", "--qa-data", "qa1",
                          "--qa-data", "qa2", "--nli-data", "nli", "--stage-steps", "5", "--projection-dim", "16",
                          "--overwrite"]
    (model_dir / "training").mkdir(parents=True)  # an interrupted training continues
    nli_only = st5.training_arguments(st5.Run("own", "nli", 0), args, model_dir)
    assert "--pooling" not in nli_only and "--qa-data" not in nli_only and nli_only[-1] == "--resume"
    assert nli_only.count("--stage") == 1
    args.qa_steps = 2  # the QA stage's own budget; an NLI-only run keeps --stage-steps
    two_stages = st5.training_arguments(st5.Run("enc-mean", "qa-nli", 0), args, model_dir)
    assert two_stages[two_stages.index("--stage-steps") + 1] == "2,5"
    nli_only = st5.training_arguments(st5.Run("enc-mean", "nli", 0), args, model_dir)
    assert nli_only[nli_only.index("--stage-steps") + 1] == "5"
    assert st5.stage_budget_text({"stage_steps": 5, "qa_steps": 2}) == "2 steps in the QA stage, 5 in the NLI stage"


def test_sts_figure_is_all_for_several_subsets(st5):
    report = {"tasks": {
        "STS12": {"family": "sts", "metrics": {"spearman_mean": 60.0, "spearman_all": 55.0, "spearman_wmean": 58.0}},
        "STSBenchmark": {"family": "sts", "metrics": {"spearman": 70.0, "pearson": 71.0}},
        "MR": {"family": "transfer", "metrics": {"acc": 75.0}}}}
    assert st5.sts_scores(report) == {"STS12": 55.0, "STSBenchmark": 70.0}


def fake_result(variant, setting, seed, sts, transfer, alignment, uniformity, pooling=None):
    run = f"{variant}-{setting}" + ("" if seed is None else f"-s{seed}")
    return run, {"run": run, "variant": variant, "setting": setting, "seed": seed, "pooling": pooling or variant,
                 "sts": sts, "sts_avg": float(np.mean(list(sts.values()))), "scores": {**sts, **transfer},
                 "families": {**dict.fromkeys(sts, "sts"), **dict.fromkeys(transfer, "transfer"),
                              "AlignmentUniformity": "geometry"},
                 "transfer_avg": float(np.mean(list(transfer.values()))) if transfer else None,
                 "alignment": alignment, "uniformity": uniformity}


def write_experiment(benchlib, work_dir, model, results):
    benchlib.check_config(work_dir, {"model": model, "qa_data": ["/d/wikiqa"], "nli_data": ["/d/SNLI"],
                                     "stage_steps": None, "stage_epochs": None, "batch_size": 64,
                                     "projection_dim": None, "lr": None, "max_seq_length": None,
                                     "sts_tasks": ["STS12", "STSBenchmark"], "transfer": True})
    for run, result in results:
        (work_dir / run).mkdir()
        (work_dir / run / "result.json").write_text(json.dumps(result))


def test_report_tables_and_plot(st5, benchlib, tmp_path):
    t5, bert = tmp_path / "t5", tmp_path / "bert"
    write_experiment(benchlib, t5, "/m/t5-small", [
        fake_result("enc-mean", "raw", None, {"STS12": 30.0, "STSBenchmark": 40.0}, {"MR": 60.0, "CR": 70.0}, 0.2,
                    -1.0),
        fake_result("enc-first", "raw", None, {"STS12": 10.0, "STSBenchmark": 20.0}, {"MR": 55.0, "CR": 65.0}, 0.1,
                    -0.5),
        fake_result("enc-mean", "nli", 0, {"STS12": 50.0, "STSBenchmark": 60.0}, {"MR": 62.0, "CR": 72.0}, 0.3, -2.0),
        fake_result("enc-mean", "nli", 1, {"STS12": 54.0, "STSBenchmark": 66.0}, {"MR": 64.0, "CR": 70.0}, 0.5, -2.5),
        fake_result("enc-mean", "qa-nli", 0, {"STS12": 58.0, "STSBenchmark": 68.0}, {}, 0.25, -2.2)])
    write_experiment(benchlib, bert, "/m/MiniLM", [
        fake_result("own", "raw", None, {"STS12": 70.0, "STSBenchmark": 80.0}, {"MR": 75.0}, 0.4, -3.0, "mean")])
    for run, losses, accuracy in (("enc-mean-nli-s0", (6.0, 4.0), 0.25), ("enc-mean-nli-s1", (5.0, 3.0), 0.75)):
        windows = [{"step": 0, "event": "start"}, {"step": 10, "loss": losses[0], "accuracy": 0.0, "candidates": 128.0},
                   {"step": 20, "loss": losses[1], "accuracy": accuracy, "candidates": 128.0}, {"event": "end"}]
        (t5 / run / "metrics-stage-1-nli.jsonl").write_text("".join(json.dumps(w) + "\n" for w in windows))
        result = json.loads((t5 / run / "result.json").read_text())
        (t5 / run / "result.json").write_text(json.dumps({**result, "stages": [{"stage": "stage-1-nli"}]}))
    text = st5.markdown([t5, bert])
    # training: the last logged window of each stage, beside ln(candidates) = ln 128
    assert f"| enc-mean | NLI | 2 | NLI | 3.50 ± 0.71 | {np.log(128):.2f} | 50.0 ± 35.4 % |" in text
    assert "| enc-mean | QA → NLI | 1 | QA |" not in text  # no metrics logged for that run
    nli_sts12, nli_avg = np.array([50.0, 54.0]), np.array([55.0, 60.0])
    nli_alignment = np.array([0.3, 0.5])
    # STS average pivot: raw | NLI | QA -> NLI per encoder; enc-first has no trained run
    assert (f"| enc-mean | 35.00 | {nli_avg.mean():.2f} ± {nli_avg.std(ddof=1):.2f} | 63.00 |") in text
    assert "| enc-first | 15.00 | – | – |" in text
    assert (f"| enc-mean | NLI | 2 | {nli_sts12.mean():.2f} ± {nli_sts12.std(ddof=1):.2f} | 63.00 ± 4.24 "
            f"| {nli_avg.mean():.2f} ± {nli_avg.std(ddof=1):.2f} |") in text
    assert "| enc-mean | NLI | 2 | 63.00 ± 1.41 | 71.00 ± 1.41 | 67.00 ± 0.00 |" in text  # transfer MR, CR, average
    assert "| enc-mean | QA → NLI | 1 | 58.00 | 68.00 | 63.00 |" in text
    assert "| enc-mean | QA → NLI | 1 |" not in text.split("SentEval transfer")[1].split("Alignment")[0]
    assert (f"| enc-mean | NLI | 2 | {nli_alignment.mean():.3f} ± {nli_alignment.std(ddof=1):.3f} "
            f"| -2.250 ± 0.354 |") in text
    assert "| own (mean) | raw | 1 | 70.00 | 80.00 | 75.00 |" in text
    assert text.index("/m/t5-small") < text.index("/m/MiniLM")
    st5.plot([t5, bert], tmp_path / "geometry.png")
    assert (tmp_path / "geometry.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit, match="batch_size: 64 then, 32 now"):
        benchlib.check_config(t5, {"model": "/m/t5-small", "batch_size": 32})


def test_run_pending_skips_finished_and_reports_failures(benchlib, tmp_path):
    (tmp_path / "done").mkdir()
    (tmp_path / "done" / "result.json").write_text("{}")
    executed = []

    def execute(index):
        executed.append(index)
        if index == 1:
            raise RuntimeError("boom")
        return {"index": index}

    assert benchlib.run_pending(tmp_path, ["done", "bad", "good"], execute, str) == 1
    assert executed == [1, 2]
    assert benchlib.run_pending(tmp_path, ["done"], execute, str) == 0 and executed == [1, 2]


def test_keep_training_record(benchlib, tmp_path):
    for layout, kept in (("flat", ["metrics.jsonl"]), ("staged", ["metrics-stage-1-qa.jsonl",
                                                                  "metrics-stage-2-nli.jsonl"])):
        model_dir, run_dir = tmp_path / layout / "model", tmp_path / layout
        logs = [model_dir / "training"] if layout == "flat" else [model_dir / "training" / s
                                                                  for s in ("stage-1-qa", "stage-2-nli")]
        for number, log in enumerate(logs):
            log.mkdir(parents=True)
            (log / "metrics.jsonl").write_text(f'{{"step": {number}}}\n')
        (model_dir / "train.json").write_text('{"steps": 3}')
        assert benchlib.keep_training_record(model_dir, run_dir, keep_model=False) == {"steps": 3}
        assert not model_dir.exists() and (run_dir / "train.json").exists()
        assert sorted(p.name for p in run_dir.glob("metrics*.jsonl")) == kept
        assert [json.loads((run_dir / name).read_text())["step"] for name in kept] == list(range(len(kept)))


def test_keep_training_record_keeps_the_model_without_its_checkpoints(benchlib, tmp_path):
    model_dir, run_dir = tmp_path / "model", tmp_path
    (model_dir / "training" / "checkpoints" / "step-2").mkdir(parents=True)
    (model_dir / "training" / "metrics.jsonl").write_text('{"step": 2}\n')
    (model_dir / "train.json").write_text('{"steps": 2}')
    (model_dir / "model.safetensors").write_bytes(b"weights")
    assert benchlib.keep_training_record(model_dir, run_dir, keep_model=True) == {"steps": 2}
    assert (model_dir / "model.safetensors").read_bytes() == b"weights"
    assert not (model_dir / "training" / "checkpoints").exists() and (run_dir / "metrics.jsonl").exists()


def test_report_helpers(benchlib, tmp_path):
    assert benchlib.format_mean_std([]) == "–"
    assert benchlib.format_mean_std([], empty="—", count=True) == "—"
    assert benchlib.format_mean_std([71.276], count=True) == "71.28 (1)"
    assert benchlib.format_mean_std([1.0, 2.0, 4.0], count=True) == "2.33 ± 1.53 (3)"  # sample std
    for name in ("runs/a/d/x", "runs/b/d/y", "top"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "result.json").write_text(json.dumps({"name": name}))
    assert [r["name"] for r in benchlib.read_results(tmp_path)] == ["top"]
    assert [r["name"] for r in benchlib.read_results(tmp_path, "runs/*/*/*")] == ["runs/a/d/x", "runs/b/d/y"]
    assert benchlib.shown_path("glove-6B-50d") == "glove-6B-50d"
    assert benchlib.shown_path(str(Path.cwd() / "models" / "m")) == str(Path("models") / "m")
    markdown = benchlib.markdown_of("Title", lambda work_dir: [f"section {work_dir.name}", "", ""])
    assert markdown([Path("a"), Path("b")]) == "# Title\n\nsection a\n\n\nsection b\n"
    with_intro = benchlib.markdown_of("Title", lambda work_dir: [f"section {work_dir.name}", ""], intro="About.")
    assert with_intro([Path("a")]) == "# Title\n\nAbout.\n\nsection a\n"


def test_tsdae_drivers_plan_and_report_on_the_shared_plumbing(monkeypatch, tmp_path, capsys):
    import importlib

    monkeypatch.syspath_prepend(str(REPO / "benchmarks" / "experiments"))
    domain, ablation = importlib.import_module("tsdae_domain"), importlib.import_module("tsdae_ablation")
    work = tmp_path / "w"
    assert domain.main(["run", "--work-dir", str(work), "--model", "m", "--model", "random:m2", "--steps", "5",
                        "--seeds", "0,1", "--domains", "twitterpara", "--methods", "tsdae", "--dry-run"]) == 0
    pending = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in pending] == [str(work / "runs" / p) for p in (
        "bm25/twitterpara/bm25", "m/twitterpara/unadapted", "m/twitterpara/tsdae-steps5-seed0",
        "m/twitterpara/tsdae-steps5-seed1", "random-m2/twitterpara/unadapted-seed0",
        "random-m2/twitterpara/unadapted-seed1", "random-m2/twitterpara/tsdae-steps5-seed0",
        "random-m2/twitterpara/tsdae-steps5-seed1")]
    assert "sentforge train tsdae --model START --corpus CORPUS --no-split --steps 5 --seed 1" in pending[3]
    # fake results in the run layout: the report reads them back through benchlib.read_results
    for name, seed, ap in (("tsdae-steps5-seed0", 0, 60.0), ("tsdae-steps5-seed1", 1, 64.0)):
        run = domain.Run("tsdae_domain", domain.Start.parse("m"), "twitterpara", name, ["TwitterPara"], seed=seed,
                         method="tsdae", steps=5, meta={"setting": "steps5"})
        (work / run.directory).mkdir(parents=True)
        (work / run.directory / "result.json").write_text(json.dumps(
            {"run": run.describe(), "scores": {"TwitterPara": ap, "STSBenchmark-raw": ap + 10}}))
    table = tmp_path / "domain.md"
    assert domain.main(["report", "--work-dir", str(work), "--table", str(table)]) == 0
    text = table.read_text()
    assert "| tsdae | 62.00 ± 2.83 (2) | 72.00 ± 2.83 (2) |" in text and "Start: `m`." in text
    from sentforge.support.errors import OutputExistsError

    with pytest.raises(OutputExistsError, match="already exists"):
        domain.main(["report", "--work-dir", str(work), "--table", str(table)])
    with pytest.raises(SystemExit, match="no results of tsdae_ablation.py"):
        ablation.main(["report", "--work-dir", str(work)])


# --- end to end: a tiny random T5 on tiny data --------------------------------------------------------

SENTENCES = sorted(set(CORPUS))


def write_tiny_data(root: Path) -> tuple[Path, Path, Path]:
    """A data root with an STS-B test file (both layouts) and QA / NLI pair tables."""
    rng = np.random.default_rng(0)
    rows = [f"genre\tfile\t2017\t{i}\t{rng.uniform(0, 5):.2f}\t{a}\t{b}"
            for i, (a, b) in enumerate(zip(SENTENCES, SENTENCES[1:] + SENTENCES[:1]))]
    rows += [f"genre\tfile\t2017\t{100 + i}\t5.0\t{s}\t{s} today" for i, s in enumerate(SENTENCES[:4])]
    for folder in ("senteval/downstream/STS/STSBenchmark", "senteval/downstream/STS/STSBenchmark/stsbenchmark"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "sts-test.csv").write_text("\n".join(rows) + "\n")
    qa, nli = root / "qa.tsv", root / "nli.tsv"
    qa.write_text("sentence1\tsentence2\n" + "".join(f"{s}\t{s} indeed\n" for s in SENTENCES))
    nli.write_text("sentence1\tsentence2\tlabel\n" + "".join(
        f"{s}\t{s} today\tentailment\n{s}\tnothing like {SENTENCES[(i + 3) % len(SENTENCES)]}\tcontradiction\n"
        for i, s in enumerate(SENTENCES)))
    return root, qa, nli


def test_run_end_to_end_resumes_and_reports(st5, tiny_t5_dir, tmp_path, caplog):
    data, qa, nli = write_tiny_data(tmp_path / "data")
    work = tmp_path / "work"
    command = ["run", "--model", str(tiny_t5_dir), "--work-dir", str(work), "--variants", "enc-mean",
               "--settings", "raw,qa-nli", "--stage-steps", "1", "--batch-size", "4", "--projection-dim", "8",
               "--sts-tasks", "STSBenchmark", "--transfer-tasks", "", "--data-dir", str(data), "--qa-data", str(qa),
               "--nli-data", str(nli), "--eval-batch-size", "8"]
    assert st5.main(command) == 0
    raw = json.loads((work / "enc-mean-raw" / "result.json").read_text())
    trained = json.loads((work / "enc-mean-qa-nli-s0" / "result.json").read_text())
    assert raw["dim"] == 32 and trained["dim"] == 8  # raw: no projection; trained: projected
    assert raw["pooling"] == trained["pooling"] == "enc-mean"
    assert [(s["stage"], s["steps"]) for s in trained["stages"]] == [("stage-1-qa", 1), ("stage-2-nli", 1)]
    for result in (raw, trained):
        assert set(result["sts"]) == {"STSBenchmark"} and -100 <= result["sts_avg"] <= 100
        assert 0 <= result["alignment"] <= 4 and result["uniformity"] <= 0
    assert not (work / "enc-mean-qa-nli-s0" / "model").exists()  # weights dropped without --keep-models
    assert (work / "enc-mean-qa-nli-s0" / "metrics-stage-2-nli.jsonl").exists()
    caplog.clear()
    caplog.set_level(logging.INFO, logger="benchlib.drivers")
    assert st5.main(command) == 0  # everything done: skipped
    assert sum("done before, skipped" in record.getMessage() for record in caplog.records) == 2
    with pytest.raises(SystemExit, match="batch_size"):
        st5.main([*command[:-2], "--batch-size", "2"])
    assert st5.main(["report", "--work-dir", str(work), "--table", str(tmp_path / "r.md"), "--plot",
                     str(tmp_path / "r.png")]) == 0
    table = (tmp_path / "r.md").read_text()
    assert f"| enc-mean | {raw['sts_avg']:.2f} | {trained['sts_avg']:.2f} |" in table
