"""The candidate kinds are declared one per file of adaptation/candidates/ and gathered by its collector: every
method in the default order, each run by a collected kind, and no step compares a kind's name with a string."""

from __future__ import annotations

import re

from conftest import REPO

from sentforge.adaptation.candidates import KINDS, METHODS, Candidate, kind_of
from sentforge.adaptation.result import DONE, SKIPPED, NotRun, StartResult, finished_type

PACKAGE = REPO / "src" / "sentforge"
KIND_COMPARE = re.compile(r"""kind["']?\]?\s*(?:==|!=|not\s+in|in)\s*[(\[{]?\s*"""
                          r"""["'](?:start|train|meta|distil|static)["']""")


def test_the_methods_come_in_the_default_order_each_run_by_a_collected_kind():
    assert list(METHODS) == ["start", "tsdae", "mnrl", "setfit", "tsdae+mnrl", "tsdae+setfit", "pause", "simcse", "ct",
                             "regression", "augsbert", "tsdae+augsbert", "marginmse", "mnrl+marginmse",
                             "tsdae+marginmse", "meta-concat", "meta-gcca", "rerank", "distil", "static"]
    assert {method.kind for method in METHODS.values()} <= set(KINDS)
    ladder = Candidate("m.tsdae+mnrl", METHODS["tsdae+mnrl"], "m", "m")
    assert type(kind_of(ladder)).__name__ == "TsdaeLadder" and ladder.after == "m.tsdae"


def test_each_file_of_the_package_declares_one_kind():
    files = {path.stem for path in (PACKAGE / "adaptation" / "candidates").glob("*.py")} - {"__init__", "base"}
    declared = {kind.__module__.rsplit(".", 1)[-1] for kind in KINDS}
    assert declared == files and len(KINDS) == len(files)


def test_a_candidate_outcome_is_its_kinds_result_type():
    start = Candidate("m.start", METHODS["start"], "m", "m")
    assert isinstance(start.outcome(DONE, dev=1.0), StartResult)
    skipped = Candidate("distil", METHODS["distil"], None, None).outcome(SKIPPED, reason="no time")
    assert isinstance(skipped, NotRun) and skipped.to_json()["kind"] == "distil"
    assert {finished_type(kind.result_type.KIND) for kind in KINDS} == {kind.result_type for kind in KINDS}


def test_no_module_compares_a_kind_with_a_string():
    found = {path.relative_to(PACKAGE).as_posix(): len(KIND_COMPARE.findall(path.read_text(encoding="utf-8")))
             for path in PACKAGE.rglob("*.py")}
    assert not {name: count for name, count in found.items() if count}
