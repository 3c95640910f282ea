"""quantize_embeddings against sentence-transformers' implementation (same buckets, bytes and dtypes)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sentforge.support.errors import ConfigError
from sentforge.interface.quantization import PRECISIONS, quantization_ranges, quantize_embeddings

st_quantization = pytest.importorskip("sentence_transformers.util.quantization")


@pytest.fixture()
def embeddings() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(150, 20)).astype(np.float32)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_matches_sentence_transformers(embeddings, precision):
    ours = quantize_embeddings(embeddings, precision)
    theirs = st_quantization.quantize_embeddings(embeddings, precision)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("precision", ["int8", "uint8"])
def test_calibration_and_ranges_match_sentence_transformers(embeddings, precision):
    queries, corpus = embeddings[:10], embeddings[10:]
    ours = quantize_embeddings(queries, precision, calibration_embeddings=corpus)
    theirs = st_quantization.quantize_embeddings(queries, precision, calibration_embeddings=corpus)
    np.testing.assert_array_equal(ours, theirs)
    ranges = quantization_ranges(corpus)
    np.testing.assert_array_equal(quantize_embeddings(queries, precision, ranges=ranges), theirs)


def test_hand_computed_values():
    vectors = np.array([[0.0, 0.0, 2.0], [255.0, 0.5, -2.0]], dtype=np.float32)
    # range [0, 255] in 255 steps of 1: 0 -> bucket 0 -> -128, 255 -> bucket 255 -> 127
    np.testing.assert_array_equal(quantize_embeddings(vectors, "int8")[:, 0], [-128, 127])
    # signs (0, 0, 1) and (1, 1, 0) padded to a byte: 0b00100000 = 32, 0b11000000 = 192
    np.testing.assert_array_equal(quantize_embeddings(vectors, "ubinary")[:, 0], [32, 192])
    np.testing.assert_array_equal(quantize_embeddings(vectors, "binary")[:, 0], [32 - 128, 192 - 128])


def test_tensor_input_and_errors(embeddings):
    np.testing.assert_array_equal(quantize_embeddings(torch.from_numpy(embeddings), "ubinary"),
                                  quantize_embeddings(embeddings, "ubinary"))
    with pytest.raises(ConfigError, match="precision must be one of"):
        quantize_embeddings(embeddings, "int4")
    with pytest.raises(ConfigError, match="single embedding"):
        quantize_embeddings(embeddings[:1], "int8")
    with pytest.raises(ConfigError, match="floating point"):
        quantize_embeddings(quantize_embeddings(embeddings, "int8"), "int8")
