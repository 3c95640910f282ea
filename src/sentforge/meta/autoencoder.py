"""Cross-view auto-encoder meta-embedding (Bollegala and Bao, 2018; Poerner et al., 2020, §3.4)."""

from __future__ import annotations

import logging
from itertools import pairwise
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from sentforge.support.errors import ConfigError, ModelFormatError
from sentforge.meta.base import MetaMethod

logger = logging.getLogger(__name__)

LOSSES = ("mse", "mae", "kl", "cos2")


def reconstruction_loss(kind: str, prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """One of the paper's four losses, averaged over the batch."""
    if kind == "mse":
        return F.mse_loss(prediction, target)
    if kind == "mae":
        return F.l1_loss(prediction, target)
    if kind == "kl":  # KL(softmax(target) || softmax(prediction)): both vectors read as distributions
        return F.kl_div(F.log_softmax(prediction, dim=1), F.log_softmax(target, dim=1), log_target=True,
                        reduction="batchmean")
    if kind == "cos2":
        return ((1 - F.cosine_similarity(prediction, target, dim=1)) ** 2).mean()
    raise ConfigError(f"autoencoder: unknown loss {kind!r}; choose from {', '.join(LOSSES)}")


def _mlp(sizes: list[int]) -> nn.Sequential:
    """Linear layers through `sizes`, ReLU between them (none after the last)."""
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(pairwise(sizes)):
        if i:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(n_in, n_out))
    return nn.Sequential(*layers)


class CrossViewAutoEncoder(nn.Module):
    """Per member j an encoder E_j: d_j -> d and a decoder D_j: d -> d_j, each with `hidden_layers` hidden
    layers of width `hidden_dim`."""

    def __init__(self, input_dims: list[int], dim: int, hidden_layers: int, hidden_dim: int) -> None:
        super().__init__()
        hidden = [hidden_dim] * hidden_layers
        self.encoders = nn.ModuleList(_mlp([d, *hidden, dim]) for d in input_dims)
        self.decoders = nn.ModuleList(_mlp([dim, *hidden, d]) for d in input_dims)

    def embed(self, views: list[torch.Tensor]) -> torch.Tensor:
        return sum(encoder(view) for encoder, view in zip(self.encoders, views))

    def loss(self, views: list[torch.Tensor], kind: str) -> torch.Tensor:
        """The J^2 cross-reconstruction losses: every member's code decoded into every member."""
        codes = [encoder(view) for encoder, view in zip(self.encoders, views)]
        return sum(reconstruction_loss(kind, decoder(code), target)
                   for code in codes for decoder, target in zip(self.decoders, views))


class AutoEncoder(MetaMethod):
    """Trains the cross-view auto-encoder on the fit sentences; F(s) = sum_j E_j(F_j(s)).

    Defaults from Poerner et al. (2020): d = 1024, 500 epochs, batch size 10,000, Adam with learning rate
    1e-3; loss (mse, mae, kl, cos2 = (1 - cos)^2) and 0-2 hidden layers are chosen on STS-B dev there.
    The hidden layers' width (`hidden_dim`, default d) and their ReLU are this implementation's choice.
    `seed` fixes the initialisation and the batch order; `device` only says where to train.
    """

    method_name = "autoencoder"
    runtime_options: ClassVar[tuple[str, ...]] = ("device", "show_progress")

    def __init__(self, dim: int = 1024, hidden_layers: int = 0, loss: str = "mse", epochs: int = 500,
                 batch_size: int = 10_000, lr: float = 1e-3, hidden_dim: int | None = None, seed: int = 0,
                 device: str = "cpu", show_progress: bool | None = None) -> None:
        super().__init__()
        if loss not in LOSSES:
            raise ConfigError(f"autoencoder: unknown loss {loss!r}; choose from {', '.join(LOSSES)}")
        if not 0 <= hidden_layers <= 2:
            raise ConfigError(f"autoencoder: hidden_layers must be 0, 1 or 2, got {hidden_layers}")
        if epochs < 1 or batch_size < 1 or lr <= 0:
            raise ConfigError("autoencoder: epochs and batch_size must be >= 1 and lr > 0")
        self.dim = dim
        self.hidden_layers = hidden_layers
        self.loss = loss
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.hidden_dim = hidden_dim
        self.seed = seed
        self.device = device
        self.show_progress = show_progress
        self.model: CrossViewAutoEncoder | None = None
        self.loss_history: list[float] = []

    @property
    def output_dim(self) -> int:
        return self.dim

    def _build(self) -> CrossViewAutoEncoder:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            return CrossViewAutoEncoder(self.input_dims, self.dim, self.hidden_layers, self.hidden_dim or self.dim)

    def _fit(self, views: list[np.ndarray]) -> None:
        model = self._build().to(self.device)
        optimizer = torch.optim.Adam(model.parameters(), lr=self.lr)
        data = [torch.from_numpy(view).to(self.device) for view in views]
        n = data[0].shape[0]
        order_rng = torch.Generator().manual_seed(self.seed)
        self.loss_history = []
        model.train()
        disable = None if self.show_progress is None else not self.show_progress
        for _ in tqdm(range(self.epochs), desc="autoencoder", unit="epoch", disable=disable):
            total, batches = 0.0, 0
            for rows in torch.randperm(n, generator=order_rng).split(self.batch_size):
                rows = rows.to(self.device)
                loss = model.loss([view[rows] for view in data], self.loss)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                total, batches = total + loss.item(), batches + 1
            self.loss_history.append(total / batches)
        logger.info("autoencoder: loss %.5f after epoch 1, %.5f after epoch %d",
                    self.loss_history[0], self.loss_history[-1], self.epochs)
        self.model = model.cpu().eval()

    def _transform(self, views: list[np.ndarray]) -> np.ndarray:
        with torch.inference_mode():
            return self.model.embed([torch.from_numpy(view) for view in views]).numpy()

    def parameters(self) -> dict[str, np.ndarray]:
        return {name: tensor.detach().cpu().numpy() for name, tensor in self.model.state_dict().items()}

    def _set_parameters(self, parameters: dict[str, np.ndarray]) -> None:
        model = self._build()
        expected = set(model.state_dict())
        if set(parameters) != expected:
            raise ModelFormatError(f"autoencoder: saved parameters {sorted(parameters)} do not match the "
                                   f"configured network ({sorted(expected)})")
        model.load_state_dict({name: torch.from_numpy(np.array(array)) for name, array in parameters.items()})
        self.model = model.eval()
