"""A Glow-style normalising flow over sentence vectors, as a pipeline module (BERT-flow, Li et al., 2020).

Each step is ActNorm -> invertible linear map (Glow's "1x1 convolution" on a vector, LU-parametrised)
-> affine coupling (Kingma & Dhariwal, 2018). Appended after pooling, the module maps each sentence
vector x to z = f(x), which the BERT-flow objective fits to a standard Gaussian.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
from torch import nn

from sentforge.support.errors import ConfigError
from sentforge.modules.base import Features, Module


class ActNorm(nn.Module):
    """Per-dimension affine map y = (x + loc) * exp(log_scale), initialised from the first batch it
    sees in training so that the batch comes out with zero mean and unit variance."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.log_scale = nn.Parameter(torch.zeros(dim))
        self.register_buffer("initialized", torch.tensor(False))

    @torch.no_grad()
    def _initialize(self, x: torch.Tensor) -> None:
        self.loc.copy_(-x.mean(dim=0))
        self.log_scale.copy_(-torch.log(x.std(dim=0, unbiased=False) + 1e-6))
        self.initialized.fill_(True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.training and not bool(self.initialized) and x.shape[0] > 1:
            self._initialize(x)
        y = (x + self.loc) * torch.exp(self.log_scale)
        return y, self.log_scale.sum().expand(x.shape[0])

    def inverse(self, y: torch.Tensor) -> torch.Tensor:
        return y * torch.exp(-self.log_scale) - self.loc


class InvertibleLinear(nn.Module):
    """y = x W^T with W = P L (U + diag(sign * exp(log_s))): log|det W| = sum(log_s) (Glow's LU form)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        weight = torch.linalg.qr(torch.randn(dim, dim))[0]  # a random rotation to start from
        perm, lower, upper = torch.linalg.lu(weight)
        diagonal = torch.diagonal(upper)
        self.register_buffer("perm", perm)
        self.register_buffer("sign_s", torch.sign(diagonal))
        self.register_buffer("lower_mask", torch.tril(torch.ones(dim, dim), -1))
        self.lower = nn.Parameter(lower * self.lower_mask)
        self.upper = nn.Parameter(torch.triu(upper, 1))
        self.log_s = nn.Parameter(torch.log(diagonal.abs()))

    def weight(self) -> torch.Tensor:
        eye = torch.eye(self.lower.shape[0], device=self.lower.device, dtype=self.lower.dtype)
        lower = self.lower * self.lower_mask + eye
        upper = torch.triu(self.upper, 1) + torch.diag(self.sign_s * torch.exp(self.log_s))
        return self.perm @ lower @ upper

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x @ self.weight().T, self.log_s.sum().expand(x.shape[0])

    def inverse(self, y: torch.Tensor) -> torch.Tensor:
        return torch.linalg.solve(self.weight(), y.T).T


class AffineCoupling(nn.Module):
    """The second part of x is shifted and scaled by functions of the first part:
    y_b = (x_b + t(x_a)) * sigmoid(h(x_a) + 2), y_a = x_a (Glow's affine coupling)."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.split = dim // 2
        rest = dim - self.split
        self.net = nn.Sequential(nn.Linear(self.split, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 2 * rest))
        # Zero-initialised last layer: every coupling starts close to the identity (scale sigmoid(2)).
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)

    def _shift_scale(self, x_a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shift, raw = self.net(x_a).chunk(2, dim=-1)
        return shift, torch.sigmoid(raw + 2.0)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x_a, x_b = x[:, :self.split], x[:, self.split:]
        shift, scale = self._shift_scale(x_a)
        return torch.cat([x_a, (x_b + shift) * scale], dim=1), torch.log(scale).sum(dim=1)

    def inverse(self, y: torch.Tensor) -> torch.Tensor:
        y_a, y_b = y[:, :self.split], y[:, self.split:]
        shift, scale = self._shift_scale(y_a)
        return torch.cat([y_a, y_b / scale - shift], dim=1)


class Flow(Module):
    """An invertible map of sentence vectors: `steps` x (ActNorm, InvertibleLinear, AffineCoupling).

    In an encoder pipeline it replaces `sentence_embedding` by z = f(x). `transform(x)` gives
    (z, log|det df/dx|) per vector and `inverse(z)` gives x back.
    """

    type_name: ClassVar[str] = "sentforge.modules.Flow"

    def __init__(self, dim: int, steps: int = 9, hidden: int = 32) -> None:
        super().__init__()
        if dim < 2:
            raise ConfigError(f"a flow needs vectors of at least 2 dimensions, got {dim}")
        if steps < 1 or hidden < 1:
            raise ConfigError(f"flow steps and hidden width must be >= 1, got {steps} and {hidden}")
        self.dim, self.steps, self.hidden = int(dim), int(steps), int(hidden)
        self.layers = nn.ModuleList()
        for _ in range(self.steps):
            self.layers.extend([ActNorm(dim), InvertibleLinear(dim), AffineCoupling(dim, hidden)])

    @property
    def input_dim(self) -> int:
        return self.dim

    @property
    def output_dim(self) -> int:
        return self.dim

    def transform(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        log_det = torch.zeros(x.shape[0], device=x.device, dtype=x.dtype)
        for layer in self.layers:
            x, step_log_det = layer(x)
            log_det = log_det + step_log_det
        return x, log_det

    def inverse(self, z: torch.Tensor) -> torch.Tensor:
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z

    def negative_log_likelihood(self, x: torch.Tensor) -> torch.Tensor:
        """Mean over the batch of -log p(x) per dimension, p the flow's density with a N(0, I) base."""
        z, log_det = self.transform(x)
        log_pz = -0.5 * (z.pow(2).sum(dim=1) + self.dim * math.log(2 * math.pi))
        return -(log_pz + log_det).mean() / self.dim

    def forward(self, features: Features) -> Features:
        features["sentence_embedding"] = self.transform(features["sentence_embedding"])[0]
        return features

    def config(self) -> dict[str, Any]:
        return {"dim": self.dim, "steps": self.steps, "hidden": self.hidden}
