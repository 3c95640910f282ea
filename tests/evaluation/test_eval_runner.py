"""The evaluation runner and `sentforge eval`: registry and selection errors, skipping tasks whose data
is missing (or failing with --strict), one encoding pass per distinct text, JSON + Markdown output."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from sentforge.support.errors import ConfigError, DataNotFoundError, OutputExistsError
from sentforge.evaluation import CachedEncoder, Task, TaskMetadata, evaluate, register_task, resolve_tasks
from sentforge.evaluation.runner import resolve_data_dir
from sentforge.specs.external import CallableEncoder

from conftest import assert_one_line_error, run_cli

STSB_RAW = "senteval/downstream/STS/STSBenchmark/stsbenchmark/sts-test.csv"
STSB_PROCESSED = "senteval/downstream/STS/STSBenchmark/sts-test.csv"
ROWS = [("A man plays a guitar.", "A man is playing guitar.", 4.8), ("A dog runs.", "A cat sleeps.", 0.6),
        ("Kids play football.", "Children are playing soccer.", 4.2), ("It rains.", "The sun is out.", 1.0),
        ("A woman cooks.", "A woman is cooking food.", 4.5)]


class CountingEncoder(CallableEncoder):
    """Deterministic bag-of-characters vectors; counts how often each text reaches the model."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        super().__init__(self._vectors, name="counting", dim=26)

    def _vectors(self, texts: list[str]) -> np.ndarray:
        for text in texts:
            self.calls[text] = self.calls.get(text, 0) + 1
        return np.stack([np.bincount([ord(c) - 97 for c in t.lower() if "a" <= c <= "z"], minlength=26)
                         for t in texts]).astype(np.float32) + 0.1


def write_stsb(root: Path, relative: str, rows=ROWS, lower: bool = False) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    fix = str.lower if lower else str
    path.write_text("".join(f"main-news\tMSRpar\t2012\t{i:04d}\t{s:.3f}\t{fix(a)}\t{fix(b)}\n"
                            for i, (a, b, s) in enumerate(rows)), encoding="utf-8")
    return path


@pytest.fixture
def data_dir(tmp_path) -> Path:
    root = tmp_path / "data"
    write_stsb(root, STSB_RAW)
    write_stsb(root, STSB_PROCESSED, lower=True)
    return root


def test_resolve_families_names_and_errors():
    names = [cls.metadata.name for cls in resolve_tasks("sts")]
    assert {"STS12", "STS16", "STS12-raw", "STSBenchmark", "STSBenchmark-raw", "SICKRelatedness"} <= set(names)
    assert [cls.metadata.name for cls in resolve_tasks(" stsbenchmark-RAW , geometry,STSBenchmark-raw")] == \
        ["STSBenchmark-raw", "AlignmentUniformity"]
    with pytest.raises(ConfigError, match=r"unknown task 'STS17'; did you mean STS16.*"
                                          r"valid families and tasks: .*STS12.*STSBenchmark-raw"):
        resolve_tasks("sts,STS17")
    with pytest.raises(ConfigError, match="no tasks selected"):
        resolve_tasks(" , ")


def test_registering_two_tasks_with_one_name_fails():
    metadata = TaskMetadata(name="STS12", family="sts", main_metric="x", description="", files=())

    class Clash(Task):
        def evaluate(self, encoder):
            return {"x": 0.0}

    Clash.metadata = metadata
    with pytest.raises(ConfigError, match="two tasks are named 'STS12'"):
        register_task(Clash)
    with pytest.raises(ConfigError, match="unknown family"):
        TaskMetadata(name="t", family="nope", main_metric="x", description="", files=())


def test_cached_encoder_encodes_each_text_once_and_keeps_order():
    base = CountingEncoder()
    cache = CachedEncoder(base, batch_size=2)
    cache.warm(["b", "a", "b"])
    first = cache.encode(["a", "c", "a"])
    np.testing.assert_array_equal(first, base._vectors(["a", "c", "a"]))
    assert cache.encode([]).shape == (0, 26)
    normed = cache.encode(["a", "c"], normalize=True)
    np.testing.assert_allclose(np.linalg.norm(normed, axis=1), 1.0, rtol=1e-6)
    assert base.calls == {"a": 3, "b": 1, "c": 2}  # 1 each through the cache, +2 "a" / +1 "c" from the check above
    assert len(cache) == 3


