from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

import sentforge
from sentforge import Encoder, build_encoder
from sentforge.support.errors import ConfigError, ModelFormatError, ModelNotFoundError, OutputExistsError
from sentforge.modules import Normalize, Pooling, Projection

from conftest import CORPUS


@pytest.fixture()
def bert(tiny_bert_dir) -> Encoder:
    return build_encoder(tiny_bert_dir, pooling="mean")


def test_encode_shapes_dtype_and_empty(bert):
    vectors = bert.encode(CORPUS[:5])
    assert vectors.shape == (5, 32) and vectors.dtype == np.float32
    assert bert.encode([]).shape == (0, 32)
    assert bert.encode("a single text").shape == (32,)


def test_encode_order_is_restored_and_batch_size_invariant(bert):
    texts = ["short", "a much longer sentence with many more words in it", "mid length text here"] * 3
    whole = bert.encode(texts, batch_size=64)
    np.testing.assert_allclose(bert.encode(texts, batch_size=2), whole, atol=1e-5)
    one_by_one = np.stack([bert.encode([t])[0] for t in texts])
    np.testing.assert_allclose(one_by_one, whole, atol=1e-5)


def test_encode_matches_forward_and_manual_mean_pooling(bert):
    texts = ["the cat sat", "a dog runs in the park today"]
    features = bert.tokenize(texts)
    bert.eval()
    with torch.no_grad():
        tokens = bert[0].model(input_ids=features["input_ids"], attention_mask=features["attention_mask"])[0]
    mask = features["attention_mask"].unsqueeze(-1).float()
    manual = ((tokens * mask).sum(1) / mask.sum(1)).numpy()
    np.testing.assert_allclose(bert.encode(texts), manual, atol=1e-5)


def test_normalize_flag_gives_unit_vectors(bert):
    vectors = bert.encode(CORPUS[:4], normalize=True)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_truncation_is_counted_in_one_warning(bert, caplog):
    long_text = " ".join(["password"] * 200)
    with caplog.at_level(logging.WARNING, logger="sentforge"):
        vectors = bert.encode([long_text, long_text, "short"], max_seq_length=16)
    messages = [r.getMessage() for r in caplog.records if "truncated" in r.getMessage()]
    assert len(messages) == 1 and messages[0].startswith("2 of 3 texts")
    assert vectors.shape == (3, 32)
    assert bert.tokenize([long_text], max_length=16)["input_ids"].shape[1] == 16


def test_accelerator_chunks_cover_every_text_longest_first():
    from sentforge.encoder import tokenizing_chunks

    texts = [f"text {'x' * (i * 7 % 23)}" for i in range(50)]
    assert [c.tolist() for c in tokenizing_chunks(texts, 4, torch.device("cpu"))] == [list(range(50))]
    chunks = tokenizing_chunks(texts, 4, torch.device("cuda"))  # a device spec; no GPU is used
    rows = np.concatenate(chunks)
    assert sorted(rows.tolist()) == list(range(50))
    assert [len(c) for c in chunks] == [32, 18]  # 8 batches of 4 per chunk
    lengths = [len(texts[i]) for i in rows]
    assert lengths == sorted(lengths, reverse=True)


def test_chunked_tokenising_gives_the_same_vectors_in_input_order(bert, monkeypatch, caplog):
    """The accelerators' path (texts tokenised in chunks by a second thread, one chunk ahead) run on the
    CPU: the same vectors, in the input order, and one truncation warning with the total count."""
    from sentforge import encoder as encoder_module

    texts = [CORPUS[i % len(CORPUS)] * (1 + i % 3) for i in range(23)]
    expected = bert.encode(texts, batch_size=2, max_seq_length=12)
    original = encoder_module.tokenizing_chunks
    chunks_seen = []

    def accelerator_chunks(texts, batch_size, device):
        chunks = original(texts, batch_size, torch.device("cuda"))
        chunks_seen.append(len(chunks))
        return chunks

    monkeypatch.setattr(encoder_module, "tokenizing_chunks", accelerator_chunks)
    monkeypatch.setattr(encoder_module, "_CHUNK_BATCHES", 2)
    with caplog.at_level(logging.WARNING, logger="sentforge"):
        chunked = bert.encode(texts, batch_size=2, max_seq_length=12)
    assert chunks_seen == [6]  # 23 texts in chunks of 2 batches of 2
    np.testing.assert_allclose(chunked, expected, atol=1e-6)
    truncated = sum(len(bert.input_module.token_ids([t])[0][0]) > 12 for t in texts)
    assert 0 < truncated < len(texts)
    warnings = [r.getMessage() for r in caplog.records if "truncated" in r.getMessage()]
    assert warnings[-1].startswith(f"{truncated} of {len(texts)} texts")


