"""Generalised CCA meta-embedding (Rastogi et al., 2015; Poerner et al., 2020, §3.3)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from sentforge.support.errors import ConfigError
from sentforge.meta.base import MetaMethod, mean_and_covariance


class GCCA(MetaMethod):
    """Finds Theta = [Theta_1; ...; Theta_J] from the generalised eigenvalue problem

        Sigma theta = rho D theta,

    where Sigma is the covariance matrix of the concatenated (L2-normalised) members, with blocks
    Sigma_jl, and D is block-diagonal with the blocks Sigma_jj. Each Sigma_jj (in both matrices) is
    regularised by adding tau * trace(Sigma_jj) / d_j to its diagonal. The top-d eigenvectors give
    F(s) = sum_j Theta_j^T (F_j(s) - mu_j).

    dim: d, 1024 in the paper. tau: the regularisation strength, chosen on STS-B dev in the paper.
    """

    method_name = "gcca"

    def __init__(self, dim: int = 1024, tau: float = 0.1) -> None:
        super().__init__()
        self.dim = dim
        self.tau = tau
        self.mean: np.ndarray | None = None
        self.projection: np.ndarray | None = None
        self.eigenvalues: np.ndarray | None = None

    @property
    def output_dim(self) -> int:
        return self.dim

    def covariance_matrices(self, views: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, Sigma, D) of the already normalised member views, both matrices regularised."""
        mean, sigma = mean_and_covariance(views)
        within = np.zeros_like(sigma)
        start = 0
        for view in views:
            block = slice(start, start + view.shape[1])
            diagonal = sigma[block, block]
            diagonal[np.diag_indices_from(diagonal)] += self.tau * np.trace(diagonal) / view.shape[1]
            within[block, block] = diagonal
            start += view.shape[1]
        return mean, sigma, within

    def _fit(self, views: list[np.ndarray]) -> None:
        if not 0 < self.tau < float("inf"):
            raise ConfigError(f"gcca: tau must be > 0 (it keeps each Sigma_jj invertible), got {self.tau}")
        total = sum(view.shape[1] for view in views)
        self._check_dim(self.dim, total)
        mean, sigma, within = self.covariance_matrices(views)
        eigenvalues, eigenvectors = scipy.linalg.eigh(sigma, within, subset_by_index=[total - self.dim, total - 1])
        self.mean = mean.astype(np.float32)
        self.eigenvalues = eigenvalues[::-1].astype(np.float32)
        self.projection = np.ascontiguousarray(eigenvectors[:, ::-1], dtype=np.float32)

    def _transform(self, views: list[np.ndarray]) -> np.ndarray:
        return (np.concatenate(views, axis=1) - self.mean) @ self.projection

    def parameters(self) -> dict[str, np.ndarray]:
        return {"mean": self.mean, "projection": self.projection, "eigenvalues": self.eigenvalues}

    def _set_parameters(self, parameters: dict[str, np.ndarray]) -> None:
        self.mean = self._require(parameters, "mean")
        self.projection = self._require(parameters, "projection")
        self.eigenvalues = self._require(parameters, "eigenvalues")
