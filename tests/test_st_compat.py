"""A directory saved by sentforge loads in sentence-transformers with identical vectors, and back."""

from __future__ import annotations

import numpy as np
import pytest

import sentforge
from sentforge import build_encoder

from conftest import CORPUS

st = pytest.importorskip("sentence_transformers")
pytest.importorskip("sentence_transformers.models")  # a submodule: `st.models` exists only once it is imported


@pytest.mark.parametrize("pooling,projection,normalize",
                         [("mean", None, False), ("cls", 16, True), ("max", None, True)])
def test_sentforge_saved_model_loads_in_sentence_transformers(tiny_bert_dir, tmp_path, pooling, projection, normalize):
    encoder = build_encoder(tiny_bert_dir, pooling=pooling, projection_dim=projection, normalize=normalize)
    encoder.save(tmp_path / "m")
    reference = st.SentenceTransformer(str(tmp_path / "m"), device="cpu")
    theirs = reference.encode(CORPUS, batch_size=7, convert_to_numpy=True)
    np.testing.assert_allclose(encoder.encode(CORPUS, batch_size=7), theirs, atol=1e-5)


def test_sentence_transformers_directory_loads_in_sentforge(tiny_bert_dir, tmp_path):
    transformer = st.models.Transformer(str(tiny_bert_dir), max_seq_length=40)
    pooling = st.models.Pooling(transformer.get_word_embedding_dimension(), "max")
    dense = st.models.Dense(pooling.get_sentence_embedding_dimension(), 12)
    model = st.SentenceTransformer(modules=[transformer, pooling, dense, st.models.Normalize()], device="cpu")
    model.save(str(tmp_path / "st"))
    ours = sentforge.load(tmp_path / "st")
    assert ours.max_seq_length == 40 and ours.dim == 12
    np.testing.assert_allclose(ours.encode(CORPUS), model.encode(CORPUS, convert_to_numpy=True), atol=1e-5)


def test_t5_encoder_saved_by_sentforge_loads_in_sentence_transformers(tiny_t5_dir, tmp_path):
    encoder = build_encoder(tiny_t5_dir, pooling="mean", projection_dim=16, normalize=True)
    encoder.save(tmp_path / "m")
    reference = st.SentenceTransformer(str(tmp_path / "m"), device="cpu")
    np.testing.assert_allclose(encoder.encode(CORPUS), reference.encode(CORPUS, convert_to_numpy=True), atol=1e-5)