def test_an_error_in_the_tokenizing_thread_reaches_the_caller(bert, monkeypatch):
    from sentforge import encoder as encoder_module

    original_chunks, original_ids = encoder_module.tokenizing_chunks, bert.input_module.token_ids
    calls = []

    def failing_ids(texts, max_length=None):
        calls.append(len(texts))
        if len(calls) == 2:
            raise ValueError("broken tokenizer")
        return original_ids(texts, max_length)

    monkeypatch.setattr(encoder_module, "tokenizing_chunks",
                        lambda texts, batch_size, device: original_chunks(texts, batch_size, torch.device("cuda")))
    monkeypatch.setattr(encoder_module, "_CHUNK_BATCHES", 1)
    monkeypatch.setattr(bert.input_module, "token_ids", failing_ids)
    with pytest.raises(ValueError, match="broken tokenizer"):
        bert.encode(CORPUS[:6], batch_size=2)
    assert bert.encode(["after the error"]).shape == (1, 32)  # the encoder is usable afterwards


@pytest.mark.parametrize("mode", ["cls", "max", "mean"])
def test_pooling_modes(tiny_bert_dir, mode):
    encoder = build_encoder(tiny_bert_dir, pooling=mode)
    texts = ["the cat", "a dog runs in the park"]
    features = encoder.tokenize(texts)
    encoder.eval()
    with torch.no_grad():
        tokens = encoder[0].model(**features)[0]
    expected = {
        "cls": tokens[:, 0],
        "max": tokens.masked_fill(features["attention_mask"].unsqueeze(-1) == 0, -1e9).max(1).values,
        "mean": tokens[0:1, :features["attention_mask"][0].sum()].mean(1).expand(2, -1),
    }[mode]
    got = encoder.encode(texts)
    rows = [0] if mode == "mean" else [0, 1]
    np.testing.assert_allclose(got[rows], expected.numpy()[rows], atol=1e-5)


def test_projection_and_normalize_pipeline(tiny_bert_dir, tmp_path):
    encoder = build_encoder(tiny_bert_dir, pooling="mean", projection_dim=8, normalize=True)
    assert [type(m) for m in encoder][1:] == [Pooling, Projection, Normalize]
    vectors = encoder.encode(CORPUS[:3])
    assert vectors.shape == (3, 8)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    encoder.save(tmp_path / "m")
    np.testing.assert_array_equal(sentforge.load(tmp_path / "m").encode(CORPUS[:3]), vectors)


def test_save_load_round_trip_and_overwrite_guard(bert, tmp_path):
    out = tmp_path / "saved"
    bert.save(out)
    for name in ["modules.json", "config.json", "model.safetensors", "tokenizer.json", "sentence_bert_config.json",
                 "1_Pooling/config.json"]:
        assert (out / name).exists(), name
    assert not list(out.rglob("*.bin"))
    np.testing.assert_array_equal(sentforge.load(out).encode(CORPUS), bert.encode(CORPUS))
    with pytest.raises(OutputExistsError):
        bert.save(out)
    bert.save(out, overwrite=True)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_plain_hf_directory_loads_with_mean_pooling(tiny_bert_dir, caplog):
    with caplog.at_level(logging.INFO, logger="sentforge"):
        encoder = sentforge.load(tiny_bert_dir)
    assert any("mean pooling" in r.getMessage() for r in caplog.records)
    assert encoder[1].modes == ("mean",)


def test_unknown_specs_give_clear_errors(tmp_path):
    with pytest.raises(ModelNotFoundError, match="Accepted"):
        sentforge.load("no-such-org/no-such-model-xyz")
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        sentforge.load(str(tmp_path / "missing-dir"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelFormatError):
        sentforge.load(tmp_path / "empty")


def test_unsupported_module_type_is_named(bert, tmp_path):
    bert.save(tmp_path / "m")
    text = (tmp_path / "m" / "modules.json").read_text().replace("models.Pooling", "models.LSTM")
    (tmp_path / "m" / "modules.json").write_text(text)
    with pytest.raises(ModelFormatError, match="LSTM"):
        sentforge.load(tmp_path / "m")


def test_bad_arguments(bert):
    with pytest.raises(ConfigError):
        bert.encode(["ok", 3])
    with pytest.raises(ConfigError):
        bert.encode(["ok"], batch_size=0)
    with pytest.raises(ConfigError):
        Pooling(4, "median")
