"""The one scheduling loop of adapt and labels on a cluster (harness/side_by_side.py), on a fake cluster: runs
start in their order as slots free, a run that does not start leaves its slot to the next, an item waits until it
is ready, and what never becomes ready is handed back."""

from __future__ import annotations

from types import SimpleNamespace

from sentforge.harness.ray_runs import FinishedRun
from sentforge.harness.run_state import RunState
from sentforge.harness.side_by_side import SideBySide


class FakeCluster:
    """`slots` runs at once; each wait finishes the oldest run in flight."""

    def __init__(self, slots: int) -> None:
        self.held, self.in_flight, self.most = slots, [], 0

    def slots(self) -> int:
        return self.held

    def submit(self, name, function, *args) -> None:
        self.in_flight.append((name, function(*args)))
        self.most = max(self.most, len(self.in_flight))

    def wait(self, timeout: float) -> list[FinishedRun]:
        name, result = self.in_flight.pop(0)
        return [FinishedRun(name, result, {"host": "fake"}, 0.0)]


class Ticks:
    def __init__(self) -> None:
        self.n = 0

    def update(self) -> None:
        self.n += 1

    def set_postfix_str(self, *args, **kwargs) -> None:
        pass


def _drain(tmp_path, items, slots, skipped=(), ready=lambda item: True):
    cluster, finished, started, progress = FakeCluster(slots), [], [], Ticks()
    side = SideBySide(RunState(tmp_path / "out", {}), cluster)

    def start(item, free_slots):
        assert free_slots == slots
        if item in skipped:
            return False
        started.append(item)
        side.submit(item, SimpleNamespace(item=item), str.upper, item)
        return True

    left = side.drain(items, start, lambda run, kept: finished.append((kept.item, run.result)), progress, ready)
    return SimpleNamespace(left=left, started=started, finished=finished, most=cluster.most, ticks=progress.n)


def test_runs_start_in_order_as_slots_free_and_each_result_is_handed_back(tmp_path):
    ran = _drain(tmp_path, ["a", "b", "c", "d", "e"], slots=2)
    assert ran.started == ["a", "b", "c", "d", "e"] and ran.most == 2
    assert ran.finished == [(x, x.upper()) for x in "abcde"] and ran.left == [] and ran.ticks == 5


def test_a_run_that_does_not_start_leaves_its_slot_to_the_next(tmp_path):
    ran = _drain(tmp_path, ["a", "b", "c", "d"], slots=2, skipped={"a", "b"})
    assert ran.started == ["c", "d"] and ran.most == 2  # c and d side by side, not one round each
    assert [item for item, _ in ran.finished] == ["c", "d"] and ran.ticks == 4


def test_an_item_waits_until_it_is_ready_and_one_never_ready_is_handed_back(tmp_path):
    done: set[str] = set()

    def ready(item: str) -> bool:  # "b" starts from "a"; "z" from something that never runs
        return {"b": "a", "z": "never"}.get(item) in (None, *done)

    cluster, progress = FakeCluster(2), Ticks()
    side = SideBySide(RunState(tmp_path / "out", {}), cluster)
    order = []

    def start(item, slots):
        order.append(item)
        side.submit(item, item, str.upper, item)
        return True

    left = side.drain(["b", "z", "a", "c"], start, lambda run, kept: done.add(kept), progress, ready)
    assert order == ["a", "c", "b"] and left == ["z"] and done == {"a", "b", "c"}
