"""BERT-flow: the Glow flow is invertible, its log-determinant is the Jacobian's, fitting Gaussianises
the vectors, the encoder stays frozen, and the encoder + flow saves and loads as one pipeline."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import sentforge
from sentforge import build_encoder
from sentforge.modules.flow import ActNorm, AffineCoupling, Flow, InvertibleLinear
from sentforge.objectives.bertflow import BertFlow

from conftest import CORPUS

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _flow_with_nontrivial_weights(dim: int) -> Flow:
    torch.manual_seed(0)
    flow = Flow(dim, steps=3, hidden=8).double()
    flow.train()
    flow.transform(torch.randn(64, dim, dtype=torch.float64) * 3 + 1)  # ActNorm's data-dependent start
    with torch.no_grad():
        for layer in flow.layers:
            if isinstance(layer, AffineCoupling):  # leave the identity start behind
                layer.net[-1].weight.normal_(0, 0.5)
                layer.net[-1].bias.normal_(0, 0.5)
    return flow.eval()


@pytest.mark.parametrize("dim", [2, 5])
def test_flow_is_invertible(dim):
    flow = _flow_with_nontrivial_weights(dim)
    x = torch.randn(16, dim, dtype=torch.float64)
    z, _ = flow.transform(x)
    assert not torch.allclose(z, x)
    torch.testing.assert_close(flow.inverse(z), x, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("dim", [2, 5])
def test_log_det_matches_autograd_jacobian(dim):
    flow = _flow_with_nontrivial_weights(dim)
    for x in torch.randn(3, dim, dtype=torch.float64):
        jacobian = torch.autograd.functional.jacobian(lambda v: flow.transform(v[None])[0][0], x)
        _, expected = torch.linalg.slogdet(jacobian)
        assert flow.transform(x[None])[1].item() == pytest.approx(expected.item(), abs=1e-9)
    for layer in (ActNorm(dim), InvertibleLinear(dim), AffineCoupling(dim, 4)):  # each kind on its own
        layer.double()
        x = torch.randn(dim, dtype=torch.float64)
        jacobian = torch.autograd.functional.jacobian(lambda v, layer=layer: layer(v[None])[0][0], x)
        assert layer(x[None])[1].item() == pytest.approx(torch.linalg.slogdet(jacobian)[1].item(), abs=1e-9)


def test_fitting_makes_correlated_data_standard_normal():
    torch.manual_seed(1)
    mixing = torch.tensor([[2.0, 0.0, 0.0], [1.5, 0.5, 0.0], [-1.0, 0.3, 0.2]])
    data = torch.randn(2048, 3) @ mixing.T + torch.tensor([5.0, -2.0, 1.0])
    flow = Flow(3, steps=4, hidden=16)
    optimizer = torch.optim.Adam(flow.parameters(), lr=5e-3)
    start = flow.negative_log_likelihood(data[:256]).item()
    for step in range(200):
        loss = flow.negative_log_likelihood(data[(step * 256) % 2048:][:256])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    flow.eval()
    with torch.no_grad():
        z, _ = flow.transform(data)
        end = flow.negative_log_likelihood(data).item()
    assert end < start - 0.5
    # the true density of the data: the negative log-likelihood per dimension the flow should approach
    true_nll = 0.5 * np.log(2 * np.pi * np.e) + np.log(abs(np.linalg.det(mixing.numpy()))) / 3
    assert end < true_nll + 0.1
    torch.testing.assert_close(z.mean(0), torch.zeros(3), atol=0.1, rtol=0)
    torch.testing.assert_close(torch.cov(z.T), torch.eye(3), atol=0.15, rtol=0)


def test_bertflow_keeps_the_encoder_frozen_and_saves_a_pipeline(tiny_bert_dir, tmp_path):
    encoder = build_encoder(tiny_bert_dir, pooling="mean")
    before = encoder.encode(CORPUS)
    objective = BertFlow(encoder, steps=2, hidden=8).train()
    assert not encoder.training  # frozen: no dropout in the vectors the flow fits
    vectors = list(encoder.encode(CORPUS))
    torch.testing.assert_close(objective.vectors(CORPUS), objective.vectors(vectors), atol=1e-5, rtol=1e-5)
    optimizer = torch.optim.Adam([p for p in objective.parameters() if p.requires_grad], lr=1e-2)
    losses = []
    for step in range(20):
        loss = objective([vectors[(step * 8 + i) % len(vectors)] for i in range(8)])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert np.mean(losses[-3:]) < np.mean(losses[:3])
    np.testing.assert_allclose(encoder.encode(CORPUS), before, atol=1e-6)  # the encoder did not move

    fitted = objective.fitted_encoder()
    z = fitted.encode(CORPUS)
    with torch.no_grad():
        expected = objective.flow.transform(torch.from_numpy(before))[0].numpy()
    np.testing.assert_allclose(z, expected, atol=1e-4)
    fitted.save(tmp_path / "flow-model")
    reloaded = sentforge.load(tmp_path / "flow-model")
    assert type(reloaded[-1]).__name__ == "Flow"
    np.testing.assert_allclose(reloaded.encode(CORPUS), z, atol=1e-5)
