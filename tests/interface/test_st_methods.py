"""The SentenceTransformer model interface of `Encoder`: on the same directory, sentforge and
sentence-transformers give the same similarities, query/document vectors, sizes and settings (1e-6), and
`similarity_fn_name` and `truncate_dim` survive a save in either library and a load in the other."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch

import sentforge
from sentforge import build_encoder
from sentforge.support.errors import ConfigError, ModelFormatError

from conftest import CORPUS

st = pytest.importorskip("sentence_transformers")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TEXTS = CORPUS[:12]
PROMPTS = {"query": "query: ", "document": "passage: ", "classification": "classify: "}


def save_both_ways(encoder, path):
    """The encoder saved by sentforge, and that directory loaded by both libraries."""
    encoder.save(path)
    return sentforge.load(path), st.SentenceTransformer(str(path), device="cpu")


@pytest.fixture()
def tiny_encoder(tiny_bert_dir):
    return build_encoder(tiny_bert_dir, pooling="mean", projection_dim=16)


@pytest.mark.parametrize("fn_name", ["cosine", "dot", "euclidean", "manhattan"])
def test_similarity_equals_sentence_transformers(tiny_encoder, tmp_path, fn_name):
    tiny_encoder.similarity_fn_name = fn_name
    ours, theirs = save_both_ways(tiny_encoder, tmp_path / "m")
    assert ours.similarity_fn_name == theirs.similarity_fn_name == fn_name
    assert f"- **Similarity function:** {fn_name}" in (tmp_path / "m" / "README.md").read_text(encoding="utf-8")
    queries, documents = theirs.encode(TEXTS[:5]), theirs.encode(TEXTS[5:])
    for a, b in [(queries, documents), (torch.from_numpy(queries), list(torch.from_numpy(documents))),
                 (queries[0], documents)]:
        expected = theirs.similarity(a, b)
        got = ours.similarity(a, b)
        assert isinstance(got, torch.Tensor) and got.shape == expected.shape
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)
    pairwise = ours.similarity_pairwise(queries, documents[:5])
    assert pairwise.shape == (5,)
    torch.testing.assert_close(pairwise, theirs.similarity_pairwise(queries, documents[:5]), atol=1e-6, rtol=0)
    if fn_name in ("euclidean", "manhattan"):  # negative distances, as in sentence-transformers
        assert (ours.similarity(queries, documents) <= 0).all()


def test_similarity_of_half_precision_vectors_is_computed_in_float32(tiny_encoder, tmp_path):
    ours, theirs = save_both_ways(tiny_encoder, tmp_path / "m")
    vectors = torch.from_numpy(theirs.encode(TEXTS)).half()
    assert ours.similarity(vectors, vectors).dtype == torch.float32
    torch.testing.assert_close(ours.similarity(vectors, vectors), theirs.similarity(vectors, vectors))


def test_similarity_fn_name_set_in_sentence_transformers_loads_in_sentforge(tiny_encoder, tmp_path):
    tiny_encoder.save(tmp_path / "m")
    theirs = st.SentenceTransformer(str(tmp_path / "m"), device="cpu")
    theirs.similarity_fn_name = "manhattan"
    theirs.save(str(tmp_path / "st"))
    assert sentforge.load(tmp_path / "st").similarity_fn_name == "manhattan"
    sentforge.load(tmp_path / "st").save(tmp_path / "again")
    assert st.SentenceTransformer(str(tmp_path / "again"), device="cpu").similarity_fn_name == "manhattan"


def test_similarity_fn_name_accepts_sentence_transformers_enum_and_refuses_unknown_names(tiny_encoder):
    tiny_encoder.similarity_fn_name = st.SimilarityFunction.DOT_PRODUCT
    assert tiny_encoder.similarity_fn_name == "dot"
    with pytest.raises(ConfigError, match="similarity_fn_name must be one of cosine, dot, euclidean, manhattan"):
        tiny_encoder.similarity_fn_name = "maxsim"


def test_an_unknown_saved_similarity_function_is_a_model_format_error(tiny_encoder, tmp_path):
    tiny_encoder.save(tmp_path / "m")
    config_file = tmp_path / "m" / "config_sentence_transformers.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config_file.write_text(json.dumps({**config, "similarity_fn_name": "hamming"}), encoding="utf-8")
    with pytest.raises(ModelFormatError, match="config_sentence_transformers.json: similarity_fn_name must be"):
        sentforge.load(tmp_path / "m")


def test_encode_query_and_document_use_the_saved_prompts_as_sentence_transformers(tiny_bert_dir, tmp_path):
    encoder = build_encoder(tiny_bert_dir, pooling="mean")
    encoder.prompts, encoder.default_prompt_name = PROMPTS, "classification"
    ours, theirs = save_both_ways(encoder, tmp_path / "m")
    for method in ("encode_query", "encode_document", "encode"):
        expected = getattr(theirs, method)(TEXTS)
        np.testing.assert_allclose(getattr(ours, method)(TEXTS), expected, atol=1e-6, rtol=0)
    # The explicit keywords win over the method's prompt, as there.
    np.testing.assert_allclose(ours.encode_query(TEXTS, prompt_name="document"),
                               theirs.encode_query(TEXTS, prompt_name="document"), atol=1e-6, rtol=0)
    np.testing.assert_allclose(ours.encode_document(TEXTS, prompt="search: "),
                               theirs.encode_document(TEXTS, prompt="search: "), atol=1e-6, rtol=0)
    assert not np.allclose(ours.encode_query(TEXTS), ours.encode_document(TEXTS))


def test_a_model_without_query_prompt_encodes_queries_without_the_default_prompt(tiny_bert_dir, tmp_path):
    encoder = build_encoder(tiny_bert_dir, pooling="mean")
    encoder.prompts, encoder.default_prompt_name = {"classification": "classify: "}, "classification"
    ours, theirs = save_both_ways(encoder, tmp_path / "m")
    np.testing.assert_allclose(ours.encode_query(TEXTS), theirs.encode_query(TEXTS), atol=1e-6, rtol=0)
    np.testing.assert_allclose(ours.encode_query(TEXTS), ours.encode(TEXTS, prompt=""), atol=0, rtol=0)


def test_sizes_and_max_seq_length_equal_sentence_transformers(tiny_encoder, tmp_path):
    ours, theirs = save_both_ways(tiny_encoder, tmp_path / "m")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # sentence-transformers 6 renamed it get_embedding_dimension
        assert ours.get_sentence_embedding_dimension() == theirs.get_sentence_embedding_dimension() == 16
    assert ours.get_embedding_dimension() == 16
    assert ours.max_seq_length == theirs.max_seq_length == ours.get_max_seq_length() == theirs.get_max_seq_length()
    ours.max_seq_length = theirs.max_seq_length = 5
    np.testing.assert_allclose(ours.encode(TEXTS), theirs.encode(TEXTS), atol=1e-6, rtol=0)
    assert len(ours) == len(theirs) == 3 and type(ours[1]).__name__ == type(theirs[1]).__name__ == "Pooling"


def test_tokenize_and_tokenizer_equal_sentence_transformers(tiny_encoder, tmp_path):
    ours, theirs = save_both_ways(tiny_encoder, tmp_path / "m")
    assert ours.tokenizer.get_vocab() == theirs.tokenizer.get_vocab()
    expected = theirs.tokenize(TEXTS)
    got = ours.tokenize(TEXTS)
    for key in ("input_ids", "attention_mask"):
        assert torch.equal(got[key], expected[key]), key


def test_truncate_dim_is_saved_and_loaded_as_in_sentence_transformers(tiny_encoder, tmp_path):
    tiny_encoder.truncate_dim = 8
    ours, theirs = save_both_ways(tiny_encoder, tmp_path / "m")
    assert ours.truncate_dim == theirs.truncate_dim == 8
    assert ours.dim == ours.get_embedding_dimension() == theirs.get_embedding_dimension() == 8
    np.testing.assert_allclose(ours.encode(TEXTS), theirs.encode(TEXTS), atol=1e-6, rtol=0)
    with ours.truncate_embeddings(4), theirs.truncate_embeddings(4):
        np.testing.assert_allclose(ours.encode(TEXTS), theirs.encode(TEXTS), atol=1e-6, rtol=0)
    assert ours.encode(TEXTS, truncate_dim=12).shape == (12, 12)
    theirs.truncate_dim = 6
    theirs.save(str(tmp_path / "st"))
    assert sentforge.load(tmp_path / "st").encode(TEXTS).shape == (12, 6)


def test_save_pretrained_writes_the_same_directory_as_save(tiny_encoder, tmp_path):
    tiny_encoder.similarity_fn_name = "dot"
    tiny_encoder.save_pretrained(tmp_path / "m")
    reloaded = st.SentenceTransformer(str(tmp_path / "m"), device="cpu")
    assert reloaded.similarity_fn_name == "dot"
    np.testing.assert_allclose(tiny_encoder.encode(TEXTS), reloaded.encode(TEXTS), atol=1e-6, rtol=0)


def test_retraining_keeps_the_similarity_function_and_prompts(tiny_bert_dir, tmp_path):
    encoder = build_encoder(tiny_bert_dir, pooling="cls")
    encoder.prompts, encoder.similarity_fn_name = {"query": "query: "}, "dot"
    trained = sentforge.train("mnrl", encoder, [(a, b) for a, b in zip(TEXTS, TEXTS[1:])], tmp_path / "out",
                              steps=1, batch_size=4, pooling="mean")
    reloaded = sentforge.load(tmp_path / "out")
    assert trained.similarity_fn_name == reloaded.similarity_fn_name == "dot"
    assert reloaded.prompts == {"query": "query: "}


def test_meta_encoder_similarity_is_saved_with_it(tiny_encoder, tiny_bert_dir, tmp_path):
    build_encoder(tiny_bert_dir, pooling="max").save(tmp_path / "max")
    tiny_encoder.save(tmp_path / "mean")
    members = [sentforge.load(tmp_path / "mean"), sentforge.load(tmp_path / "max")]
    meta = sentforge.MetaEncoder(members, "concat").fit(TEXTS)
    assert meta.similarity_fn_name == "cosine"
    meta.similarity_fn_name = "euclidean"
    vectors = meta.encode(TEXTS)
    torch.testing.assert_close(meta.similarity(vectors, vectors), st.util.euclidean_sim(vectors, vectors))
    meta.save(tmp_path / "meta")
    assert sentforge.load(tmp_path / "meta").similarity_fn_name == "euclidean"
