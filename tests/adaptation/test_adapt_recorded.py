"""A finished adapt run recorded by this version (tests/fixtures/adapt-recorded/, recorded_adapt.py) resumes
with nothing left to run and writes report.json and report.md byte for byte again; the command line's help of
`adapt` and `labels` reads as recorded (tests/fixtures/help/)."""

from __future__ import annotations

import os

import pytest

from conftest import run_cli
from recorded_adapt import FIXTURE, in_work, lay_out, record, rerun

from adapt_domain import domain  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("one_torch_thread")
RECORD = bool(os.environ.get("RECORD_ADAPT_RUN"))  # record the run and the help texts anew (recorded_adapt.py)


def test_the_recorded_run_resumes_to_the_same_report(tiny_bert_dir, domain, tmp_path):  # noqa: F811
    if RECORD:
        record(tiny_bert_dir, domain, tmp_path / "recording")
    output = lay_out(tmp_path)
    with in_work(tmp_path, tiny_bert_dir, domain):
        rerun()
    for name in ("report.json", "report.md"):
        assert (output / name).read_text(encoding="utf-8") == (FIXTURE / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize("command", ["adapt", "labels"])
def test_the_help_reads_as_recorded(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("TERMINAL_WIDTH", "120")
    code, out, _ = run_cli([command, "--help"], capsys)
    assert code == 0
    recorded = FIXTURE.parent / "help" / f"{command}.txt"
    if RECORD:
        recorded.parent.mkdir(exist_ok=True)
        recorded.write_text(out, encoding="utf-8")
    assert out == recorded.read_text(encoding="utf-8")
