"""A command's runs side by side on a Ray cluster (`--engine ray` of adapt and labels): the waiting runs
started in their order as slots free, the runs in flight, each finished one handed back as it arrives, and the
wall time of that work, which the state keeps (its `parallel`) and the budget counts instead of the runs' own
times. The command decides how a run starts (its share of the time left, or that it is skipped) and what its
result records."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sentforge.harness.ray_runs import FinishedRun, RayRuns
from sentforge.harness.run_state import HEARTBEAT_SECONDS, RunState


class SideBySide:
    """The runs of `state`'s command on `cluster`: `running` ({name: what the command keeps with it}), in the
    order submitted."""

    def __init__(self, state: RunState, cluster: RayRuns) -> None:
        self.state, self.cluster = state, cluster
        self.prior, self.started = state.parallel.get("elapsed_s", 0.0), time.monotonic()
        self.running: dict[str, Any] = {}

    def elapsed(self) -> float:
        """The wall time of the command's side-by-side work so far, earlier calls' included."""
        return self.prior + time.monotonic() - self.started

    def drain(self, waiting: list[Any], start: Callable[[Any, int], bool], finish: Callable[[FinishedRun, Any], None],
              progress: Any, ready: Callable[[Any], bool] = lambda item: True) -> list[Any]:
        """Start the `waiting` items that are `ready`, in their order, while the cluster has free slots, and hand
        each finished run to `finish`, until none waits or runs. `start(item, slots)` submits the item's run
        (self.submit) or returns False when it does not run (a tick of `progress`). Returns the items left
        waiting, never ready, once nothing runs."""
        waiting = list(waiting)
        while waiting or self.running:
            slots = self.cluster.slots()
            for item in [item for item in waiting if ready(item)]:
                if len(self.running) >= slots:
                    break
                waiting.remove(item)
                if not start(item, slots):
                    progress.update()
            if not self.running:
                break
            self.collect(progress, finish)
        return waiting

    def submit(self, name: str, kept: Any, function: Callable[..., Any], *args: Any) -> None:
        """Run `function(*args)` on a worker as `name`, keeping `kept` with it until it finishes."""
        self.cluster.submit(name, function, *args)
        self.running[name] = kept

    def collect(self, progress: Any, finish: Callable[[FinishedRun, Any], None]) -> None:
        """Wait up to a heartbeat for a run to finish; hand each finished one to `finish` with what was kept with
        it (a tick of `progress` each), then save the side-by-side wall time in the state."""
        progress.set_postfix_str(f"running {', '.join(self.running)}", refresh=True)
        for finished in self.cluster.wait(HEARTBEAT_SECONDS):
            finish(finished, self.running.pop(finished.name))
            progress.update()
        self.state.beat_parallel(self.elapsed())
