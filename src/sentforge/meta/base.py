"""The meta-embedding contract: scikit-learn-style `fit(list_of_arrays)` / `transform(list_of_arrays)`.

Each member's embeddings (one (n, d_j) array per member, rows aligned) are L2-normalised first, as in
Poerner et al. (2020), so that no member dominates through its scale. A fitted method is described by a
JSON config (`config()`) and a dict of named arrays (`parameters()`), saved as safetensors by the
MetaEncoder, and rebuilt with `from_saved(config, parameters)`. The registry of methods by name:
meta/registry.py.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from sentforge.support.errors import ConfigError, ModelFormatError

def l2_normalize(array: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.maximum(norms, 1e-12)


def mean_and_covariance(views: Sequence[np.ndarray], block_rows: int = 8192) -> tuple[np.ndarray, np.ndarray]:
    """Column means and (biased) covariance matrix of the concatenated views, in float64.

    Built block by block without materialising the concatenation: each block is centred and multiplied in
    float32 (BLAS sgemm, about twice as fast as double precision) and the block products are summed in
    float64, so rounding stays at the level of one block of `block_rows` rows.
    """
    n = views[0].shape[0]
    mean = np.concatenate([view.mean(axis=0, dtype=np.float64) for view in views])
    mean32 = mean.astype(np.float32)
    covariance = np.zeros((mean.size, mean.size), dtype=np.float64)
    for start in range(0, n, block_rows):
        block = np.concatenate([view[start:start + block_rows] for view in views], axis=1)
        block -= mean32
        covariance += block.T @ block
    return mean, covariance / n


class MetaMethod(ABC):
    """Combines J member embeddings of the same sentences into one vector per sentence.

    Subclasses define `method_name`, their hyper-parameters as `__init__` keyword arguments (stored under
    the same attribute names, so that `config()` can list them), `_fit(views)`, `_transform(views)`,
    `output_dim`, and the fitted arrays in `parameters()` / `_set_parameters()`.
    """

    method_name: ClassVar[str]
    # __init__ arguments that say how to run, not what the fitted method is (left out of the config).
    runtime_options: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self.input_dims: list[int] | None = None

    # ---------------------------------------------------------------- public API
    def fit(self, embeddings: Sequence[np.ndarray]) -> MetaMethod:
        views = self._prepare(embeddings, fitting=True)
        self.input_dims = [view.shape[1] for view in views]
        self._fit(views)
        return self

    def transform(self, embeddings: Sequence[np.ndarray]) -> np.ndarray:
        if self.input_dims is None:
            raise ConfigError(f"{self.method_name}: call fit() before transform()")
        return np.ascontiguousarray(self._transform(self._prepare(embeddings, fitting=False)), dtype=np.float32)

    def fit_transform(self, embeddings: Sequence[np.ndarray]) -> np.ndarray:
        return self.fit(embeddings).transform(embeddings)

    @property
    @abstractmethod
    def output_dim(self) -> int:
        """Size of the meta-embedding (known once fitted)."""

    def hyperparameters(self) -> dict[str, Any]:
        names = [p for p in inspect.signature(type(self).__init__).parameters
                 if p != "self" and p not in self.runtime_options]
        return {name: getattr(self, name) for name in names}

    def config(self) -> dict[str, Any]:
        return {"method": self.method_name, "params": self.hyperparameters(), "input_dims": self.input_dims}

    def parameters(self) -> dict[str, np.ndarray]:
        """Fitted arrays by name (empty for parameter-free methods)."""
        return {}

    @classmethod
    def from_saved(cls, config: dict[str, Any], parameters: dict[str, np.ndarray]) -> MetaMethod:
        """This method class rebuilt from `config()` and `parameters()`; `meta.registry.method_from_saved`
        picks the class by the config's method name."""
        try:
            method = cls(**config.get("params", {}))
        except TypeError as err:
            raise ModelFormatError(f"meta-embedding config for {cls.method_name}: {err}") from None
        method.input_dims = [int(d) for d in config["input_dims"]]
        method._set_parameters(parameters)
        return method

    # ---------------------------------------------------------------- for subclasses
    @abstractmethod
    def _fit(self, views: list[np.ndarray]) -> None: ...

    @abstractmethod
    def _transform(self, views: list[np.ndarray]) -> np.ndarray: ...

    def _set_parameters(self, parameters: dict[str, np.ndarray]) -> None:
        del parameters

    def _require(self, parameters: dict[str, np.ndarray], name: str) -> np.ndarray:
        if name not in parameters:
            raise ModelFormatError(f"{self.method_name}: saved parameters lack {name!r}")
        return parameters[name]

    def _check_dim(self, dim: int, total: int) -> None:
        if dim > total:
            raise ConfigError(f"{self.method_name}: dim={dim} exceeds the {total} dimensions the members give "
                              "together; choose a smaller --dim")

    def _prepare(self, embeddings: Sequence[np.ndarray], fitting: bool) -> list[np.ndarray]:
        if isinstance(embeddings, np.ndarray) or not len(embeddings):
            raise ConfigError(f"{self.method_name}: expected a list with one (n, d_j) array per member")
        views = [np.asarray(e, dtype=np.float32) for e in embeddings]
        for j, view in enumerate(views):
            if view.ndim != 2:
                raise ConfigError(f"{self.method_name}: member {j} embeddings have shape {view.shape}, expected 2-D")
            if not np.isfinite(view).all():
                raise ConfigError(f"{self.method_name}: member {j} embeddings contain NaN or infinite values")
        rows = {view.shape[0] for view in views}
        if len(rows) != 1:
            raise ConfigError(f"{self.method_name}: members give different numbers of rows "
                              f"{[v.shape[0] for v in views]}")
        if fitting and views[0].shape[0] < 2:
            raise ConfigError(f"{self.method_name}: fitting needs at least 2 sentences")
        if not fitting and [v.shape[1] for v in views] != self.input_dims:
            raise ConfigError(f"{self.method_name}: fitted on member dimensions {self.input_dims}, "
                              f"got {[v.shape[1] for v in views]}")
        return [l2_normalize(view) for view in views]
