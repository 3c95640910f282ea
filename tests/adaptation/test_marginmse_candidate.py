"""The marginmse candidate: when named, with a trained cross-encoder (--cross-encoder) and labelled pairs, the
`marginmse` recipe trains from the start model on the teacher's score margins between each positive pair and its
negatives, a query's label-0 partners first; without a cross-encoder it is left out, and it is no default."""

from __future__ import annotations

import dataclasses
import json

import pytest

import sentforge

from adapt_domain import run as adapt_run
from adapt_domain import write_jsonl

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_marginmse_learns_the_teachers_margins_with_label_0_partners_first(tiny_bert_dir, tiny_ce_dir, domain,
                                                                         tmp_path):
    rows = [json.loads(line) for line in (domain / "labelled.jsonl").read_text(encoding="utf-8").splitlines()]
    wrong = {row["sentence1"]: rows[(i + 5) % len(rows)]["sentence2"] for i, row in enumerate(rows)}
    labelled = write_jsonl(tmp_path / "labelled-01.jsonl", [{**row, "label": 1} for row in rows] + [
        {"sentence1": query, "sentence2": text, "label": 0} for query, text in wrong.items()])
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", labelled=labelled, candidates=["marginmse"],
                       cross_encoder=tiny_ce_dir, overrides={"marginmse": {"lr": 1e-3, "batch_size": 4}})
    (result,) = [r for name, r in report["candidates"].items() if name.endswith(".marginmse")]
    assert result["status"] == "done", result
    assert result["steps"] > 0 and "sentforge train marginmse" in result["commands"][-1]
    margins = [json.loads(line) for path in (tmp_path / "adapted" / "data").glob("*.margins.jsonl")
               for line in path.read_text(encoding="utf-8").splitlines()]
    assert result["examples"] == len(margins) == 4 * len({row["query"] for row in margins})
    for query in {row["query"] for row in margins}:
        negatives = [row["negative"] for row in margins if row["query"] == query]
        assert wrong[query] in negatives and query not in negatives  # its label-0 partner, then mined texts
    teacher = sentforge.load_cross_encoder(tiny_ce_dir)
    for row in margins[:3]:
        scores = teacher.predict([(row["query"], row["positive"]), (row["query"], row["negative"])])
        assert row["margin"] == pytest.approx(float(scores[0] - scores[1]), abs=1e-5)


def test_without_a_cross_encoder_marginmse_is_left_out_and_it_is_never_a_default(tiny_bert_dir, domain, tmp_path):
    from sentforge.adaptation.candidates import check_methods

    assert "marginmse" not in check_methods(None) and "marginmse" not in check_methods(None, teacher=True)
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["marginmse"])
    (name,) = [n for n in report["candidates"] if n.endswith(".marginmse")]
    assert report["candidates"][name]["status"] == "not applicable"
    assert "--cross-encoder" in report["candidates"][name]["reason"]


def test_a_slow_teacher_scores_the_positive_pairs_whose_rows_fit_its_time(domain):
    from sentforge.adaptation.inputs import read_inputs
    from sentforge.adaptation.margin_data import NEGATIVES, fitting_positives

    inputs = read_inputs(domain / "unlabelled.txt", domain / "dev.jsonl", domain / "labelled.jsonl")
    pairs = len(inputs.labelled.pairs)
    each = 0.01 * (1 + NEGATIVES)  # a positive pair and its negatives at 100 pairs a second
    assert fitting_positives(inputs, 0.01, each * pairs) == pairs
    assert fitting_positives(inputs, 0.01, each * pairs * 10) == pairs
    assert fitting_positives(inputs, 0.01, each * 3.5) == 3
    assert fitting_positives(inputs, 0.01, each * 0.9) is None and fitting_positives(inputs, 0.01, -1.0) is None


