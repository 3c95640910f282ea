"""Sentence-T5 backbones on a tiny random T5: encoder-first, encoder-mean and encoder-decoder-first."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import sentforge
from sentforge import build_encoder
from sentforge.support.errors import ModelFormatError

from conftest import CORPUS

VARIANTS = {"enc-first": ("encoder", "first"), "enc-mean": ("encoder", "mean"), "encdec-first": ("t5-encdec", "first")}


@pytest.mark.parametrize("variant", VARIANTS)
def test_shapes_and_round_trip(tiny_t5_dir, tmp_path, variant):
    backbone, pooling = VARIANTS[variant]
    encoder = build_encoder(tiny_t5_dir, backbone=backbone, pooling=pooling, projection_dim=24, normalize=True)
    vectors = encoder.encode(CORPUS[:6])
    assert vectors.shape == (6, 24)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    encoder.save(tmp_path / variant)
    np.testing.assert_array_equal(sentforge.load(tmp_path / variant).encode(CORPUS[:6]), vectors)


def test_encdec_vector_is_the_first_decoder_output(tiny_t5_dir):
    encoder = build_encoder(tiny_t5_dir, backbone="t5-encdec", pooling="first")
    model = encoder[0].model.eval()
    features = encoder.tokenize(["the cat sat on the mat"])
    with torch.no_grad():
        start = torch.full((1, 1), model.config.decoder_start_token_id)
        expected = model(**features, decoder_input_ids=start).last_hidden_state[:, 0]
    np.testing.assert_allclose(encoder.encode(["the cat sat on the mat"]), expected.numpy(), atol=1e-5)


def test_encdec_depends_on_input_not_on_padding(tiny_t5_dir):
    encoder = build_encoder(tiny_t5_dir, backbone="t5-encdec", pooling="first")
    a, b = encoder.encode(["the cat sat on the mat", "a dog runs in the park"])
    assert not np.allclose(a, b, atol=1e-4)
    alone = encoder.encode(["the cat sat on the mat"])[0]
    padded = encoder.encode(["the cat sat on the mat", "a much much longer text " * 5], batch_size=2)[0]
    np.testing.assert_allclose(alone, padded, atol=1e-5)


def test_t5_encoder_only_loads_without_decoder(tiny_t5_dir):
    encoder = build_encoder(tiny_t5_dir, backbone="encoder", pooling="mean")
    assert type(encoder[0].model).__name__ == "T5EncoderModel"


def test_encdec_needs_a_t5_checkpoint(tiny_bert_dir):
    with pytest.raises(ModelFormatError, match="T5-family"):
        build_encoder(tiny_bert_dir, backbone="t5-encdec")
