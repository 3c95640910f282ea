"""Per-step numbers (the loss, an objective's statistics) kept where they were computed and read to
the host together.

Reading a number computed on an accelerator makes the host wait until the device has finished all
the work queued before it; doing that every step keeps the host from preparing the next batch
while the device computes. The Trainer therefore reads on the CPU every step (a read costs nothing
there) and on accelerators only when it needs the numbers: at logging, evaluation and checkpoint
steps, and at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass
class StepRecord:
    step: int
    loss: float
    stats: dict[str, float]


@dataclass
class StepValues:
    """The steps whose numbers have not been read yet."""

    pending: list[tuple[int, Any, dict[str, Any]]] = field(default_factory=list)

    def add(self, step: int, loss: torch.Tensor | float, stats: dict[str, Any]) -> None:
        self.pending.append((step, loss, stats))

    def read(self) -> list[StepRecord]:
        """Every pending step's numbers as floats, with one device-to-host transfer; empties the queue."""
        if not self.pending:
            return []
        tensors = [value for _, loss, stats in self.pending for value in (loss, *stats.values())
                   if isinstance(value, torch.Tensor)]
        floats = iter(_to_host(tensors))

        def number(value: Any) -> float:
            return next(floats) if isinstance(value, torch.Tensor) else float(value)

        records = []
        for step, loss, stats in self.pending:
            loss_value = number(loss)
            records.append(StepRecord(step, loss_value, {key: number(value) for key, value in stats.items()}))
        self.pending = []
        return records


def _to_host(tensors: list[torch.Tensor]) -> list[float]:
    if not tensors:
        return []
    device = tensors[0].device
    stacked = torch.stack([t.detach().to(device=device, dtype=torch.float64).reshape(()) for t in tensors])
    return stacked.cpu().tolist()
