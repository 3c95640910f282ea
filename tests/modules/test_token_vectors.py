"""Static token vectors over any tokenizer (sentence-transformers' StaticEmbedding, model2vec directories):
the same vectors as sentence-transformers, in both directions, and model2vec's weights folded by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import CORPUS
from safetensors.numpy import save_file
from tokenizers import Tokenizer

import sentforge
from sentforge import Encoder
from sentforge.modules import Normalize
from sentforge.modules.token_vectors import TokenVectors
from sentforge.support.errors import ModelFormatError

st = pytest.importorskip("sentence_transformers")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

TEXTS = [*CORPUS[:12], "", "an unknown zebra-word here", "the cat " * 40]


def _tokenizer(tiny_bert_dir) -> Tokenizer:
    return Tokenizer.from_file(str(tiny_bert_dir / "tokenizer.json"))


def _max_one_minus_cos(a: np.ndarray, b: np.ndarray) -> float:
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    nonzero = norms > 0
    assert np.array_equal(nonzero, np.linalg.norm(b, axis=1) > 0)
    return float(np.max(np.abs(1 - (a * b).sum(1)[nonzero] / norms[nonzero])))


def test_sentence_transformers_static_embedding_loads_with_the_same_vectors(tiny_bert_dir, tmp_path):
    from sentence_transformers.models import StaticEmbedding

    torch.manual_seed(0)
    model = st.SentenceTransformer(modules=[StaticEmbedding(_tokenizer(tiny_bert_dir), embedding_dim=16)],
                                   device="cpu")
    model.save(str(tmp_path / "st"))
    ours = sentforge.load(str(tmp_path / "st"))
    assert isinstance(ours[0], TokenVectors) and ours.dim == 16
    reference = model.encode(TEXTS)
    vectors = ours.encode(TEXTS)
    assert np.abs(vectors - reference).max() < 1e-6
    assert not vectors[TEXTS.index("")].any()  # no tokens: the zero vector, as an empty EmbeddingBag gives


def test_sentforge_token_vectors_load_in_sentence_transformers(tiny_bert_dir, tmp_path):
    tokenizer = _tokenizer(tiny_bert_dir)
    table = np.random.default_rng(0).normal(size=(tokenizer.get_vocab_size(), 8)).astype(np.float32)
    ours = Encoder([TokenVectors(tokenizer, table), Normalize()])
    ours.save(tmp_path / "ours")
    modules = json.loads((tmp_path / "ours" / "modules.json").read_text())
    assert [m["type"] for m in modules] == ["sentence_transformers.models.StaticEmbedding",
                                            "sentence_transformers.models.Normalize"]
    theirs = st.SentenceTransformer(str(tmp_path / "ours"), device="cpu").encode(TEXTS[:-3] + TEXTS[-2:])
    assert _max_one_minus_cos(ours.encode(TEXTS[:-3] + TEXTS[-2:]), theirs) < 1e-6
    # The mean, computed by hand from the token ids.
    ids = tokenizer.encode(TEXTS[0], add_special_tokens=False).ids
    expected = table[ids].mean(0)
    assert np.allclose(ours.encode(TEXTS[0]), expected / np.linalg.norm(expected), atol=1e-6)
    assert np.allclose(sentforge.load(str(tmp_path / "ours")).encode(TEXTS), ours.encode(TEXTS), atol=1e-7)


def test_training_moves_the_token_vectors(tiny_bert_dir):
    tokenizer = _tokenizer(tiny_bert_dir)
    table = np.random.default_rng(0).normal(size=(tokenizer.get_vocab_size(), 8)).astype(np.float32)
    encoder = Encoder([TokenVectors(tokenizer, table)])
    batch = list(CORPUS[:4])
    encoder.embed(batch).sum().backward()
    assert encoder[0].embedding.weight.grad.abs().sum() > 0
    assert torch.allclose(encoder.embed(batch), torch.from_numpy(encoder.encode(batch)), atol=1e-6)


def _model2vec_dir(tiny_bert_dir, path, tensors: dict[str, np.ndarray]) -> None:
    """A directory as model2vec's save_pretrained writes it: `embeddings` (and a row mapping and per-token
    weights when vocabulary-quantized), the tokenizer, config.json, and modules.json with a Normalize."""
    path.mkdir()
    save_file(tensors, str(path / "model.safetensors"))
    _tokenizer(tiny_bert_dir).save(str(path / "tokenizer.json"))
    (path / "config.json").write_text(json.dumps({"model_type": "model2vec", "normalize": True}))
    (path / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": ".", "type": "sentence_transformers.models.StaticEmbedding"},
        {"idx": 1, "name": "1", "path": "1_Normalize", "type": "sentence_transformers.models.Normalize"}]))


def test_model2vec_directories_load_with_mapping_and_weights_folded(tiny_bert_dir, tmp_path):
    tokenizer = _tokenizer(tiny_bert_dir)
    vocab = tokenizer.get_vocab_size()
    rng = np.random.default_rng(1)
    clusters = rng.normal(size=(5, 6)).astype(np.float32)
    mapping = rng.integers(0, 5, size=vocab).astype(np.int64)
    weights = rng.uniform(0.5, 2.0, size=vocab).astype(np.float32)
    _model2vec_dir(tiny_bert_dir, tmp_path / "m2v", {"embeddings": clusters, "mapping": mapping, "weights": weights})
    ours = sentforge.load(str(tmp_path / "m2v"))
    for text in TEXTS[:3]:
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        expected = (clusters[mapping[ids]] * weights[ids, None]).mean(0)
        assert np.allclose(ours.encode(text), expected / np.linalg.norm(expected), atol=1e-6)
    theirs = st.SentenceTransformer(str(tmp_path / "m2v"), device="cpu").encode(TEXTS[:12])
    assert _max_one_minus_cos(ours.encode(TEXTS[:12]), theirs) < 1e-6


def test_a_weights_file_without_vectors_is_named(tiny_bert_dir, tmp_path):
    _model2vec_dir(tiny_bert_dir, tmp_path / "bad", {"something": np.zeros((3, 2), np.float32)})
    with pytest.raises(ModelFormatError, match=r"model\.safetensors: expected a 'embedding\.weight' or 'embeddings'"):
        sentforge.load(str(tmp_path / "bad"))
    with pytest.raises(ModelFormatError, match="do not cover the tokenizer"):
        TokenVectors(_tokenizer(tiny_bert_dir), np.zeros((3, 2), np.float32))


def test_a_static_model_encodes_on_one_thread_and_leaves_the_thread_setting_as_it_was(tiny_bert_dir):
    tokenizer = _tokenizer(tiny_bert_dir)
    table = np.random.default_rng(0).normal(size=(tokenizer.get_vocab_size(), 8)).astype(np.float32)
    static, transformer = Encoder([TokenVectors(tokenizer, table)]), sentforge.load(tiny_bert_dir)
    for encoder in (static, transformer):
        encoder.append(Normalize())
    seen = []
    original = torch.nn.functional.normalize

    def recording(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    torch.set_num_threads(2)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(torch.nn.functional, "normalize", recording)
            vectors = static.encode(TEXTS[:4])
            assert seen and set(seen) == {1} and torch.get_num_threads() == 2
            seen.clear()
            transformer.encode(TEXTS[:4])  # a transformer's pipeline keeps the threads it is given
            assert seen and set(seen) == {2}
    finally:
        torch.set_num_threads(1)
    ids = tokenizer.encode(TEXTS[0], add_special_tokens=False).ids
    mean = table[ids].mean(0)
    assert np.allclose(vectors[0], mean / np.linalg.norm(mean), atol=1e-6)
