"""SVD meta-embedding: the d-truncated SVD of the centred concatenation (Yin and Schütze, 2016;
Poerner et al., 2020, §3.2)."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.utils.extmath import svd_flip

from sentforge.meta.base import MetaMethod, mean_and_covariance


class SVD(MetaMethod):
    """With X the centred concatenation of the fit sentences and X = U S V^T, F(s) = V_d^T (concat(s) - mu):
    the coordinates of a sentence on the top-d right singular vectors.

    V and S come from the eigendecomposition of X^T X (sum_j d_j square), which is the same factorisation
    at a fraction of the cost of an SVD of the n x sum_j d_j matrix itself. Signs follow scikit-learn's
    `svd_flip` convention so that a refit gives the same vectors.

    dim: d, 1024 in the paper (the largest member dimension there).
    """

    method_name = "svd"

    def __init__(self, dim: int = 1024) -> None:
        super().__init__()
        self.dim = dim
        self.mean: np.ndarray | None = None
        self.components: np.ndarray | None = None
        self.singular_values: np.ndarray | None = None

    @property
    def output_dim(self) -> int:
        return self.dim

    def _fit(self, views: list[np.ndarray]) -> None:
        total = sum(view.shape[1] for view in views)
        self._check_dim(self.dim, total)
        mean, covariance = mean_and_covariance(views)
        eigenvalues, eigenvectors = scipy.linalg.eigh(covariance, subset_by_index=[total - self.dim, total - 1])
        eigenvalues, eigenvectors = eigenvalues[::-1], eigenvectors[:, ::-1]
        _, vt = svd_flip(np.zeros((1, self.dim)), np.ascontiguousarray(eigenvectors.T), u_based_decision=False)
        self.mean = mean.astype(np.float32)
        self.components = np.ascontiguousarray(vt.T, dtype=np.float32)
        self.singular_values = np.sqrt(np.clip(eigenvalues, 0, None) * views[0].shape[0]).astype(np.float32)

    def _transform(self, views: list[np.ndarray]) -> np.ndarray:
        return (np.concatenate(views, axis=1) - self.mean) @ self.components

    def parameters(self) -> dict[str, np.ndarray]:
        return {"mean": self.mean, "components": self.components, "singular_values": self.singular_values}

    def _set_parameters(self, parameters: dict[str, np.ndarray]) -> None:
        self.mean = self._require(parameters, "mean")
        self.components = self._require(parameters, "components")
        self.singular_values = self._require(parameters, "singular_values")