def test_evaluate_skips_missing_tasks_encodes_once_and_writes_reports(data_dir, tmp_path, caplog):
    encoder = CountingEncoder()
    output = tmp_path / "out" / "results.json"
    with caplog.at_level(logging.WARNING, logger="sentforge"):
        report = evaluate(encoder, "STS12,STSBenchmark,STSBenchmark-raw,geometry", data_dir=data_dir, output=output)
    assert any("skipping task STS12: missing" in r.getMessage() and "STS.input.MSRpar.txt" in r.getMessage()
               for r in caplog.records)
    assert list(report["tasks"]) == ["STSBenchmark", "STSBenchmark-raw", "AlignmentUniformity"]
    assert "STS12" in report["skipped"]
    # STSBenchmark-raw and the geometry task read the same sentences: each distinct text reaches the model once.
    distinct = {t for a, b, _ in ROWS for t in (a, b, a.lower(), b.lower())}
    assert set(encoder.calls) == distinct and set(encoder.calls.values()) == {1}
    assert report["timing"]["distinct_texts_encoded"] == len(distinct)

    from scipy.stats import spearmanr
    vectors = encoder._vectors
    cosines = [float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))
               for u, v in zip(vectors([a for a, _, _ in ROWS]), vectors([b for _, b, _ in ROWS]))]
    expected = 100 * spearmanr(cosines, [s for *_, s in ROWS])[0]
    assert report["tasks"]["STSBenchmark-raw"]["main_score"] == pytest.approx(expected)

    saved = json.loads(output.read_text())
    assert saved["tasks"]["STSBenchmark-raw"]["metrics"]["spearman"] == pytest.approx(expected)
    # STSBenchmark-raw is a variant of STSBenchmark: the family mean counts the data set once.
    assert saved["tasks"]["STSBenchmark-raw"]["variant_of"] == "STSBenchmark"
    assert saved["families"]["sts"] == {"mean_main_score": pytest.approx(saved["tasks"]["STSBenchmark"]["main_score"]),
                                        "n_tasks": 1}
    markdown = output.with_suffix(".md").read_text()
    assert f"| STSBenchmark-raw | sts | spearman | {expected:.2f} |" in markdown
    assert "- STS12: missing" in markdown and "### AlignmentUniformity" in markdown

    with pytest.raises(OutputExistsError, match="results.json already exists"):
        evaluate(encoder, "STSBenchmark", data_dir=data_dir, output=output)
    evaluate(encoder, "STSBenchmark", data_dir=data_dir, output=output, overwrite=True)
    assert list(json.loads(output.read_text())["tasks"]) == ["STSBenchmark"]


def test_strict_missing_data_and_nothing_runnable(data_dir):
    with pytest.raises(DataNotFoundError, match=r"task STS13: missing .*STS.input.FNWN.txt"):
        evaluate(CountingEncoder(), "STSBenchmark,STS13", data_dir=data_dir, strict=True)
    with pytest.raises(DataNotFoundError, match="none of the selected tasks can run"):
        evaluate(CountingEncoder(), "STS14,SICKRelatedness", data_dir=data_dir)
    # BM25 scores texts itself and has no `encode`: the STS tasks do not apply to it.
    with pytest.raises(DataNotFoundError, match="STSBenchmark: does not apply to bm25"):
        evaluate("bm25", "STSBenchmark", data_dir=data_dir)


def test_data_dir_from_environment(data_dir, monkeypatch, tmp_path):
    monkeypatch.delenv("SENTFORGE_DATA", raising=False)
    with pytest.raises(ConfigError, match="pass data_dir= \\(--data-dir DIR\\) or set SENTFORGE_DATA"):
        resolve_data_dir(None)
    monkeypatch.setenv("SENTFORGE_DATA", str(data_dir))
    assert resolve_data_dir(None) == data_dir
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_data_dir(tmp_path / "nowhere")


def test_cli_eval_runs_and_reports_bad_input(tiny_bert_dir, data_dir, tmp_path, capsys):
    output = tmp_path / "r.json"
    common = ["--model", tiny_bert_dir, "--data-dir", data_dir]
    code, out, _ = run_cli(["eval", *common, "--tasks", "STSBenchmark-raw,STS15", "--output", output], capsys)
    assert code in (0, None)
    assert "STSBenchmark-raw" in out and "STS15" in out and "skipped" in out
    assert json.loads(output.read_text())["tasks"]["STSBenchmark-raw"]["metrics"]["n"] == len(ROWS)
    assert output.with_suffix(".md").exists()

    code, _, err = run_cli(["eval", *common, "--tasks", "sts,STS99", "--output", tmp_path / "a.json"], capsys)
    assert_one_line_error(code, err, "unknown task 'STS99'", "valid families and tasks:", "STS12", "geometry")

    code, _, err = run_cli(["eval", *common, "--tasks", "STS12", "--strict", "--output", tmp_path / "b.json"], capsys)
    assert_one_line_error(code, err, "task STS12: missing", "STS.input.MSRpar.txt")

    bad = tmp_path / "bad"
    write_stsb(bad, STSB_RAW)
    with open(bad / STSB_RAW, "a", encoding="utf-8") as handle:
        handle.write("main-news\tMSRpar\t2012\t0009\tfive\tOne.\tTwo.\n")
    code, _, err = run_cli(["eval", "--model", tiny_bert_dir, "--data-dir", bad, "--tasks", "STSBenchmark-raw",
                            "--output", tmp_path / "c.json"], capsys)
    assert_one_line_error(code, err, "sts-test.csv, line 6", "'five' is not a number")
    assert not (tmp_path / "c.json").exists()

    code, _, err = run_cli(["eval", *common, "--tasks", "sts", "--output", tmp_path / "d.txt"], capsys)
    assert_one_line_error(code, err, "ending in .json")


def test_family_means_count_a_variant_only_without_its_original():
    from sentforge.evaluation.runner import family_averages

    entry = {"family": "sts", "main_score": 80.0}
    both = {"STS12": entry, "STS12-raw": {**entry, "main_score": 70.0, "variant_of": "STS12"},
            "STSBenchmark-raw": {**entry, "main_score": 60.0, "variant_of": "STSBenchmark"}}
    assert family_averages(both) == {"sts": {"mean_main_score": 70.0, "n_tasks": 2}}
