"""Under a launcher, each process trains on the GPU of its local rank over NCCL, and on CPU over gloo."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from sentforge.support import distributed
from sentforge.support.distributed import choose_backend, choose_device

CUDA, CPU = torch.device("cuda"), torch.device("cpu")


@pytest.mark.parametrize(("requested", "cuda_available", "local_rank", "expected"), [
    (None, True, 3, torch.device("cuda", 3)),  # no --device on a GPU node: the local rank's GPU
    (CUDA, True, 1, torch.device("cuda", 1)),  # a bare --device cuda: the local rank's GPU, not GPU 0
    (torch.device("cuda", 2), True, 1, torch.device("cuda", 2)),  # an explicit index is kept
    (None, False, 1, CPU),
    (CPU, True, 1, CPU),
])
def test_each_process_gets_the_device_of_its_local_rank(requested, cuda_available, local_rank, expected):
    assert choose_device(requested, cuda_available, local_rank) == expected


@pytest.mark.parametrize(("device", "nccl_available", "expected"), [
    (torch.device("cuda", 1), True, "nccl"),
    (torch.device("cuda", 1), False, "gloo"),
    (CPU, True, "gloo"),
])
def test_gpus_talk_over_nccl_and_cpus_over_gloo(device, nccl_available, expected):
    assert choose_backend(device, nccl_available) == expected


@pytest.fixture()
def launched_as_local_rank_1(monkeypatch):
    """torchrun's variables for process 2 of 2 on one node, and a process group that only records its call."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "1")
    calls = {}
    monkeypatch.setattr(dist, "is_initialized", lambda: False)
    monkeypatch.setattr(dist, "init_process_group", lambda backend: calls.update(backend=backend))
    monkeypatch.setattr(dist, "get_rank", lambda: 1)
    monkeypatch.setattr(dist, "get_world_size", lambda: 2)
    monkeypatch.setattr(dist, "get_backend", lambda: calls["backend"])
    monkeypatch.setattr(torch.cuda, "set_device", lambda device: calls.update(cuda_device=device))
    return calls


@pytest.mark.parametrize("requested", [None, CUDA])
def test_init_on_a_gpu_node_joins_nccl_on_the_local_rank_gpu(launched_as_local_rank_1, monkeypatch, requested):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(dist, "is_nccl_available", lambda: True)
    assert distributed.init_distributed(requested)
    assert launched_as_local_rank_1 == {"backend": "nccl", "cuda_device": torch.device("cuda", 1)}


def test_init_on_a_cpu_node_joins_gloo(launched_as_local_rank_1, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert distributed.init_distributed(None)
    assert launched_as_local_rank_1 == {"backend": "gloo"}
