"""The augsbert candidate: with a trained cross-encoder (--cross-encoder) and labelled pairs, the `sts` recipe
trains from the start model on the labelled pairs and silver pairs the cross-encoder scored; without one it is
left out; a bi-encoder given as --cross-encoder is refused before any training."""

from __future__ import annotations

import json

import pytest

import sentforge

from adapt_domain import run as adapt_run
from conftest import assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")



def test_augsbert_trains_on_the_labelled_pairs_and_the_teachers_silver_pairs(tiny_bert_dir, tiny_ce_dir, domain,
                                                                           tmp_path):
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["augsbert"],
                       cross_encoder=tiny_ce_dir, overrides={"augsbert": {"lr": 1e-3, "batch_size": 4}})
    (result,) = [r for name, r in report["candidates"].items() if name.endswith(".augsbert")]
    assert result["status"] == "done", result
    assert result["steps"] > 0 and "--score-max 1.0" in result["commands"][-1]
    data = tmp_path / "adapted" / "data"
    rows = [json.loads(line) for path in data.glob("*.silver.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines()]
    assert result["examples"] == len(rows)
    assert result["planned_steps"] == len(rows) // 4  # one pass at batch 4 (the paper's), not --max-epochs
    labelled = [json.loads(line) for line in (domain / "labelled.jsonl").read_text(encoding="utf-8").splitlines()]
    gold = {(r["sentence1"], r["sentence2"]) for r in labelled}
    assert [(r["sentence1"], r["sentence2"], r["score"]) for r in rows[:len(gold)]] == [
        (r["sentence1"], r["sentence2"], 1.0) for r in labelled]
    silver = rows[len(gold):]
    assert silver and not {(r["sentence1"], r["sentence2"]) for r in silver} & gold
    teacher = sentforge.load_cross_encoder(tiny_ce_dir)
    pairs = [(r["sentence1"], r["sentence2"]) for r in silver[:3]]
    assert [r["score"] for r in silver[:3]] == pytest.approx([float(s) for s in teacher.predict(pairs)], abs=1e-6)
    settings = json.loads((tmp_path / "adapted" / "adapt.json").read_text(encoding="utf-8"))["settings"]
    assert settings["cross_encoder"]["path"] == str(tiny_ce_dir)


def test_without_a_cross_encoder_augsbert_is_left_out_and_not_a_default(tiny_bert_dir, domain, tmp_path):
    from sentforge.adaptation.candidates import check_methods

    assert "augsbert" not in check_methods(None) and "augsbert" in check_methods(None, teacher=True)
    report = adapt_run(tiny_bert_dir, domain, tmp_path / "adapted", candidates=["augsbert"])
    (name,) = [n for n in report["candidates"] if n.endswith(".augsbert")]
    assert report["candidates"][name]["status"] == "not applicable"
    assert "--cross-encoder" in report["candidates"][name]["reason"]


def test_a_bi_encoder_as_cross_encoder_is_refused_before_training(tiny_bert_dir, domain, tmp_path, capsys):
    code, _, err = run_cli(["adapt", "-m", str(tiny_bert_dir), "--unlabelled", str(domain / "unlabelled.txt"),
                            "--dev", str(domain / "dev.jsonl"), "--labelled", str(domain / "labelled.jsonl"),
                            "-o", str(tmp_path / "adapted"), "--cross-encoder", str(tiny_bert_dir)], capsys)
    assert_one_line_error(code, err, "--cross-encoder", "not a cross-encoder")
    assert not (tmp_path / "adapted").exists()


def test_a_slow_teacher_gets_the_largest_draw_that_fits_its_time():
    from sentforge.adaptation.silver_data import SilverDraw, fitting_draw

    full = SilverDraw(neighbours=3, firsts=100, anchors=200)  # at most (100 + 200) * 2 * 3 = 1,800 pairs
    assert full.most_pairs == 1800
    assert fitting_draw(full, 0.01, 18.0) == full  # 1,800 pairs in 18 s: all of it
    assert fitting_draw(full, 0.01, 17.9) == SilverDraw(2, 100, 200)  # 1,200 pairs: two neighbours each
    assert fitting_draw(full, 0.01, 6.0) == SilverDraw(1, 100, 200)  # 600 pairs: one neighbour each
    assert fitting_draw(full, 0.01, 5.0) == SilverDraw(1, 100, 150)  # 500 pairs: (100 + 150) anchors * 2
    assert fitting_draw(full, 0.01, 2.0) == SilverDraw(1, 100, 0)  # the first texts alone
    assert fitting_draw(full, 0.01, 1.99) is None and fitting_draw(full, 0.01, -5.0) is None


def test_the_plan_counts_encoding_the_anchors_and_their_neighbours_and_scoring_every_silver_pair(domain, tmp_path):
    import dataclasses

    from sentforge.adaptation.candidates import METHODS, Candidate
    from sentforge.adaptation.inputs import read_inputs
    from sentforge.adaptation.planning import Costs

    inputs = read_inputs(domain / "unlabelled.txt", domain / "dev.jsonl", domain / "labelled.jsonl")
    inputs = dataclasses.replace(inputs, data_dir=tmp_path / "data")
    student = Candidate("m.augsbert", METHODS["augsbert"], "m", "m")
    gold = [*inputs.labelled.pairs, *inputs.labelled.negatives]
    firsts = {pair[0] for pair in gold}
    anchors = min(2000, len({text for text in inputs.texts if text not in firsts}))
    encoded = len(gold) + len(firsts) + anchors  # every labelled text (at most) and the anchors drawn
    scored = (len(firsts) + anchors) * 2 * 3  # three neighbours by the start model and three by BM25 each
    costs = Costs(dev_s=1.0, test_s=1.0, per_text_s=0.01, pair_s=0.05)
    assert student.method.kind.data_s(student, inputs, costs) == pytest.approx(encoded * 0.01 + scored * 0.05)