def test_mnrl_marginmse_starts_from_the_mnrl_model_and_shares_the_margin_rows(tiny_bert_dir, tiny_ce_dir, domain,
                                                                            tmp_path):
    from sentforge.adaptation.candidates import check_methods
    from sentforge.support.errors import ConfigError

    with pytest.raises(ConfigError, match="add mnrl"):
        check_methods(["mnrl+marginmse"])
    settings = {"lr": 1e-3, "batch_size": 4}
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["mnrl", "marginmse", "mnrl+marginmse"],
                       cross_encoder=tiny_ce_dir, overrides={"marginmse": settings, "mnrl+marginmse": settings})
    results = report["candidates"]
    (mnrl,) = [r for name, r in results.items() if name.endswith(".mnrl")]
    (alone,) = [r for name, r in results.items() if name.endswith(".marginmse") and "+" not in name]
    (after,) = [r for name, r in results.items() if name.endswith(".mnrl+marginmse")]
    assert mnrl["status"] == alone["status"] == after["status"] == "done", (alone, after)
    assert after["start"] == mnrl["model_path"] and alone["start"] == str(tiny_bert_dir)
    assert after["commands"][0] == mnrl["commands"][0] and "sentforge train marginmse" in after["commands"][-1]
    assert len(list((tmp_path / "adapted" / "data").glob("*.margins.jsonl"))) == 1  # scored once, for both
    assert after["examples"] == alone["examples"]


def test_after_tsdae_the_teachers_students_start_from_its_model_trained_once_and_only_when_named(
        tiny_bert_dir, tiny_ce_dir, domain, tmp_path):
    from sentforge.adaptation.candidates import check_methods

    defaults = check_methods(None, teacher=True)
    assert "augsbert" in defaults and "tsdae+augsbert" not in defaults and "tsdae+marginmse" not in defaults
    settings = {"lr": 1e-3, "batch_size": 4}
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted",
                       candidates=["tsdae", "marginmse", "tsdae+marginmse", "tsdae+augsbert"],
                       cross_encoder=tiny_ce_dir, overrides={name: settings for name in ("marginmse", "tsdae+marginmse",
                                                                                         "tsdae+augsbert")})
    results = report["candidates"]
    (tsdae,) = [r for name, r in results.items() if name.endswith(".tsdae")]
    (alone,) = [r for name, r in results.items() if name.endswith(".marginmse") and "+" not in name]
    (margins,) = [r for name, r in results.items() if name.endswith(".tsdae+marginmse")]
    (silver,) = [r for name, r in results.items() if name.endswith(".tsdae+augsbert")]
    assert tsdae["status"] == margins["status"] == silver["status"] == "done", (margins, silver)
    assert margins["start"] == silver["start"] == tsdae["model_path"]
    assert "ladder" not in margins and "ladder" not in silver  # one run from TSDAE's model, not one per rung
    assert margins["commands"][0] == tsdae["commands"][0] and "sentforge train marginmse" in margins["commands"][-1]
    assert silver["commands"][0] == tsdae["commands"][0] and "sentforge train sts" in silver["commands"][-1]
    assert len(list((tmp_path / "adapted" / "data").glob("*.margins.jsonl"))) == 1  # scored once, for both
    assert margins["examples"] == alone["examples"]



def test_the_plan_counts_the_pool_encoding_and_the_teachers_scoring_until_the_rows_are_written(domain, tmp_path):
    from sentforge.adaptation.candidates import METHODS, Candidate
    from sentforge.adaptation.inputs import read_inputs
    from sentforge.adaptation.margin_data import NEGATIVES, margins_file
    from sentforge.adaptation.planning import Costs

    inputs = read_inputs(domain / "unlabelled.txt", domain / "dev.jsonl", domain / "labelled.jsonl")
    inputs = dataclasses.replace(inputs, data_dir=tmp_path / "data")
    costs = Costs(dev_s=1.0, test_s=1.0, per_text_s=0.01, pair_s=0.05)
    student = Candidate("m.marginmse", METHODS["marginmse"], "m", "m")
    kind = student.method.kind
    pairs = len({(pair[0], pair[1]) for pair in inputs.labelled.pairs})
    # The start model encodes the mining pool (every labelled text and unlabelled text), then the teacher scores.
    pool = 2 * (pairs + len(inputs.labelled.negatives)) + len(inputs.texts)
    assert kind.data_s(student, inputs, costs) == pytest.approx(pool * 0.01 + pairs * (1 + NEGATIVES) * 0.05)
    assert kind.data_s(student, inputs, Costs(1.0, 1.0, 0.01)) == 0.0  # no teacher timed: nothing counted
    path = margins_file(student, inputs)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", encoding="utf-8")
    assert kind.data_s(student, inputs, costs) == 0.0  # written (by it or a candidate sharing the rows)
