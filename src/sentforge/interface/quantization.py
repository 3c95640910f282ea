"""Embedding quantization with the semantics and output of sentence-transformers' `quantize_embeddings`.

int8/uint8 map each dimension's [min, max] range (from `ranges`, else `calibration_embeddings`, else the
embeddings themselves) onto 256 buckets; binary/ubinary keep the sign bit of each dimension and pack 8
dimensions per byte (binary is the packed byte shifted by -128 into int8, as sentence-transformers does).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sentforge.support.errors import ConfigError
from sentforge.support.loaded import is_instance

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

PRECISIONS = ("float32", "int8", "uint8", "binary", "ubinary")
# Ranges calibrated on fewer vectors than this are noisy; sentence-transformers warns at the same point.
_FEW_CALIBRATION_VECTORS = 100


def check_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    return precision


def quantization_ranges(embeddings: np.ndarray) -> np.ndarray:
    """Per-dimension (min, max) as a (2, dim) array: reuse it to quantize other batches on the same buckets."""
    embeddings = _as_float_array(embeddings)
    return np.vstack((embeddings.min(axis=0), embeddings.max(axis=0)))


def quantize_embeddings(embeddings: np.ndarray | torch.Tensor | Sequence, precision: str,
                        ranges: np.ndarray | None = None,
                        calibration_embeddings: np.ndarray | None = None) -> np.ndarray:
    """Quantize float embeddings to `precision` (one of PRECISIONS); returns a numpy array.

    Output dtypes: float32 -> float32, int8/binary -> int8, uint8/ubinary -> uint8; binary precisions
    have ceil(dim / 8) columns.
    """
    check_precision(precision)
    embeddings = _as_float_array(embeddings)
    if precision == "float32":
        return embeddings.astype(np.float32)
    if precision.endswith("int8"):
        if ranges is None and calibration_embeddings is not None:
            ranges = quantization_ranges(calibration_embeddings)
        elif ranges is None:
            if embeddings.ndim == 2 and embeddings.shape[0] == 0:
                return np.zeros(embeddings.shape, dtype=np.int8 if precision == "int8" else np.uint8)
            if embeddings.ndim == 1 or embeddings.shape[0] == 1:
                raise ConfigError(f"cannot compute {precision} quantization ranges from a single embedding; "
                                  "pass `ranges` or `calibration_embeddings` from a representative set")
            if embeddings.shape[0] < _FEW_CALIBRATION_VECTORS:
                logger.warning("computing %s quantization ranges from only %d embeddings; pass `ranges` or "
                               "`calibration_embeddings` for stable buckets", precision, len(embeddings))
            ranges = quantization_ranges(embeddings)
        ranges = np.asarray(ranges, dtype=np.float32)
        if ranges.shape != (2, embeddings.shape[-1]):
            raise ConfigError(f"ranges must have shape (2, {embeddings.shape[-1]}), got {ranges.shape}")
        starts = ranges[0]
        steps = (ranges[1] - starts) / 255
        steps = np.where(steps == 0, 1, steps)
        buckets = np.clip(np.floor((embeddings - starts) / steps), 0, 255)
        return buckets.astype(np.uint8) if precision == "uint8" else (buckets - 128).astype(np.int8)
    packed = np.packbits(embeddings > 0, axis=-1)
    return packed if precision == "ubinary" else (packed - 128).astype(np.int8)


def _as_float_array(embeddings) -> np.ndarray:
    if is_instance(embeddings, "torch", "Tensor"):
        embeddings = embeddings.detach().cpu().float().numpy()
    elif isinstance(embeddings, (list, tuple)):
        if embeddings and is_instance(embeddings[0], "torch", "Tensor"):
            import torch

            embeddings = torch.stack(list(embeddings)).detach().cpu().float().numpy()
        embeddings = np.asarray(embeddings)
    embeddings = np.asarray(embeddings)
    if not np.issubdtype(embeddings.dtype, np.floating):
        raise ConfigError(f"embeddings to quantize must be floating point, got {embeddings.dtype}")
    return embeddings
