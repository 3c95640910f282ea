"""The device of a timing: its line above a table (with the library versions), and device syncs."""

from __future__ import annotations

import platform


def synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def versions() -> dict[str, str]:
    import torch
    import transformers

    found = {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__}
    try:
        import sentence_transformers

        found["sentence-transformers"] = sentence_transformers.__version__
    except ImportError:
        pass
    found["device"] = torch.cuda.get_device_name() if torch.cuda.is_available() else platform.processor() or "cpu"
    return found


def print_device(device: str) -> dict[str, str]:
    """The line above a table: the device and the library versions; returns them."""
    info = versions()
    others = ", ".join(f"{k} {v}" for k, v in info.items() if k != "device")
    print(f"device: {device} ({info['device']}); {others}")
    return info
