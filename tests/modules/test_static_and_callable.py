from __future__ import annotations

import numpy as np
import pytest

import sentforge
from sentforge import CallableEncoder, Encoder
from sentforge.support.errors import ConfigError, InputFileError
from sentforge.modules import Pooling, WordVectors


@pytest.fixture()
def glove_file(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text("the 1 0 0\ncat 0 2 0\nsat 0 0 3\n, 1 1 1\n", encoding="utf-8")
    return path


def test_glove_average_is_mean_of_known_words(glove_file, tmp_path):
    encoder = sentforge.load(f"glove:{glove_file}")
    vectors = encoder.encode(["The cat, sat!", "unknown words only", "cat"])
    np.testing.assert_allclose(vectors[0], [2 / 4, 3 / 4, 4 / 4], atol=1e-6)
    np.testing.assert_allclose(vectors[1], [0, 0, 0])
    np.testing.assert_allclose(vectors[2], [0, 2, 0])
    encoder.save(tmp_path / "glove")
    np.testing.assert_array_equal(sentforge.load(tmp_path / "glove").encode(["the cat sat"]),
                                  encoder.encode(["the cat sat"]))


def test_npy_and_vocabulary_form(tmp_path):
    np.save(tmp_path / "emb.npy", np.eye(3, dtype=np.float32))
    words = WordVectors.from_arrays(tmp_path / "emb.npy", ["a", "b", "c"])
    encoder = Encoder([words, Pooling(3, "mean")])
    np.testing.assert_allclose(encoder.encode(["a c"])[0], [0.5, 0, 0.5])


def test_malformed_glove_line_is_named(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("the 1 0 0\ncat 0 2\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"bad.txt:2"):
        sentforge.load(f"glove:{path}")


def test_callable_adapter_batches_and_checks_shape():
    calls = []

    def fn(batch):
        calls.append(len(batch))
        return np.array([[len(t), 1.0] for t in batch])

    encoder = CallableEncoder(fn, name="lengths")
    vectors = encoder.encode(["a", "abc", "ab"], batch_size=2)
    assert vectors.dtype == np.float32 and calls == [2, 1]
    np.testing.assert_allclose(vectors[:, 0], [1, 3, 2])
    assert encoder.encode([]).shape == (0, 2)
    bad = CallableEncoder(lambda batch: np.zeros((1, 2)), name="bad")
    with pytest.raises(ConfigError, match="shape"):
        bad.encode(["a", "b"])
