"""BERT-flow (Li et al., 2020): a normalising flow fitted, by maximum likelihood, to map the frozen
encoder's sentence vectors (mean pooling in the paper's setting) onto a standard Gaussian.

The encoder is not trained: its parameters are frozen and it runs in eval mode (no dropout). Only
the flow learns. A batch is a list of sentences, or of precomputed sentence vectors (encode the
corpus once with `encoder.encode` and train on the rows: the same vectors, far less work).
`fitted_encoder()` returns the encoder with the flow appended as its last module, which is what is
saved and used: its vectors are the flow's z. Defaults after BERT-flow's released configuration: a
small Glow (here 9 steps, coupling width 32, no multi-scale split), Adam with lr 1e-3.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from sentforge.support.device import to_device
from sentforge.encoder import Encoder
from sentforge.support.errors import ConfigError
from sentforge.modules.flow import Flow



class BertFlow(nn.Module):
    def __init__(self, encoder: Encoder, steps: int = 9, hidden: int = 32) -> None:
        super().__init__()
        self.encoder = encoder.requires_grad_(False)
        self.flow = Flow(encoder.full_dim, steps, hidden).to(encoder.device)
        self.last_stats: dict[str, float] = {}

    def train(self, mode: bool = True) -> BertFlow:
        super().train(mode)
        self.encoder.eval()  # frozen: the vectors the flow fits are the inference-time vectors
        return self

    def vectors(self, batch: Sequence[str] | Sequence[np.ndarray]) -> torch.Tensor:
        if not len(batch):
            raise ConfigError("BERT-flow got an empty batch")
        if all(isinstance(item, str) for item in batch):
            with torch.no_grad():
                return self.encoder.embed(list(batch)).float()
        array = np.stack([np.asarray(item, dtype=np.float32) for item in batch])
        if array.ndim != 2 or array.shape[1] != self.flow.dim:
            raise ConfigError(f"BERT-flow batches are sentences or vectors of size {self.flow.dim}, "
                              f"got an array of shape {array.shape}")
        return to_device(torch.from_numpy(array), self.encoder.device)

    def forward(self, batch: Sequence[str] | Sequence[np.ndarray]) -> torch.Tensor:
        return self.flow.negative_log_likelihood(self.vectors(batch))

    def fitted_encoder(self) -> Encoder:
        """The encoder followed by the flow (shares their modules; the flow in eval mode)."""
        self.flow.eval()
        return Encoder([*self.encoder, self.flow], name=f"{self.encoder.name}+flow")
