"""MTEB task names select the sentforge task they stand for; an unknown name gets the closest names."""

from __future__ import annotations

import logging

import pytest

from sentforge.support.errors import ConfigError
from sentforge.evaluation.registry import resolve_tasks
from sentforge.integrations.task_names import TASK_ALIASES

from conftest import assert_one_line_error, run_cli


@pytest.mark.parametrize("mteb, sentforge", [("SICK-R", "SICKRelatedness"), ("sick-r", "SICKRelatedness"),
                                             ("STSBenchmark", "STSBenchmark"), ("AskUbuntuDupQuestions", "AskUbuntu"),
                                             ("TwitterURLCorpus", "TwitterPara"), ("SciDocsRR", "SciDocs")])
def test_mteb_names_select_the_sentforge_task(mteb, sentforge):
    assert [cls.metadata.name for cls in resolve_tasks(mteb)] == [sentforge]


def test_every_mteb_name_of_the_table_is_accepted():
    for alias in TASK_ALIASES:
        for name in alias.mteb:
            # MTEB's STSBenchmark is also a sentforge name, which wins (SentEval's file; -raw is MTEB's text)
            expected = name if name == "STSBenchmark" else alias.sentforge
            assert [cls.metadata.name for cls in resolve_tasks(name)] == [expected]


def test_an_alias_whose_scores_differ_says_so(caplog):
    with caplog.at_level(logging.INFO, logger="sentforge"):
        resolve_tasks("TwitterSemEval2015")
    assert any("TwitterPara" in r.getMessage() and "scores differ" in r.getMessage() for r in caplog.records)


def test_a_misspelt_name_gets_did_you_mean():
    with pytest.raises(ConfigError, match="did you mean SICKRelatedness or SICK-R"):
        resolve_tasks("SICKR")
    with pytest.raises(ConfigError, match="did you mean STSBenchmark"):
        resolve_tasks("STS-B")
    with pytest.raises(ConfigError, match="did you mean STSBenchmark"):
        resolve_tasks("STSBenchmrk")


def test_cli_unknown_task_is_one_error_line_before_the_model_loads(tmp_path, capsys):
    code, _, err = run_cli(["eval", "-m", tmp_path / "no-such-model", "--tasks", "SICKR",
                            "--data-dir", tmp_path / "data", "-o", tmp_path / "r.json"], capsys)
    assert_one_line_error(code, err, "unknown task 'SICKR'", "did you mean SICKRelatedness or SICK-R")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
