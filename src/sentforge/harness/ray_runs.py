"""The runs of a resumable command (a labels run, an adapt candidate) as Ray core tasks on a cluster.

Each run is one task that asks for its CPUs and GPUs; Ray places it on a worker that has them, the run's torch
threads are its CPUs, and a worker process or node lost mid-run makes Ray start the task again on another worker
(`RETRIES` times), where the run resumes from the last checkpoint in its run directory (on storage every node
shares). The command's own process, the coordinator, keeps the state file and decides which run goes next and
with what time limit; this module connects to the cluster, says how many runs fit at once (the slots), submits
runs and hands back each finished one with the worker that ran it. Ray is imported only here, and only when a
command asks for `--engine ray`. See docs/scale.md.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sentforge.support.errors import ConfigError, SentforgeError

ENGINES = ("local", "ray")
RETRIES = 3  # restarts of a run whose worker process or node was lost
CONNECT_TIMEOUT_S = 5.0


class RunLostError(SentforgeError):
    """A run's worker was lost more often than Ray retries it."""


@dataclass(frozen=True)
class RunResources:
    """What one run asks of a worker: CPUs (also its torch threads) and GPUs (a fraction shares one)."""

    cpus: int = 1
    gpus: float = 0.0


def check_engine(engine: str, address: str | None, resources: RunResources) -> None:
    """The engine options' rules, before any work (Ray is not imported)."""
    if engine not in ENGINES:
        raise ConfigError(f"--engine {engine!r}: choose one of {', '.join(ENGINES)}")
    if not isinstance(resources.cpus, int) or resources.cpus < 1:
        raise ConfigError(f"--cpus-per-run must be a positive whole number, got {resources.cpus}")
    if not resources.gpus >= 0:
        raise ConfigError(f"--gpus-per-run must be 0 or more, got {resources.gpus}")
    if engine == "local" and (address is not None or resources != RunResources()):
        raise ConfigError("--address, --cpus-per-run and --gpus-per-run place runs on a Ray cluster: "
                          "give them with --engine ray")


@dataclass
class FinishedRun:
    """A run's return value, the worker that ran it ({"host", "node" (its address), "node_id" (Ray's),
    "seconds": those of its last attempt there) and `wall_s`, the seconds from its submission to its result as
    the coordinator saw them."""

    name: str
    result: Any
    worker: dict[str, Any]
    wall_s: float


def _on_worker(function: Callable[..., Any], threads: int, args: tuple) -> tuple[Any, dict[str, Any]]:
    """The task body: `function(*args)` with `threads` torch threads, and where and how long it ran."""
    import ray
    import torch

    torch.set_num_threads(threads)
    started = time.monotonic()
    result = function(*args)
    return result, {"host": socket.gethostname(), "node": ray.util.get_node_ip_address(),
                    "node_id": ray.get_runtime_context().get_node_id(), "seconds": round(time.monotonic() - started, 2)}


class RayRuns:
    """A connection to a Ray cluster that runs one function per run with `resources`; a context manager
    (leaving it cancels the runs still going, whose checkpoints stay to resume, and disconnects)."""

    def __init__(self, address: str | None, resources: RunResources) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigError("--engine ray needs Ray: pip install 'sentforge[ray]'") from None
        self.ray, self.resources = ray, resources
        self._pending: dict[Any, tuple[str, float]] = {}  # task reference: (run name, submitted at)
        self.slots_seen = 0  # the most slots the cluster had when asked
        self._connected_here = not ray.is_initialized()
        if self._connected_here:
            _connect(ray, address)
        self._task = ray.remote(_on_worker)

    def __enter__(self) -> RayRuns:
        return self

    def __exit__(self, *exc: Any) -> None:
        for reference in self._pending:
            self.ray.cancel(reference, force=True)
        self._pending.clear()
        if self._connected_here:
            self.ray.shutdown()

    def slots(self) -> int:
        """How many runs the cluster's live nodes hold at once (each node: its CPUs and GPUs over a run's)."""
        count = 0
        for node in self.ray.nodes():
            if node["Alive"]:
                total = node["Resources"]
                fits = int(total.get("CPU", 0) // self.resources.cpus)
                if self.resources.gpus:
                    fits = min(fits, int(total.get("GPU", 0) // self.resources.gpus))
                count += fits
        if not count:
            raise ConfigError(f"no node of the Ray cluster has {self.resources.cpus} CPUs"
                              + (f" and {self.resources.gpus:g} GPUs" if self.resources.gpus else "")
                              + " for one run: lower --cpus-per-run / --gpus-per-run or add workers")
        self.slots_seen = max(self.slots_seen, count)
        return count

    def submit(self, name: str, function: Callable[..., Any], *args: Any) -> None:
        """Run `function(*args)` on a worker; `function` must be importable there (a module's function)."""
        reference = self._task.options(name=name, num_cpus=self.resources.cpus, num_gpus=self.resources.gpus,
                                       max_retries=RETRIES).remote(function, self.resources.cpus, args)
        self._pending[reference] = (name, time.monotonic())

    def wait(self, timeout: float) -> list[FinishedRun]:
        """The first run to finish within `timeout` seconds (an empty list when none does); a run's own exception
        is raised as itself, a run lost more often than Ray retries it as RunLostError."""
        if not self._pending:
            return []
        ready, _ = self.ray.wait(list(self._pending), num_returns=1, timeout=timeout)
        finished = []
        for reference in ready:
            name, submitted = self._pending.pop(reference)
            try:
                result, worker = self.ray.get(reference)
            except self.ray.exceptions.RayTaskError as err:
                raise err.as_instanceof_cause() from None
            except self.ray.exceptions.RayError as err:
                raise RunLostError(f"run {name} lost its worker {RETRIES + 1} times ({type(err).__name__}); rerun "
                                   "the command to resume it from its last checkpoint") from err
            finished.append(FinishedRun(name, result, worker, round(time.monotonic() - submitted, 2)))
        return finished


def _connect(ray: Any, address: str | None) -> None:
    """Join the cluster at `address` ("auto": the one `ray start` runs on this machine; None: RAY_ADDRESS or a
    new local one), with one error line when nothing answers there."""
    if address not in (None, "auto", "local"):
        host, _, port = address.split("://")[-1].rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
        except (OSError, ValueError) as err:
            raise ConfigError(f"--address {address}: no Ray cluster answers there ({err}); start one with "
                              "`ray start --head` (see docs/scale.md)") from None
    try:
        ray.init(address=address, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise ConfigError(f"--address {address or 'auto'}: cannot join the Ray cluster: {err}") from None
