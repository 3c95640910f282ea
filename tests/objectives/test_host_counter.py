"""HostCounter: an objective's per-step count kept on the host, saved and restored through its buffer."""

import torch
from torch import nn

from sentforge.objectives.host_counter import HostCounter


class Counting(nn.Module):
    def __init__(self, start: int = 0) -> None:
        super().__init__()
        self.counter = HostCounter(self, "draws", start)


def test_take_returns_the_count_and_writes_the_buffer():
    module = Counting(3)
    assert [module.counter.take() for _ in range(3)] == [3, 4, 5]
    assert module.counter.value == 6
    assert module.state_dict()["draws"].item() == 6
    assert module.state_dict()["draws"].dtype == torch.int64


def test_loading_a_state_dict_restores_the_host_value():
    saved = Counting()
    for _ in range(7):
        saved.counter.take()
    restored = Counting()
    restored.load_state_dict(saved.state_dict())
    assert restored.counter.value == 7
    assert restored.counter.take() == 7


def test_the_count_survives_moving_the_module():
    module = Counting()
    module.counter.take()
    module.to(torch.float64)  # buffers follow the module; the count is unchanged
    assert module.counter.take() == 1
    assert module.draws.item() == 2


def test_set_overrides_the_count():
    module = Counting(5)
    module.counter.set(0)
    assert module.counter.take() == 0
    assert module.draws.item() == 1
