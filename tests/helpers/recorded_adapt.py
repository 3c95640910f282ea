"""The finished adapt run of tests/fixtures/adapt-recorded/: how it was recorded, and how a test lays it out again.

The run (`SETTINGS`, on the tiny model and the adapt tests' domain files) trains TSDAE, MNRL and TSDAE then MNRL,
fits a meta-embedding, and its MNRL is scored 100 points lower (adapt_worker.penalise), so that racing stops it;
with --keep selected only what a rerun reads is left: adapt.json, the per-unit dev scores and the report (the
selected start model's copy, OUTPUT/model, is written again by every call).

Every path is relative to the folder the run is called from (`WORK`: the model as MODEL, the data in data/, the
output in OUTPUT), so that the recorded files, and the output's size that the report gives, are the same
wherever the folder is. A rerun over it has nothing left to run, and writes the report again. The report holds
the run's wall time and the output's size, which count the call's own time and the files the call found:
every call here runs on a stopped clock (`still_clock`), and the recording ends with a rerun that writes the
same report as the one before it, so that rerunning it reproduces it byte for byte. Figures are not drawn
(`no_figures`): their bytes depend on the plotting library's version.

To record it again (after a deliberate change of the report): RECORD_ADAPT_RUN=1 pytest
tests/adaptation/test_adapt_recorded.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import adapt_worker
from adapt_domain import run

FIXTURE = Path(__file__).parents[1] / "fixtures" / "adapt-recorded"
SETTINGS = {"candidates": ["tsdae", "mnrl", "tsdae+mnrl", "meta-concat", "distil"], "keep": "selected"}
MODEL, DATA, OUTPUT = Path("tiny-bert0"), Path("data"), Path("adapted")
STILL_AT = 1000.0  # what time.monotonic() says on a stopped clock


@contextlib.contextmanager
def still_clock() -> Iterator[None]:
    saved = time.monotonic
    time.monotonic = lambda: STILL_AT
    try:
        yield
    finally:
        time.monotonic = saved


@contextlib.contextmanager
def no_figures() -> Iterator[None]:
    saved = sys.modules.get("matplotlib")
    sys.modules["matplotlib"] = None  # an import of it raises ImportError: the figures are skipped
    try:
        yield
    finally:
        if saved is None:
            del sys.modules["matplotlib"]
        else:
            sys.modules["matplotlib"] = saved


@contextlib.contextmanager
def in_work(work: Path, model: Path, data: Path) -> Iterator[None]:
    """Run from `work`, where MODEL links to the tiny model and DATA holds the domain files."""
    work.mkdir(parents=True, exist_ok=True)
    if not (work / MODEL).exists():
        (work / MODEL).symlink_to(model.resolve(), target_is_directory=True)
    if (work / DATA).resolve() != data.resolve():
        shutil.copytree(data, work / DATA)
    before = os.getcwd()
    os.chdir(work)
    try:
        yield
    finally:
        os.chdir(before)


def call(output: Path = OUTPUT) -> dict:
    """The recorded run's command (from the work folder)."""
    return run(f"./{MODEL}", DATA, output, test=DATA / "test.jsonl", **SETTINGS)


def rerun() -> dict:
    """The recorded run's command again, on a stopped clock and without figures."""
    with still_clock(), no_figures():
        return call()


def lay_out(work: Path) -> Path:
    """A copy of the recorded run as `work`/OUTPUT."""
    shutil.copytree(FIXTURE, work / OUTPUT)
    return work / OUTPUT


def record(model: Path, data: Path, work: Path) -> None:
    """Run the recorded run anew in `work` and keep it as the fixture (replacing the one there)."""
    import sentforge.evaluation as evaluation
    from sentforge.adaptation.runner import RecipeRun

    patched = RecipeRun.train, RecipeRun.probe, evaluation.load_dataset  # what penalise replaces, restored after
    adapt_worker.penalise("mnrl")
    with in_work(work, model, data):
        try:
            with no_figures():
                call()
        finally:
            RecipeRun.train, RecipeRun.probe, evaluation.load_dataset = patched
        reports = []
        # A rerun reports the size of the files the previous one wrote, the recording's own included, whose
        # wall times take other widths: the third rerun reads the second's files and writes the fixed point.
        for _ in range(3):
            rerun()
            reports.append([(OUTPUT / name).read_bytes() for name in ("report.json", "report.md")])
    changed = [(a, b) for first, second in zip(*reports[1:]) for a, b in zip(first.decode().splitlines(),
                                                                          second.decode().splitlines()) if a != b]
    assert not changed, f"a rerun changed the report: {changed[:3]}"
    shutil.rmtree(FIXTURE, ignore_errors=True)
    selected = json.loads((work / OUTPUT / "report.json").read_text(encoding="utf-8"))["selected"]
    # A start model chosen is copied to OUTPUT/model by every call: the fixture holds no weights.
    kept = work / OUTPUT
    shutil.copytree(kept, FIXTURE, ignore=lambda folder, names: ["model"] if Path(folder) == kept and
                    selected.endswith(".start") else [])
