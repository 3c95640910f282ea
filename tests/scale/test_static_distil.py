"""`sentforge.distil_static` / `sentforge distil --static` on the tiny BERT: model2vec's own distillation as the
reference of the plain model, sentence-transformers as the reference of the saved directory, the fit's
folded map checked against the mean it replaces, and the bad inputs."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import CORPUS, run_cli

import sentforge
from sentforge import build_encoder
from sentforge.modules.token_vectors import TokenVectors
from sentforge.scale.static_fit import fit_token_vectors
from sentforge.support.errors import ConfigError

pytest.importorskip("model2vec")
st = pytest.importorskip("sentence_transformers")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

TEXTS = sorted(set(CORPUS)) + ["the cat runs in the park", "my app shows a double invoice"]


@pytest.fixture(scope="module")
def plain(tiny_bert_dir, tmp_path_factory):
    return sentforge.distil_static(str(tiny_bert_dir), tmp_path_factory.mktemp("static") / "plain", pca_dims=16)


def test_plain_static_model_is_model2vecs_distillation(plain, tiny_bert_dir):
    from model2vec.distill import distill

    reference = distill(str(tiny_bert_dir), pca_dims=16, quantize_to="float32")
    ours = plain.encoder.encode(TEXTS)
    assert ours.shape == (len(TEXTS), 16) and plain.fit is None and plain.fitted_texts == 0
    # PCA's sign of each component is the same in both runs: the same vectors, not just the same geometry.
    assert np.abs(ours - reference.encode(TEXTS)).max() < 1e-5


def test_saved_static_model_gives_the_same_vectors_in_sentence_transformers(plain):
    theirs = st.SentenceTransformer(str(plain.path), device="cpu").encode(TEXTS)
    loaded = sentforge.load(str(plain.path))
    assert isinstance(loaded[0], TokenVectors)
    assert np.abs(loaded.encode(TEXTS) - theirs).max() < 1e-6


def test_fit_moves_the_static_model_towards_the_teacher(plain, tiny_bert_dir, tmp_path):
    teacher = build_encoder(tiny_bert_dir)
    # 4 dimensions for 14 texts: the starting least-squares map cannot fit the teacher exactly.
    fitted = sentforge.distil_static(teacher, tmp_path / "fitted", texts=TEXTS, pca_dims=4, epochs=20)
    assert fitted.fitted_texts == len(TEXTS) and fitted.encoder.dim == teacher.dim
    assert fitted.fit.cosine_after > fitted.fit.cosine_before
    targets = teacher.encode(TEXTS, normalize=True)
    cosines = (fitted.encoder.encode(TEXTS, normalize=True) * targets).sum(1)
    assert abs(cosines.mean() - fitted.fit.cosine_after) < 1e-4
    theirs = st.SentenceTransformer(str(fitted.path), device="cpu").encode(TEXTS)
    assert np.abs(sentforge.load(str(fitted.path)).encode(TEXTS) - theirs).max() < 1e-6


def test_folded_map_gives_the_mean_times_the_map(plain):
    """With no step run, the fitted table is the distilled one times the ridge map: each sentence's vector is
    its distilled mean times the map (the mean is linear), and the map is the least-squares one."""
    vectors = plain.encoder[0]
    rng = np.random.default_rng(0)
    targets = rng.normal(size=(len(TEXTS), 5)).astype(np.float32)
    result = fit_token_vectors(vectors, TEXTS, targets, epochs=3, deadline=time.monotonic())
    assert result.steps == 0 and result.vectors.output_dim == 5
    means = sentforge.Encoder([vectors]).encode(TEXTS)  # the distilled mean, before Normalize
    unit = targets / np.linalg.norm(targets, axis=1, keepdims=True)
    gram = means.T @ means
    mapping = np.linalg.solve(gram + 1e-2 * gram.diagonal().mean() * np.eye(len(gram)), means.T @ unit)
    folded = sentforge.Encoder([result.vectors]).encode(TEXTS)
    assert np.allclose(folded, means @ mapping, atol=1e-4)


def test_time_limit_used_up_by_the_distillation_leaves_it_unfitted(tiny_bert_dir, tmp_path):
    result = sentforge.distil_static(str(tiny_bert_dir), tmp_path / "out", texts=TEXTS, pca_dims=8,
                                     time_limit=1e-3)
    assert result.fit is None and result.fitted_texts == 0 and result.encoder.dim == 8


def test_command_line_writes_the_model_and_refuses_bad_input(tiny_bert_dir, tmp_path, capsys):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["distil", "--static", "--model", str(tiny_bert_dir), "-o", str(out), "--pca-dims", "8",
            "--texts", str(texts), "--epochs", "2"]
    code, stdout, _ = run_cli(args, capsys)
    assert code == 0 and f"wrote {out}: 32-dimensional static model, fitted on {len(TEXTS)} texts" in stdout
    code, _, stderr = run_cli(args, capsys)
    assert code == 2 and stderr.startswith("error: ") and "--overwrite" in stderr
    code, _, stderr = run_cli(["distil", "--model", str(tiny_bert_dir), "-o", str(tmp_path / "x")], capsys)
    assert code == 2 and "--static" in stderr and "sentforge train distil" in stderr
    code, _, stderr = run_cli([*args[:5], str(tmp_path / "y"), "--texts", str(tmp_path / "missing.txt")], capsys)
    assert code == 2 and "missing.txt" in stderr and len(stderr.strip().splitlines()) == 1
    assert not (tmp_path / "y").exists()


def test_encoders_without_transformer_and_pooling_are_refused(tiny_bert_dir, tmp_path):
    dense = build_encoder(tiny_bert_dir, projection_dim=8)
    with pytest.raises(ConfigError, match="Transformer -> Pooling -> Projection"):
        sentforge.distil_static(dense, tmp_path / "out")
    with pytest.raises(ConfigError, match="at least 2"):
        sentforge.distil_static(build_encoder(tiny_bert_dir), tmp_path / "out", texts=["one", " ", "one"])


def test_a_saved_static_model_is_fitted_without_distilling_again(plain, tiny_bert_dir, tmp_path):
    teacher = build_encoder(tiny_bert_dir)
    fitted = sentforge.distil_static(teacher, tmp_path / "fitted", texts=TEXTS, start=str(plain.path), epochs=2)
    direct = fit_token_vectors(sentforge.load(str(plain.path))[0], TEXTS, teacher.encode(TEXTS), epochs=2)
    assert np.allclose(fitted.encoder.encode(TEXTS, normalize=True),
                       sentforge.Encoder([direct.vectors]).encode(TEXTS, normalize=True), atol=1e-4)
    with pytest.raises(ConfigError, match="needs the texts"):
        sentforge.distil_static(teacher, tmp_path / "a", start=str(plain.path))
    with pytest.raises(ConfigError, match="must be a static model"):
        sentforge.distil_static(teacher, tmp_path / "b", texts=TEXTS, start=str(tiny_bert_dir))
