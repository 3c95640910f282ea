"""Concatenation of the L2-normalised members: the simplest meta-embedding (Poerner et al., 2020, §3.1)."""

from __future__ import annotations

import numpy as np

from sentforge.meta.base import MetaMethod


class Concatenation(MetaMethod):
    """F(s) = [F_1(s)/|F_1(s)|; ...; F_J(s)/|F_J(s)|]; dimension sum_j d_j, nothing to fit."""

    method_name = "concat"

    @property
    def output_dim(self) -> int:
        return sum(self.input_dims or [])

    def _fit(self, views: list[np.ndarray]) -> None:
        del views

    def _transform(self, views: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(views, axis=1)
