"""A count that an objective reads every step (its noise draws, its steps), kept on the host.

Reading a buffer that lives on an accelerator waits for everything queued on that device, so a
count read at every step would stall every step. The count is a Python int; its buffer (what the
state dict and checkpoints hold) follows it with asynchronous writes and is read back only after a
state dict is loaded.
"""

from __future__ import annotations

import torch
from torch import nn


class HostCounter:
    """The int64 scalar buffer `name` of `module`, with its value mirrored on the host."""

    def __init__(self, module: nn.Module, name: str, value: int = 0) -> None:
        module.register_buffer(name, torch.tensor(value, dtype=torch.int64))
        self._module = module
        self._name = name
        self.value = value
        module.register_load_state_dict_post_hook(self._reload)

    def _reload(self, module: nn.Module, incompatible_keys) -> None:
        self.value = int(module.get_buffer(self._name))  # once per load: the one read of the buffer

    def set(self, value: int) -> None:
        self.value = int(value)
        self._module.get_buffer(self._name).fill_(self.value)

    def take(self) -> int:
        """The current value; the count goes up by one."""
        value = self.value
        self.set(value + 1)
        return value
