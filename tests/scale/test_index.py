"""Index build and search: exact search equals brute force, approximate kinds find the exact neighbours on
easy data, the texts map back, and bad input (another model, another dimension, corruption) is refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import sentforge
from sentforge.support.errors import ConfigError, InputFileError
from sentforge.support.identity import ModelIdentity
from sentforge.scale.index import IndexParams, VectorIndex, build_index, search_texts

from conftest import CORPUS, assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")
TEXTS = sorted(set(CORPUS))


def random_vectors(n, dim, seed=0):
    return np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)


def identity(dim):
    return ModelIdentity("random", dim, tuple(np.ones(dim)))


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivfpq"])
def test_search_matches_brute_force_cosine(tmp_path, kind):
    vectors = random_vectors(2000, 32)
    params = IndexParams(kind, nlist=8, pq_m=8, nprobe=8, ef_search=256)
    build_index(vectors, (f"t{i}" for i in range(2000)), tmp_path / "idx", identity(32), params)
    index = VectorIndex.load(tmp_path / "idx")
    queries = vectors[:20] + 0.01 * random_vectors(20, 32, seed=1)
    scores, ids = index.search_vectors(queries, k=10)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    exact = np.argsort(-(q @ unit.T), axis=1)[:, :10]
    if kind == "flat":
        np.testing.assert_array_equal(ids, exact)
        np.testing.assert_allclose(scores, np.take_along_axis(q @ unit.T, exact, axis=1), atol=1e-5)
    assert (ids[:, 0] == np.arange(20)).all()  # each query's own vector comes first
    assert index.texts(ids[:3, 0]) == ["t0", "t1", "t2"]


def test_cli_build_then_search_returns_nearest_text(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    code, _, err = run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tiny_bert_dir, "--kind", "flat",
                            "-o", tmp_path / "idx"], capsys)
    assert code == 0, err
    code, out, _ = run_cli(["search", TEXTS[3], "--index", tmp_path / "idx", "-m", tiny_bert_dir, "-k", "2"], capsys)
    assert code == 0
    assert out.splitlines()[1].endswith(f"1.0000  {TEXTS[3]}")
    encoder = sentforge.load(tiny_bert_dir)
    hits = VectorIndex.load(tmp_path / "idx").search(encoder, [TEXTS[5]], k=3)[0]
    docs = encoder.encode(TEXTS, normalize=True)
    expected = np.argsort(-(docs @ docs[5]))[:3]
    assert [h.id for h in hits] == list(expected) and [h.text for h in hits] == [TEXTS[i] for i in expected]


def test_index_from_another_model_is_refused(tiny_bert_dir, tiny_t5_dir, tmp_path, capsys):
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    assert run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tiny_bert_dir, "--kind", "flat",
                    "-o", tmp_path / "idx"], capsys)[0] == 0
    other = sentforge.build_encoder(tiny_bert_dir, pooling="cls")
    other.save(tmp_path / "cls-model")
    code, _, err = run_cli(["search", "a cat", "--index", tmp_path / "idx", "-m", tmp_path / "cls-model"], capsys)
    assert_one_line_error(code, err, "was built with model", "embeds text differently")
    code, _, err = run_cli(["search", "a cat", "--index", tmp_path / "idx", "-m", "glove:" + str(glove(tmp_path))],
                           capsys)
    assert_one_line_error(code, err, "dimension 32", "dimension 8")


def test_a_fine_tuned_copy_of_the_indexing_model_is_refused_naming_both(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    assert run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tiny_bert_dir, "--kind", "flat",
                    "-o", tmp_path / "idx"], capsys)[0] == 0
    # One small step of the embedding weights: the probe vector moves a little, not past 0.95.
    tuned = sentforge.load(tiny_bert_dir)
    with torch.no_grad():
        embeddings = tuned[0].model.embeddings.word_embeddings.weight
        embeddings += 0.02 * torch.randn(embeddings.shape, generator=torch.Generator().manual_seed(0))
    tuned.save(tmp_path / "tuned")
    start, moved = (ModelIdentity.of(sentforge.load(path)) for path in (tiny_bert_dir, tmp_path / "tuned"))
    cosine = start.cosine(moved)
    assert 0.95 <= cosine < 0.9999
    code, _, err = run_cli(["search", "a cat", "--index", tmp_path / "idx", "-m", tmp_path / "tuned"], capsys)
    assert_one_line_error(code, err, f"built with model '{tiny_bert_dir}'", f"model '{tmp_path / 'tuned'}' embeds "
                          "text close to it but not the same", f"probe cosine {cosine:.4f}")
    # The same weights under another name (a copy) are the same model.
    sentforge.load(tiny_bert_dir).save(tmp_path / "copy")
    assert run_cli(["search", "a cat", "--index", tmp_path / "idx", "-m", tmp_path / "copy"], capsys)[0] == 0


def test_a_model_directory_replaced_after_indexing_is_refused_although_its_name_is_the_same(tiny_bert_dir, tmp_path,
                                                                                             capsys):
    """The check is keyed on what the model computes: the same path holding other weights is another model."""
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    model = tmp_path / "model"
    sentforge.load(tiny_bert_dir).save(model)
    assert run_cli(["index", "build", tmp_path / "corpus.txt", "-m", model, "--kind", "flat",
                    "-o", tmp_path / "idx"], capsys)[0] == 0
    before = ModelIdentity.of(sentforge.load(model))
    replaced = sentforge.load(model)
    with torch.no_grad():
        embeddings = replaced[0].model.embeddings.word_embeddings.weight
        embeddings += 0.02 * torch.randn(embeddings.shape, generator=torch.Generator().manual_seed(0))
    replaced.save(model, overwrite=True)  # as `export ... --overwrite` or `train --output` over it does
    cosine = before.cosine(ModelIdentity.of(sentforge.load(model)))
    assert 0.95 <= cosine < 0.9999
    for model_option in ([], ["-m", model]):
        code, _, err = run_cli(["search", "a cat", "--index", tmp_path / "idx", *model_option], capsys)
        assert_one_line_error(code, err, f"built with model '{model}', which now embeds text differently "
                              f"(probe cosine {cosine:.4f})", "replaced or changed since", "build it again")


def test_an_index_without_a_model_identity_loads_and_warns_that_it_cannot_be_checked(tiny_bert_dir, tmp_path, capsys,
                                                                                    caplog):
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    assert run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tiny_bert_dir, "--kind", "flat",
                    "-o", tmp_path / "idx"], capsys)[0] == 0
    meta_file = tmp_path / "idx" / "index.json"
    meta = json.loads(meta_file.read_text())
    del meta["model"]  # as an index written before the identity was stored
    meta_file.write_text(json.dumps(meta))
    code, out, _ = run_cli(["search", TEXTS[3], "--index", tmp_path / "idx", "-m", tiny_bert_dir, "-k", "1"], capsys)
    assert code == 0 and out.splitlines()[1].endswith(f"1.0000  {TEXTS[3]}")
    assert any(r.levelname == "WARNING" and "records no model identity" in r.getMessage()
               and "cannot be checked" in r.getMessage() for r in caplog.records)
    code, _, err = run_cli(["search", "a cat", "--index", tmp_path / "idx"], capsys)
    assert_one_line_error(code, err, f"--index {tmp_path / 'idx'} does not record its model", "give it with -m")


@pytest.mark.parametrize("source", ["corpus", "index"])
def test_a_top_k_beyond_the_texts_says_how_many_are_shown(tiny_bert_dir, tmp_path, capsys, caplog, source):
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    where = ["--corpus", tmp_path / "corpus.txt"]
    if source == "index":
        assert run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tiny_bert_dir, "--kind", "flat",
                        "-o", tmp_path / "idx"], capsys)[0] == 0
        where = ["--index", tmp_path / "idx"]
    code, out, _ = run_cli(["search", "a cat", *where, "-m", tiny_bert_dir, "-k", "50"], capsys)
    assert code == 0 and len(out.splitlines()) == 1 + len(TEXTS) == 13
    what = f"the corpus {tmp_path / 'corpus.txt'}" if source == "corpus" else f"the index {tmp_path / 'idx'}"
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        f"-k 50 but {what} holds 12 texts: showing 12"]
    caplog.clear()
    assert run_cli(["search", "a cat", *where, "-m", tiny_bert_dir, "-k", "12"], capsys)[0] == 0
    assert not [r for r in caplog.records if r.levelname == "WARNING"]



@pytest.mark.parametrize("source", ["corpus", "index"])
def test_search_texts_gives_the_hits_that_search_prints(tiny_bert_dir, tmp_path, capsys, source):
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    where = {"corpus": tmp_path / "corpus.txt"}
    if source == "index":
        assert run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tiny_bert_dir, "--kind", "flat",
                        "-o", tmp_path / "idx"], capsys)[0] == 0
        where = {"index": tmp_path / "idx"}
    queries = ["a cat", "a dog in the park"]
    (key, path), = where.items()
    code, out, err = run_cli(["search", *queries, f"--{key}", path, "-m", tiny_bert_dir, "-k", "3"], capsys)
    assert code == 0, err
    hits = search_texts(queries, **where, model=str(tiny_bert_dir), top_k=3)
    assert out == "".join(f"query: {query}\n" + "".join(f"  {rank}. {hit.score:.4f}  {hit.text}\n"
                                                        for rank, hit in enumerate(found, 1))
                          for query, found in zip(queries, hits))
    assert all(TEXTS[hit.id] == hit.text for found in hits for hit in found)
    if source == "index":  # without a model: the one that built the index
        assert search_texts(queries, **where, top_k=3) == hits
    with pytest.raises(ConfigError, match="exactly one of --corpus"):
        search_texts(queries, top_k=3)


def glove(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("".join(f"w{i} {' '.join(['0.5'] * 8)}\n" for i in range(3)), encoding="utf-8")
    return path


def test_corrupt_index_file_is_detected(tmp_path):
    build_index(random_vectors(50, 16), (str(i) for i in range(50)), tmp_path / "idx", identity(16),
                IndexParams("flat"))
    path = tmp_path / "idx" / "index.faiss"
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(InputFileError, match="index.faiss: missing or its checksum differs"):
        VectorIndex.load(tmp_path / "idx")


def test_text_count_must_match_vectors(tmp_path):
    with pytest.raises(InputFileError, match="3 texts for 50 vectors"):
        build_index(random_vectors(50, 16), ["a", "b", "c"], tmp_path / "idx", identity(16), IndexParams("flat"))
    assert not (tmp_path / "idx").exists()


def test_bad_parameters_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"pq_m \(--pq-m\) 5 must divide"):
        build_index(random_vectors(50, 16), map(str, range(50)), tmp_path / "i", identity(16),
                    IndexParams("ivfpq", pq_m=5))
    with pytest.raises(ConfigError, match="--kind"):
        build_index(random_vectors(50, 16), map(str, range(50)), tmp_path / "i", identity(16), IndexParams("lsh"))


def test_an_invalid_kind_fails_before_any_model_loads_and_leaves_nothing(tmp_path, capsys):
    import time

    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    start = time.perf_counter()
    # The model does not exist: an error about it would mean the model was loaded before the option was checked.
    code, _, err = run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tmp_path / "no-such-model",
                            "--kind", "lsh", "-o", tmp_path / "idx"], capsys)
    assert time.perf_counter() - start < 5
    assert_one_line_error(code, err, "--kind", "'lsh'", "flat, ivfpq, hnsw")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]


def test_output_and_dimension_checks_come_before_encoding(tiny_bert_dir, tmp_path, capsys, monkeypatch):
    import sentforge.scale.streaming

    def no_encoding(*args, **kwargs):
        raise AssertionError("encoded before the options were checked")

    monkeypatch.setattr(sentforge.scale.streaming, "encode_file", no_encoding)
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "keep.txt").write_text("x", encoding="utf-8")
    code, _, err = run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tiny_bert_dir, "-o", tmp_path / "idx"],
                           capsys)
    assert_one_line_error(code, err, "not empty", "--overwrite")
    code, _, err = run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tiny_bert_dir, "--kind", "ivfpq",
                            "--pq-m", "5", "-o", tmp_path / "idx2"], capsys)
    assert_one_line_error(code, err, "--pq-m", "must divide the vector dimension 32")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "idx"]


def test_a_build_that_fails_after_encoding_leaves_no_temporary_folder(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    code, _, err = run_cli(["index", "build", tmp_path / "corpus.txt", "-m", tiny_bert_dir, "--kind", "ivfpq",
                            "--nlist", "64", "--pq-m", "8", "-o", tmp_path / "idx"], capsys)
    assert_one_line_error(code, err, "nlist", "needs at least that many vectors")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]
