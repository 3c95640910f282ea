"""`sentforge meta fit` and `sentforge meta ablate` on tiny members, a tiny corpus and a tiny STS folder."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import CORPUS, assert_one_line_error, run_cli

import sentforge
from sentforge.meta import MetaEncoder

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TEXTS = ["a man is playing a guitar", "the cat sat on the mat", "a dog runs"]


@pytest.fixture()
def setup(tmp_path, tiny_bert_dir):
    rng = np.random.default_rng(0)
    words = sorted({w for text in CORPUS for w in text.split()})
    (tmp_path / "glove.txt").write_text(
        "\n".join(w + " " + " ".join(f"{x:.4f}" for x in rng.normal(size=5)) for w in words) + "\n", encoding="utf-8")
    (tmp_path / "corpus.txt").write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    members = [str(tiny_bert_dir), f"glove:{tmp_path / 'glove.txt'}"]
    return tmp_path, members


def _member_args(members):
    return [arg for spec in members for arg in ("--member", spec)]


def test_meta_fit_saves_an_encoder_equal_to_the_library_fit(setup, capsys):
    tmp_path, members = setup
    out = tmp_path / "meta"
    code, stdout, _ = run_cli(["meta", "fit", *_member_args(members), "--method", "gcca", "--dim", "6", "--tau", "0.2",
                               "--corpus", tmp_path / "corpus.txt", "--output", out, "--cache-dir", tmp_path / "cache"],
                              capsys)
    assert code in (0, None) and "dimension 6" in stdout
    assert any((tmp_path / "cache").glob("*.npy"))
    loaded = MetaEncoder.load(out)
    expected = MetaEncoder([sentforge.load(s) for s in members], "gcca", dim=6, tau=0.2).fit(CORPUS)
    np.testing.assert_allclose(loaded.encode(TEXTS), expected.encode(TEXTS), atol=1e-5)
    # an existing output needs --overwrite
    code, _, err = run_cli(["meta", "fit", *_member_args(members), "--method", "concat", "--corpus",
                            tmp_path / "corpus.txt", "--output", out, "--no-cache"], capsys)
    assert_one_line_error(code, err, "not empty", "--overwrite")


def test_meta_fit_autoencoder_options_reach_the_method(setup, capsys):
    tmp_path, members = setup
    out = tmp_path / "ae"
    code, _, _ = run_cli(["meta", "fit", *_member_args(members), "--method", "autoencoder", "--dim", "4",
                          "--ae-loss", "cos2", "--ae-hidden", "1", "--ae-epochs", "3", "--ae-batch-size", "16",
                          "--seed", "5", "--corpus", tmp_path / "corpus.txt", "--output", out, "--no-cache",
                          "--embed-members"], capsys)
    assert code in (0, None)
    config = json.loads((out / "meta_encoder.json").read_text())
    assert config["method"]["params"] == {"dim": 4, "hidden_layers": 1, "loss": "cos2", "epochs": 3,
                                              "batch_size": 16, "lr": 1e-3, "hidden_dim": None, "seed": 5}
    assert (out / "members" / "1" / "modules.json").is_file()
    assert MetaEncoder.load(out).encode(TEXTS).shape == (3, 4)


def test_meta_fit_bad_input_is_one_line(setup, capsys):
    tmp_path, members = setup
    code, _, err = run_cli(["meta", "fit", *_member_args(members), "--method", "pca", "--corpus",
                            tmp_path / "corpus.txt", "--output", tmp_path / "x"], capsys)
    assert_one_line_error(code, err, "unknown meta-embedding method", "gcca")
    code, _, err = run_cli(["meta", "fit", *_member_args(members), "--corpus", tmp_path / "missing.txt",
                            "--output", tmp_path / "x"], capsys)
    assert_one_line_error(code, err, "missing.txt")
    code, _, err = run_cli(["meta", "fit", *_member_args(members), "--method", "svd", "--dim", "500", "--corpus",
                            tmp_path / "corpus.txt", "--output", tmp_path / "x", "--no-cache"], capsys)
    assert_one_line_error(code, err, "dim=500")
    code, _, err = run_cli(["meta", "fit", "--member", tmp_path / "no-model", "--corpus", tmp_path / "corpus.txt",
                            "--output", tmp_path / "x"], capsys)
    assert_one_line_error(code, err, "no-model")
    assert not (tmp_path / "x").exists()


def _write_sts(root, pairs, scores):
    """A SentEval-layout STS Benchmark test file (the only file the STSBenchmark task reads)."""
    folder = root / "senteval" / "downstream" / "STS" / "STSBenchmark"
    folder.mkdir(parents=True)
    rows = [f"main-captions\tMSRvid\t2012test\t{i:04d}\t{s:.3f}\t{a}\t{b}" for i, ((a, b), s) in
            enumerate(zip(pairs, scores))]
    (folder / "sts-test.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_meta_ablate_leaves_each_member_out(setup, capsys):
    tmp_path, members = setup
    pairs = [(CORPUS[i], CORPUS[j]) for i in range(12) for j in range(i, 12, 3)]
    scores = [5.0 if a == b else float((len(a) + len(b)) % 5) for a, b in pairs]
    _write_sts(tmp_path / "data", pairs, scores)
    out = tmp_path / "ablation.json"
    code, stdout, _ = run_cli(["meta", "ablate", *_member_args(members), "--method", "svd", "--dim", "30",
                               "--corpus", tmp_path / "corpus.txt", "--tasks", "STSBenchmark",
                               "--data-dir", tmp_path / "data", "--output", out, "--no-cache"], capsys)
    assert code in (0, None)
    report = json.loads(out.read_text())
    assert [row["ensemble"] for row in report["rows"]] == ["all members", f"without {members[0]}",
                                                           f"without {members[1]}"]
    # a subset's d is capped at its members' total dimension (32 + 5 for all, 5 and 32 alone)
    assert [row["dim"] for row in report["rows"]] == [30, 5, 30]
    # the "without bert" row is the glove member alone: its score equals SVD of that member, computed here
    from sentforge.evaluation.runner import evaluate
    from sentforge.meta import method_class

    glove = sentforge.load(members[1])
    alone = MetaEncoder([glove], method_class("svd")(dim=5).fit([glove.encode(CORPUS)]))
    expected = evaluate(alone, "STSBenchmark", data_dir=tmp_path / "data")["tasks"]["STSBenchmark"]["main_score"]
    assert report["rows"][1]["scores"]["STSBenchmark"] == pytest.approx(expected, abs=1e-6)
    assert "without" in stdout and (tmp_path / "ablation.md").is_file()
    code, _, err = run_cli(["meta", "ablate", "--member", members[0], "--corpus", tmp_path / "corpus.txt",
                            "--data-dir", tmp_path / "data", "--output", tmp_path / "b.json"], capsys)
    assert_one_line_error(code, err, "at least 2 members")


def test_ablate_meta_encoder_writes_the_report_of_meta_ablate(setup, capsys):
    from sentforge.evaluation.meta_ablation import ablate_meta_encoder

    tmp_path, members = setup
    pairs = [(CORPUS[i], CORPUS[j]) for i in range(12) for j in range(i, 12, 3)]
    _write_sts(tmp_path / "data", pairs, [float((len(a) + len(b)) % 5) for a, b in pairs])
    code, _, err = run_cli(["meta", "ablate", *_member_args(members), "--method", "svd", "--dim", "30",
                            "--corpus", tmp_path / "corpus.txt", "--tasks", "STSBenchmark", "--data-dir",
                            tmp_path / "data", "--output", tmp_path / "cli.json", "--no-cache"], capsys)
    assert code in (0, None), err
    report = ablate_meta_encoder(members, "svd", [tmp_path / "corpus.txt"], tmp_path / "python.json",
                                 params={"dim": 30}, tasks="STSBenchmark", data_dir=tmp_path / "data")
    written = json.loads((tmp_path / "python.json").read_text())
    assert written == json.loads((tmp_path / "cli.json").read_text())
    assert written["rows"] == report["rows"]
    assert (tmp_path / "python.md").read_text() == (tmp_path / "cli.md").read_text()
