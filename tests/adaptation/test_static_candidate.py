"""adapt's static candidate on the tiny BERT: a static model distilled from the leading encoder, reported with
its dev score and encode speed, chosen when --min-texts-per-second is above every transformer's speed, skipped
with the reason when the budget cannot hold it, and run only when named."""

from __future__ import annotations

import numpy as np
import pytest
from selection_tables import BASE, L6, SWING, speed, table

import sentforge
from sentforge.adaptation.candidates import check_methods
from sentforge.adaptation.select import select
from sentforge.modules.token_vectors import TokenVectors

import adapt_worker
from adapt_domain import run

pytest.importorskip("model2vec")
pytestmark = pytest.mark.usefixtures("one_torch_thread")
STATIC = {**adapt_worker.FAST, "candidates": ["mnrl", "static"], "test": None}


def test_static_runs_only_when_named():
    assert "static" not in check_methods(None)
    assert check_methods(["static"]) == ["start", "static"]


def test_adapt_distils_the_leader_into_a_static_model_chosen_above_the_transformers_speed(tiny_bert_dir, domain,
                                                                                          tmp_path):
    output, key = tmp_path / "adapted", tiny_bert_dir.name
    report = run(tiny_bert_dir, domain, output, **{**STATIC, "test": domain / "test.jsonl"})
    static = report["candidates"]["static"]
    assert static["status"] == "done", static
    assert static["kind"] == "static" and static["distilled_from"] in (f"{key}.start", f"{key}.mnrl")
    assert static["fitted_texts"] > 0 and static["test"] is not None and "--static" in static["commands"][0]
    assert isinstance(sentforge.load(static["model_path"])[0], TokenVectors)
    transformers = [report["candidates"][f"{key}.{name}"]["speed"]["texts_per_second"] for name in ("start", "mnrl")]
    fastest, static_speed = max(transformers), static["speed"]["texts_per_second"]
    assert static_speed > fastest, (static_speed, transformers)
    markdown = (output / "report.md").read_text(encoding="utf-8")
    ratio = static_speed / report["candidates"][f"{key}.start"]["speed"]["texts_per_second"]
    assert f"{static_speed:.1f}" in markdown and (
        f"static: a static model (one vector per token) distilled from {static['distilled_from']}, fitted to its "
        f"vectors of {static['fitted_texts']} unlabelled texts; it encodes {ratio:.1f} times") in markdown
    # The bound is no setting: a rerun above every transformer's speed chooses again, from the same speeds.
    bound = float(np.sqrt(fastest * static_speed))
    bounded = run(tiny_bert_dir, domain, output, **{**STATIC, "test": domain / "test.jsonl",
                                                    "min_texts_per_second": bound})
    assert bounded["selected"] == "static", bounded["selection"]["why"]
    assert "no start model is that fast" in bounded["selection"]["why"]
    assert bounded["candidates"]["static"]["speed"] == static["speed"]


def test_a_budget_too_small_skips_the_static_model_with_the_reason(tiny_bert_dir, domain, tmp_path):
    key = tiny_bert_dir.name
    report = run(tiny_bert_dir, domain, tmp_path / "adapted", **{**STATIC, "candidates": ["static"],
                                                                 "budget_minutes": 0.01})
    static = report["candidates"]["static"]
    assert static["status"] == "skipped" and "s of the budget left" in static["reason"], static
    assert report["selected"] == f"{key}.start"


def test_the_bound_chooses_the_best_candidate_fast_enough_when_no_start_model_is():
    rows = {"l6.start": (BASE, L6, 0), "l6.mnrl": (BASE + 1 + SWING, L6, 40),
            "static": (BASE - 4 + SWING, speed(30_000.0, 7_000_000, dim=256), 0)}
    results, items = table(rows)
    for rule in ("significant", "best", "labels-first"):
        chosen = select(results, ["l6.start"], rule, items, min_texts_per_second=1000)
        assert chosen.chosen == "static" and chosen.base == "l6.start", (rule, chosen.why)
        assert chosen.gains["static"].difference == pytest.approx(-4.0)
    assert select(results, ["l6.start"], "significant", items).chosen == "l6.mnrl"  # without the bound
