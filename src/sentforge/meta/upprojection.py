"""Random up-projection: the baseline that controls for the meta-embedding's larger dimension
(Poerner et al., 2020, §5)."""

from __future__ import annotations

import numpy as np

from sentforge.meta.base import MetaMethod


class UpProjection(MetaMethod):
    """Each member j gets a fixed random matrix W_j of shape (d_j, d) with entries drawn from
    U(-1/sqrt(d_j), 1/sqrt(d_j)); F(s) = sum_j W_j^T F_j(s) / |F_j(s)|.

    With a single member this is the paper's baseline: the member's own vectors mapped to d dimensions
    without any information from other members. The draw depends only on `seed` and the member
    dimensions, so fitting needs no data.
    """

    method_name = "upprojection"

    def __init__(self, dim: int = 1024, seed: int = 0) -> None:
        super().__init__()
        self.dim = dim
        self.seed = seed
        self.matrices: list[np.ndarray] | None = None

    @property
    def output_dim(self) -> int:
        return self.dim

    def _fit(self, views: list[np.ndarray]) -> None:
        rng = np.random.default_rng(self.seed)
        self.matrices = []
        for view in views:
            bound = 1.0 / np.sqrt(view.shape[1])
            self.matrices.append(rng.uniform(-bound, bound, size=(view.shape[1], self.dim)).astype(np.float32))

    def _transform(self, views: list[np.ndarray]) -> np.ndarray:
        return sum(view @ matrix for view, matrix in zip(views, self.matrices))

    def parameters(self) -> dict[str, np.ndarray]:
        return {f"matrix_{j}": matrix for j, matrix in enumerate(self.matrices)}

    def _set_parameters(self, parameters: dict[str, np.ndarray]) -> None:
        self.matrices = [self._require(parameters, f"matrix_{j}") for j in range(len(self.input_dims))]
