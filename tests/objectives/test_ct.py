"""Contrastive Tension: pairs and labels, the loss against an independent computation, learning, and
the second (passed-in) encoder being the one trained and kept."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from sentforge import build_encoder
from sentforge.support.errors import ConfigError
from sentforge.objectives.ct import ContrastiveTension

from conftest import CORPUS, training_losses


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_pairs_have_k_negatives_per_positive(tiny_bert_dir):
    objective = ContrastiveTension(build_encoder(tiny_bert_dir), negatives=3)
    batch = CORPUS[:8]
    first, second, labels = objective.pairs(batch)
    assert first == batch
    assert labels.tolist() == [1.0, 1.0] + [0.0] * 6  # 8 // (3 + 1) positives, the rest negatives
    assert second[:2] == batch[:2]
    assert all(b in batch and b != a for a, b in zip(first[2:], second[2:]))
    repeated = ["same text"] * 4
    assert objective.pairs(repeated)[2].tolist() == [1.0] * 4  # identical texts are positives whatever the pairing


def test_loss_is_bce_on_dot_products_of_the_two_encoders(tiny_bert_dir):
    objective = ContrastiveTension(build_encoder(tiny_bert_dir), negatives=3).eval()
    batch = CORPUS[:8]
    with torch.no_grad():
        loss = objective(batch)
        objective.reset_pairs()  # replay the same pairs
        first, second, labels = objective.pairs(batch)
        a, b = objective.first.encode(first), objective.encoder.encode(second)
    logits = torch.from_numpy((a * b).sum(axis=1))
    assert loss.item() == pytest.approx(F.binary_cross_entropy_with_logits(logits, labels).item(), rel=1e-5)


def test_training_keeps_the_second_encoder_and_both_change(tiny_bert_dir):
    encoder = build_encoder(tiny_bert_dir)
    objective = ContrastiveTension(encoder, negatives=3).train()
    assert objective.encoder is encoder
    assert not {p.data_ptr() for p in objective.first.parameters()} & {p.data_ptr() for p in encoder.parameters()}
    start = {k: v.clone() for k, v in encoder.state_dict().items()}
    start_first = {k: v.clone() for k, v in objective.first.state_dict().items()}
    losses = training_losses(objective, torch.optim.RMSprop(objective.parameters(), lr=1e-3), steps=12)
    assert np.mean(losses[-3:]) < np.mean(losses[:3])
    key = "0.model.encoder.layer.0.attention.self.query.weight"
    assert not torch.equal(encoder.state_dict()[key], start[key])
    assert not torch.equal(objective.first.state_dict()[key], start_first[key])
    assert not torch.equal(encoder.state_dict()[key], objective.first.state_dict()[key])
    assert {k for k in objective.state_dict() if k.startswith("encoder.")}  # the kept model is `encoder`


def test_bad_settings(tiny_bert_dir):
    with pytest.raises(ConfigError, match="negative"):
        ContrastiveTension(build_encoder(tiny_bert_dir), negatives=0)
    with pytest.raises(ConfigError, match="at least 2"):
        ContrastiveTension(build_encoder(tiny_bert_dir))(["one sentence"])


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_packed_batch_equals_padded_batch(tiny_bert_dir, monkeypatch, pooling):
    """On the CPU each copy runs its batch packed (one call, attention per text); it computes the padded
    batch's loss and gradients."""
    from sentforge.objectives import packed_attention

    calls = []
    original = packed_attention.packed_sentence_embeddings
    monkeypatch.setattr("sentforge.objectives.ct.packed_sentence_embeddings",
                        lambda *args: calls.append(args) or original(*args))
    objective = ContrastiveTension(build_encoder(tiny_bert_dir, pooling=pooling), negatives=3).eval()
    batch = CORPUS[:8]
    results = []
    for chunked in (None, False):  # None: the CPU default (packed); False: one padded batch
        objective.encoder.length_chunked = objective.first.length_chunked = chunked
        objective.reset_pairs()
        loss = objective(batch)
        loss.backward()
        results.append((loss.item(), {name: p.grad.clone() for name, p in objective.named_parameters()
                                      if p.grad is not None}))
        objective.zero_grad(set_to_none=True)
    assert len(calls) == 2  # the packed run: once per copy
    (packed_loss, packed_grads), (padded_loss, padded_grads) = results
    assert packed_loss == pytest.approx(padded_loss, abs=1e-6)
    assert packed_grads.keys() == padded_grads.keys()
    for name, grad in packed_grads.items():
        torch.testing.assert_close(grad, padded_grads[name], atol=1e-5, rtol=0, msg=name)
