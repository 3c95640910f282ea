"""What an adapt run leaves on disk: --keep selected (the default) keeps only OUTPUT/model and the report (a rerun
of the same command still reads it), --keep all every candidate's model; the disk need said before a run."""

from __future__ import annotations

import inspect
import json

import pytest

import sentforge
from sentforge.adaptation.run import _check_same_choice, disk_need
from sentforge.support.errors import ConfigError

from adapt_domain import run

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_keep_selected_leaves_the_model_and_the_report_and_a_rerun_reads_them(tiny_bert_dir, domain, tmp_path):
    out = tmp_path / "adapted"
    report = run(tiny_bert_dir, domain, out, candidates=["tsdae", "mnrl"], keep="selected")
    assert report["keep"] == "selected" and not (out / "runs").exists() and not (out / "cache").exists()
    assert (out / "model").is_dir() and (out / "report.md").is_file() and (out / "adapt.json").is_file()
    assert 0 < report["output_bytes"] < report["output_bytes_all"]
    assert ("--keep selected: only model/ and the report kept" in (text := (out / "report.md").read_text("utf-8"))
            and "to keep every candidate's model under runs/ too, run the command with --keep all" in text)
    # The same command again: every candidate is reused and the same choice is kept, its model in place.
    again = run(tiny_bert_dir, domain, out, candidates=["tsdae", "mnrl"], keep="selected")
    assert again["selected"] == report["selected"] and (out / "model").is_dir()
    assert {n: r.get("speed") for n, r in again["candidates"].items()} == {
        n: r.get("speed") for n, r in report["candidates"].items()}


def test_a_rerun_cannot_choose_a_model_that_keep_selected_removed(tmp_path):
    (tmp_path / "report.json").write_text(json.dumps({"selected": "m.tsdae"}), encoding="utf-8")
    _check_same_choice(tmp_path, "m.tsdae")
    with pytest.raises(ConfigError, match="--keep selected kept only m.tsdae's"):
        _check_same_choice(tmp_path, "m.mnrl")


def test_keep_takes_selected_by_default_or_all(tiny_bert_dir, domain, tmp_path):
    """A first run leaves the chosen model and the report, not every candidate's model (gigabytes)."""
    assert inspect.signature(sentforge.adapt).parameters["keep"].default == "selected"
    with pytest.raises(ConfigError, match="--keep: unknown value 'best'; choose from selected, all"):
        run(tiny_bert_dir, domain, tmp_path / "adapted", keep="best")
    assert not (tmp_path / "adapted").exists()


def test_the_disk_need_counts_each_run_with_its_checkpoint_until_the_end():
    model = 90 * 10 ** 6
    # Five trained runs (tsdae, mnrl, simcse, ct, distil) and tsdae+mnrl's four rungs with TSDAE's three
    # snapshots, two meta-embeddings of two members: 17 models kept, each run's checkpoint 3 models more.
    peak, kept, selected = disk_need(model, runs=9, snapshots=3, metas=2, members=2)
    assert selected == 2 * model  # a meta-embedding may be the selected model: its members
    assert kept == (9 + 3 + 4) * model + selected
    assert peak == kept + 3 * 9 * model
