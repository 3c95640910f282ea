"""Data-parallel helpers over torch.distributed.

The same command runs on one process or on N: launched by `torchrun --nproc_per_node N` or
`accelerate launch --num_processes N`, both of which set RANK / WORLD_SIZE / LOCAL_RANK /
MASTER_ADDR / MASTER_PORT; `init_distributed()` then joins the process group (gloo on CPU, NCCL on
GPUs). Without those variables everything here is a no-op on a single process.
"""

from __future__ import annotations

import logging
import os

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


def launched_distributed() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def choose_device(requested: torch.device | None, cuda_available: bool, local_rank: int) -> torch.device:
    """The device of the process with this local rank: a bare `cuda`, or no choice on a machine with CUDA,
    means the GPU of its local rank, so that N processes on one node use N different GPUs."""
    if requested is None:
        return torch.device("cuda", local_rank) if cuda_available else torch.device("cpu")
    if requested.type == "cuda" and requested.index is None:
        return torch.device("cuda", local_rank)
    return requested


def choose_backend(device: torch.device, nccl_available: bool) -> str:
    """NCCL between processes on GPUs, gloo otherwise."""
    return "nccl" if device.type == "cuda" and nccl_available else "gloo"


def process_device(requested: torch.device | None = None) -> torch.device:
    """`choose_device` for this process, on this machine."""
    return choose_device(requested, torch.cuda.is_available(), local_rank())


def init_distributed(device: torch.device | None = None) -> bool:
    """Join the process group the launcher described; True when running on several processes.

    `device` is the one asked for (None: none asked); the group's backend follows `process_device(device)`.
    """
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size() > 1
    if not launched_distributed():
        return False
    device = process_device(device)
    backend = choose_backend(device, dist.is_nccl_available())
    if backend == "nccl":
        torch.cuda.set_device(device)
    dist.init_process_group(backend=backend)
    logger.info("process %d of %d joined the %s group on %s", dist.get_rank(), dist.get_world_size(),
                dist.get_backend(), device)
    return dist.get_world_size() > 1


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def world_size() -> int:
    return dist.get_world_size() if is_distributed() else 1


def rank() -> int:
    return dist.get_rank() if is_distributed() else 0


def local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", "0"))


def is_main_process() -> bool:
    return rank() == 0


def barrier() -> None:
    if is_distributed():
        dist.barrier()


def mean_across_processes(value: torch.Tensor) -> torch.Tensor:
    """The average of a (detached) tensor over all processes."""
    if not is_distributed():
        return value
    value = value.detach().clone()
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    return value / dist.get_world_size()


class _GatherWithGrad(torch.autograd.Function):
    """All-gather along dim 0 whose backward returns each process the gradient of the *sum* of all
    processes' losses with respect to its own rows, so that in-batch negatives from other processes
    train this process's encoder exactly as they would on one process with the whole batch."""

    @staticmethod
    def forward(ctx, tensor: torch.Tensor) -> torch.Tensor:
        ctx.rows = tensor.shape[0]
        parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, tensor.contiguous())
        return torch.cat(parts, dim=0)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.contiguous()
        dist.all_reduce(grad, op=dist.ReduceOp.SUM)
        start = dist.get_rank() * ctx.rows
        return grad[start:start + ctx.rows]


def gather_with_grad(tensor: torch.Tensor) -> torch.Tensor:
    """Concatenate `tensor` (same shape on every process) from all processes, in rank order, keeping
    gradients. Returns `tensor` itself on a single process.

    DDP averages gradients over processes, and each process's loss averages over its own queries, so
    the resulting update equals that of one process whose loss averages over all queries.
    """
    if not is_distributed():
        return tensor
    return _GatherWithGrad.apply(tensor)
