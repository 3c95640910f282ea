"""Compute precisions of inference: `encode(dtype=...)`, `sentforge encode --dtype` and
`sentforge.load(..., model_kwargs={"torch_dtype": ...})` (the sentence-transformers spelling).

The forward pass runs with the weights cast to that precision (LayerNorm included, as in
sentence-transformers' half-precision models); the vectors are returned as float32.
float16 and bfloat16 halve the memory traffic of the forward pass; on a GPU they run on its tensor
cores. On the CPU only bfloat16 is offered to `encode`: CPUs compute float16 slowly (no hardware
support on most of them) and with a narrower exponent range than bfloat16, so it would be slower
than float32 and less accurate than bfloat16 at once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from sentforge.support.errors import ConfigError
from sentforge.support.loaded import is_instance

logger = logging.getLogger(__name__)

# Accepted names -> torch dtype names (torch is imported only when a dtype is used).
DTYPE_NAMES = {"float32": "float32", "fp32": "float32", "float": "float32",
               "float16": "float16", "fp16": "float16", "half": "float16",
               "bfloat16": "bfloat16", "bf16": "bfloat16"}
CHOICES = ("float32", "float16", "bfloat16")


def dtype_name(value: Any, what: str = "dtype") -> str | None:
    """The name in CHOICES of the compute precision `value` names (a torch dtype or a name such as "bf16");
    None stays None. A name is checked without importing torch (`sentforge encode` checks its options first)."""
    if value is None:
        return None
    if isinstance(value, str):
        name = DTYPE_NAMES.get(value.strip().lower().removeprefix("torch."), "")
    else:
        name = str(value).removeprefix("torch.") if is_instance(value, "torch", "dtype") else ""
    if name not in CHOICES:
        raise ConfigError(f"{what} {value!r} is not a compute precision; use one of {', '.join(CHOICES)} "
                          "(a name or the torch dtype)")
    return name


def parse_dtype(value: Any, what: str = "dtype"):
    """The torch dtype that `value` names (a torch dtype or a name such as "bfloat16"); None stays None."""
    name = dtype_name(value, what)
    if name is None:
        return None
    import torch

    return getattr(torch, name)


def check_device_dtype(dtype, device) -> None:
    """Refuse float16 inference on the CPU (see the module docstring)."""
    import torch

    if dtype == torch.float16 and device.type == "cpu":
        raise ConfigError("dtype float16 needs a GPU (--device cuda); on the CPU use bfloat16, which is "
                          "faster there and keeps float32's range")


@contextlib.contextmanager
def weights_in(module, dtype, device) -> Iterator[None]:
    """Run the block with `module`'s floating-point parameters in `dtype` (nothing to do for None or the
    dtype they have). The cast copies are made once per call, as sentence-transformers' half-precision
    models hold them; the original tensors are put back afterwards, untouched."""
    if dtype is None:
        note_half_weights(module, device)
        yield
        return
    check_device_dtype(dtype, device)
    originals = [(p, p.data) for p in module.parameters() if p.is_floating_point() and p.dtype != dtype]
    try:
        for param, data in originals:
            param.data = data.to(dtype)
        yield
    finally:
        for param, data in originals:
            param.data = data


def note_half_weights(module, device) -> None:
    """Say once per model what `.half()` on the CPU does (sentence-transformers' habit, so it runs rather than being
    refused as `dtype="float16"` is): the forward pass computes in float16 there, slowly and in float16's range,
    and the vectors come back as float32 (sentence-transformers returns them as float16)."""
    import torch

    if device.type != "cpu" or getattr(module, "_noted_half_weights", False):
        return
    if any(param.dtype == torch.float16 for param in module.parameters()):
        module._noted_half_weights = True
        logger.warning("the model's weights are float16 (.half()) on the CPU: the forward pass computes in float16, "
                       "which CPUs run slowly, and the vectors are returned as float32 all the same; use .float(), "
                       "or encode(dtype='bfloat16') for a faster, half-size forward pass on the CPU")
