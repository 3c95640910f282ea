"""The one model-spec resolver (`sentforge.load`): MetaEncoder directories, `bm25`, and errors that list the
accepted specs; every command resolves `--model` through it (`sentforge eval --model <MetaEncoder dir>`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import CORPUS, assert_one_line_error, run_cli
from scipy.stats import spearmanr

import sentforge
from sentforge.baselines import BM25Scorer
from sentforge.support.errors import ConfigError, ModelFormatError, ModelNotFoundError
from sentforge.meta import MetaEncoder

pytestmark = pytest.mark.usefixtures("one_torch_thread")

STSB_RAW = "senteval/downstream/STS/STSBenchmark/stsbenchmark/sts-test.csv"
PAIRS = [("the cat sat on the mat", "a cat is sitting on a mat", 4.6), ("a dog runs", "the sun shines", 0.4),
         ("a man is playing a guitar", "someone plays music", 3.8), ("it is raining", "a man is playing a guitar", 0.2),
         ("the sun shines", "it is sunny", 4.1)]


@pytest.fixture()
def meta_dir(tmp_path, tiny_bert_dir):
    """A MetaEncoder as `sentforge meta fit` writes it: members by reference (a model directory, a GloVe file)."""
    rng = np.random.default_rng(0)
    words = sorted({w for text in CORPUS for w in text.split()})
    glove = tmp_path / "glove.txt"
    glove.write_text("\n".join(w + " " + " ".join(f"{x:.4f}" for x in rng.normal(size=5)) for w in words) + "\n",
                     encoding="utf-8")
    members = [sentforge.load(tiny_bert_dir), sentforge.load(f"glove:{glove}")]
    MetaEncoder(members, "svd", dim=6).fit(CORPUS).save(tmp_path / "meta")
    return tmp_path / "meta"


def test_load_resolves_a_meta_encoder_directory(meta_dir):
    loaded = sentforge.load(meta_dir)
    assert isinstance(loaded, MetaEncoder) and loaded.dim == 6
    np.testing.assert_array_equal(loaded.encode(CORPUS[:4]), MetaEncoder.load(meta_dir).encode(CORPUS[:4]))


def test_eval_cli_takes_a_meta_encoder_directory(meta_dir, tmp_path, capsys):
    data = tmp_path / "data"
    (data / STSB_RAW).parent.mkdir(parents=True)
    (data / STSB_RAW).write_text("".join(f"g\tf\t2012\t{i}\t{s}\t{a}\t{b}\n" for i, (a, b, s) in enumerate(PAIRS)),
                                 encoding="utf-8")
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli(["eval", "--model", meta_dir, "--tasks", "STSBenchmark-raw", "--data-dir", data,
                               "--output", out], capsys)
    assert code in (0, None) and "STSBenchmark-raw" in stdout
    report = json.loads(out.read_text())
    # independent: Spearman of the cosines of the MetaEncoder's own vectors, computed here
    meta = MetaEncoder.load(meta_dir)
    first, second = (meta.encode([pair[side] for pair in PAIRS]).astype(np.float64) for side in (0, 1))
    cosines = np.sum(first * second, axis=1) / np.linalg.norm(first, axis=1) / np.linalg.norm(second, axis=1)
    expected = 100 * spearmanr(cosines, [s for _, _, s in PAIRS])[0]
    assert report["model"] == str(meta_dir)
    assert report["tasks"]["STSBenchmark-raw"]["main_score"] == pytest.approx(expected, abs=1e-6)


def test_bm25_is_a_spec_for_evaluation_only(tmp_path, capsys):
    assert isinstance(sentforge.load("bm25", allow_lexical=True), BM25Scorer)
    with pytest.raises(ConfigError, match="lexical BM25 baseline.*no vectors.*Accepted here: .*MetaEncoder directory"):
        sentforge.load("bm25")
    (tmp_path / "texts.txt").write_text("a text\n", encoding="utf-8")
    code, _, err = run_cli(["encode", tmp_path / "texts.txt", "--model", "bm25",
                            "--output", tmp_path / "v.npy"], capsys)
    assert_one_line_error(code, err, "'bm25'", "no vectors")
    assert not (tmp_path / "v.npy").exists()


def test_unknown_specs_list_every_accepted_kind(tmp_path):
    for spec in ("./no-such-dir", "no-such-org/no-such-model-xyz"):
        with pytest.raises(ModelNotFoundError) as error:
            sentforge.load(spec)
        for kind in ("model directory", "MetaEncoder directory", "glove:FILE", "all-MiniLM-L6-v2", "'bm25'", "hub id"):
            assert kind in str(error.value), (spec, kind)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelFormatError, match="modules.json.*meta_encoder.json.*config.json"):
        sentforge.load(tmp_path / "empty")


def test_encode_cli_takes_a_meta_encoder_directory_and_names_a_lost_member(meta_dir, tmp_path, capsys):
    (tmp_path / "texts.txt").write_text("\n".join(CORPUS[:3]) + "\n", encoding="utf-8")
    args = ["encode", tmp_path / "texts.txt", "--model", meta_dir]
    code, _, _ = run_cli([*args, "--output", tmp_path / "v.npy"], capsys)
    assert code in (0, None)
    np.testing.assert_allclose(np.load(tmp_path / "v.npy"), MetaEncoder.load(meta_dir).encode(CORPUS[:3]), atol=1e-6)
    (tmp_path / "glove.txt").unlink()
    code, _, err = run_cli([*args, "--output", tmp_path / "w.npy"], capsys)
    assert_one_line_error(code, err, "member 1", "glove:")
