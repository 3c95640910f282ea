"""An adapt output written by an earlier version (before results were typed) reads and resumes unchanged.

tests/fixtures/adapt-old/ holds what that version wrote for the run below (`CANDIDATES`, adapt_worker.FAST, the
test set) on the tiny model: its report.json, and its adapt.json as it stood during the first step of TSDAE's
probe (the start model done, PAUSE not applicable). The run's paths are placeholders: {MODEL}, {DATA}, {OUTPUT},
and {KEY}, the tiny model folder's name in candidate names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sentforge
from sentforge.adaptation.adapt_state import STATE_FILE, AdaptState
from sentforge.adaptation.intervals import save_items
from sentforge.adaptation.report import markdown
from sentforge.adaptation.result import CandidateResult
from sentforge.evaluation import load_dataset
from sentforge.support.errors import ConfigError

from adapt_domain import domain, run  # noqa: F401 - the fixture and the fast adapt call

pytestmark = pytest.mark.usefixtures("one_torch_thread")
FIXTURES = Path(__file__).parents[1] / "fixtures" / "adapt-old"
RECORDED = FIXTURES.parent / "adapt-recorded"
CANDIDATES = ["tsdae", "mnrl", "tsdae+mnrl", "pause", "meta-concat", "distil"]


def old_file(name: str, model: Path, data: Path, output: Path) -> str:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    for placeholder, value in (("{MODEL}", model), ("{DATA}", data), ("{OUTPUT}", output), ("{KEY}", model.name)):
        text = text.replace(placeholder, str(value))
    return text


def test_every_old_result_reads_and_writes_back_the_same_json():
    report = json.loads((FIXTURES / "report.json").read_text(encoding="utf-8"))
    assert {r["status"] for r in report["candidates"].values()} == {"done", "skipped", "not applicable"}
    for name, saved in report["candidates"].items():
        result = CandidateResult.from_json(saved)
        assert json.dumps(result.to_json()) == json.dumps(saved), name  # the same keys, values and order
    assert f"Selected: **{report['selected']}**" in markdown(report)


@pytest.mark.parametrize("saved", [FIXTURES / "adapt-interrupted.json", RECORDED / "adapt.json"])
def test_a_saved_state_reads_and_writes_back_the_same_json(saved, tmp_path):
    # Its typed sections (state_records.py) write the keys, values and order they read, from an earlier version's
    # interrupted run (no load time measured yet, no leftover section) and from this version's finished one.
    (tmp_path / STATE_FILE).write_text(saved.read_text(encoding="utf-8"), encoding="utf-8")
    before = json.loads(saved.read_text(encoding="utf-8"))
    calls = before.pop("calls_s", [])
    state = AdaptState(tmp_path, before["settings"])
    assert state.open()
    after = state.to_json()
    assert json.dumps({key: after[key] for key in before}) == json.dumps(before)
    assert after["calls_s"][:-1] == calls


def test_an_unknown_entry_is_refused():
    with pytest.raises(ConfigError, match="unknown entries colour"):
        CandidateResult.from_json({"kind": "start", "method": "start", "status": "done", "colour": "red"})


def test_an_interrupted_old_run_resumes_to_the_old_report(tiny_bert_dir, domain, tmp_path):  # noqa: F811
    out = tmp_path / "adapted"
    out.mkdir()
    (out / "adapt.json").write_text(old_file("adapt-interrupted.json", tiny_bert_dir, domain, out), encoding="utf-8")
    saved = json.loads((out / "adapt.json").read_text(encoding="utf-8"))
    start = f"{tiny_bert_dir.name}.start"
    # The start model's per-unit dev scores, which the earlier version saved beside the state as it finished.
    save_items(out, start, load_dataset(domain / "dev.jsonl").item_scores(sentforge.load(tiny_bert_dir)))
    # Its rule, "significant", was the default then: the same command now names it.
    report = run(tiny_bert_dir, domain, out, test=domain / "test.jsonl", candidates=CANDIDATES,
                 select_rule="significant")
    old = json.loads(old_file("report.json", tiny_bert_dir, domain, out))
    assert report["selected"] == old["selected"]
    assert list(report["candidates"]) == list(old["candidates"])
    for name, result in report["candidates"].items():
        before = old["candidates"][name]
        assert list(result) == list(before), name  # the layout: the same keys in the same order
        assert result["status"] == before["status"], name
        for key in ("steps", "best_step", "planned_steps", "members", "reason"):
            assert result.get(key) == before.get(key), (name, key)
        for key in ("dev", "test"):
            assert result.get(key) == pytest.approx(before.get(key), abs=1e-6), (name, key)
    # The start model finished before the interruption: taken up as the earlier version recorded it.
    kept = saved["results"][start]
    assert {key: report["candidates"][start][key] for key in kept} == kept
