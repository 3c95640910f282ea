"""Device strings ("cpu", "cuda", "cuda:1", "mps") checked against what this machine has."""

from __future__ import annotations

from sentforge.support.errors import ConfigError

ACCELERATORS = ("cuda", "mps", "xpu")


def parse_device(spec: str):
    """The torch.device that `spec` names, or a ConfigError saying why it cannot be used here."""
    import torch

    try:
        device = torch.device(spec)
    except (RuntimeError, ValueError, TypeError):
        raise ConfigError(f"--device {spec!r} is not a device; use cpu, cuda, cuda:N or mps") from None
    if device.type == "cpu":
        return device
    if device.type not in ACCELERATORS:
        raise ConfigError(f"--device {spec!r}: sentforge runs on cpu, cuda, mps or xpu")
    backend = getattr(torch, device.type, None) if device.type != "mps" else torch.backends.mps
    if backend is None or not backend.is_available():
        raise ConfigError(f"--device {spec!r}: no {device.type} device is available on this machine")
    count = backend.device_count() if hasattr(backend, "device_count") else 1
    if device.index is not None and device.index >= count:
        raise ConfigError(f"--device {spec!r}: this machine has {count} {device.type} device(s)")
    return device


def to_device(tensor, device):
    """`tensor` (built on the host) on `device`. To a CUDA device it goes through pinned memory with a
    non-blocking copy, so the host goes on preparing the next batch while the copy runs; elsewhere
    it is an ordinary `.to(device)` (a no-op on the CPU)."""
    import torch

    device = torch.device(device)
    if tensor.device == device or device.type != "cuda" or tensor.device.type != "cpu":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


def to_device_all(features: dict, device) -> dict:
    """Every tensor of a features dict on `device` (see `to_device`)."""
    return {key: to_device(value, device) for key, value in features.items()}
