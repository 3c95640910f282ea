"""Average of the L2-normalised members, each zero-padded to the largest member dimension
(Coates and Bollegala, 2018; Poerner et al., 2020, §3.1)."""

from __future__ import annotations

import numpy as np

from sentforge.meta.base import MetaMethod


class Average(MetaMethod):
    """F(s) = (1/J) sum_j pad(F_j(s)/|F_j(s)|, max_j d_j); nothing to fit."""

    method_name = "average"

    @property
    def output_dim(self) -> int:
        return max(self.input_dims or [0])

    def _fit(self, views: list[np.ndarray]) -> None:
        del views

    def _transform(self, views: list[np.ndarray]) -> np.ndarray:
        total = np.zeros((views[0].shape[0], self.output_dim), dtype=np.float32)
        for view in views:
            total[:, :view.shape[1]] += view
        return total / len(views)
