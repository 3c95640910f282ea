"""A labels run for tests/learning_curve/test_labels.py, run as a subprocess that may be SIGKILLed, and the
callbacks that SIGKILL the Ray worker process training a run (tests/learning_curve/test_labels_ray.py) or hold it
until its node is removed (tests/adaptation/test_adapt_ray.py).

usage: labels_worker.py MODEL_DIR DATA_DIR OUTPUT [--kill-in-run N --kill-at-step S]
Kills itself (SIGKILL) at step S of the N-th run it trains (1-based), after that step's checkpoint.
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from pathlib import Path

import torch

import sentforge

# Two sizes, two repeats, four steps each (a checkpoint after every step).
FAST = {"fractions": [50, 100], "repeats": 2, "steps": 4, "batch_size": 4, "show_progress": False}


def run(model_dir: str | Path, data: str | Path, output: str | Path, callbacks=(), **options) -> dict:
    data = Path(data)
    return sentforge.labels(str(model_dir), data / "labelled.jsonl", data / "dev.jsonl", output,
                            callbacks=callbacks, **(FAST | options))


class KillOnce:
    """A training callback that SIGKILLs its own process at step `step` of the first run that reaches it in any
    process (the one that creates `marker`, which receives its pid), after that step's checkpoint."""

    def __init__(self, marker: Path, step: int) -> None:
        self.marker, self.step = marker, step

    def __call__(self, state) -> None:
        if state.step == self.step and first_to_mark(self.marker):
            os.kill(os.getpid(), signal.SIGKILL)


class HoldOnNode:
    """A training callback that, on the Ray node `node_id` only, holds the first run that reaches step `step` there
    (after that step's checkpoint): it writes its pid to `marker` and sleeps until the node's removal ends it."""

    def __init__(self, marker: Path, step: int, node_id: str) -> None:
        self.marker, self.step, self.node_id = marker, step, node_id

    def __call__(self, state) -> None:
        import ray

        if (state.step == self.step and ray.get_runtime_context().get_node_id() == self.node_id
                and first_to_mark(self.marker)):
            time.sleep(600)  # far longer than the test waits for the node's removal


def first_to_mark(marker: Path) -> bool:
    """Whether this process is the first in any to get here: it creates `marker` and writes its pid there."""
    try:
        handle = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(handle, str(os.getpid()).encode())
    os.close(handle)
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("model_dir", "data", "output"):
        parser.add_argument(name)
    parser.add_argument("--kill-in-run", type=int)
    parser.add_argument("--kill-at-step", type=int)
    args = parser.parse_args()
    torch.set_num_threads(1)
    started = [0]

    def kill(state) -> None:
        if state.step == 1:
            started[0] += 1
        if started[0] == args.kill_in_run and state.step == args.kill_at_step:
            os.kill(os.getpid(), signal.SIGKILL)

    run(args.model_dir, args.data, args.output, [kill] if args.kill_in_run else [])


if __name__ == "__main__":
    main()
