"""How adapt chooses: the "significant" and "simplest" rules on hand-made per-unit dev scores, so that every
paired interval is known by construction (the start model wins ties and near-ties; a cheaper-to-run candidate
within the paired interval of the leader wins, one significantly worse loses; fewer training steps never win,
fewer training stages win under "simplest"), the
cost-to-run comparison, --min-texts-per-second, the speed–quality front, the report's warning when dev does not
resolve the choice, the "best" rule, and dev hygiene (counts on a constructed corpus; the kept files are what
the candidates train on)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import sentforge
from sentforge.adaptation.hygiene import Counted, apply_hygiene
from sentforge.adaptation.inputs import read_inputs
from sentforge.adaptation.report import markdown, unresolved, write_report
from sentforge.adaptation.result import CandidateResult
from sentforge.adaptation.front import better_and_faster, pareto_front
from sentforge.adaptation.select import cheaper, select
from sentforge.evaluation.paired import ItemScores

import adapt_worker
from selection_tables import BASE, L3, L6, SWING, speed, table, typed
from conftest import assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")




def test_the_best_rule_prefers_the_start_model_and_ignores_candidates_that_did_not_run():
    results = {"a.start": {"status": "done", "dev": 50.0}, "a.tsdae": {"status": "done", "dev": 49.0},
               "a.mnrl": {"status": "done", "dev": 50.0}, "a.ct": {"status": "skipped", "reason": "no time"}}
    assert select(typed(results), ["a.start"], "best").chosen == "a.start"  # worse and equal ones never replace it
    results["a.simcse"] = {"status": "done", "dev": 50.5}
    results["meta-gcca"] = {"status": "done", "dev": 50.5}
    assert select(typed(results), ["a.start"], "best").chosen == "a.simcse"  # the first of two equal best
    two_starts = typed({"a.start": {"status": "done", "dev": 40.0}, "b.start": {"status": "done", "dev": 60.0},
                        "a.tsdae": {"status": "done", "dev": 55.0}})
    assert select(two_starts, ["a.start", "b.start"], "best").chosen == "b.start"


def test_the_start_model_wins_ties_and_near_ties():
    # Each candidate's per-unit difference to the start swings around a small mean: no interval lies above 0.
    results, items = table({"l6.start": (BASE, L6, 0), "l6.tsdae": (BASE + 2 * SWING, L6, 100),
                            "l6.mnrl": (BASE + 0.2 + 3 * SWING, L6, 50), "meta-concat": (BASE + 0.5 + 4 * SWING,
                                                                                         L6, 0)})
    chosen = select(results, ["l6.start"], "significant", items)
    assert chosen.chosen == "l6.start" and chosen.leader is None
    assert "no candidate" in chosen.why and "interval" in chosen.why
    assert chosen.gains["l6.mnrl"].low < 0 < chosen.gains["l6.mnrl"].high
    assert chosen.gains["l6.mnrl"].difference == pytest.approx(0.2)
    # With "best", the highest dev score would have replaced it.
    assert select(results, ["l6.start"], "best", items).chosen == "meta-concat"


def test_a_cheaper_to_run_candidate_within_the_paired_interval_wins():
    # All three gain 3 on every unit up to a swing, so all pass the gate. Against each other, the leader's
    # per-unit advantage swings by 2 around a mean of 0.05 (meta over l6.mnrl) or 0.1: its interval holds 0.
    meta = BASE + 3.15 + SWING
    results, items = table({"l3.start": (BASE - 1, L3, 0), "l6.start": (BASE, L6, 0),
                            "l6.mnrl": (BASE + 3.1 - SWING, L6, 40),
                            "l3.mnrl": (BASE + 3.05 + SWING * -1, L3, 40),
                            "meta-concat": (meta, speed(200.0, 40_100_000, dim=768, encoders=2), 0)},
                           starts=("l3.start", "l6.start"))
    chosen = select(results, ["l3.start", "l6.start"], "significant", items, seed=3)
    assert chosen.base == "l6.start" and chosen.leader == "meta-concat"
    compared = {c.candidate: c for c in chosen.comparisons}
    # leader − candidate, paired on the same units: the mean of the per-unit differences.
    assert compared["l6.mnrl"].interval.difference == pytest.approx(np.mean(meta - items["l6.mnrl"].values))
    assert compared["l6.mnrl"].interval.low < 0 < compared["l6.mnrl"].interval.high
    assert compared["l6.mnrl"].cheaper == ("1 encoder instead of 2, fewer parameters: 22.7M vs 40.1M, "
                                              "smaller vectors: 384 vs 768 dimensions")
    assert "fewer parameters: 17.4M vs 40.1M" in compared["l3.mnrl"].cheaper
    # Both single encoders are cheaper than the meta-embedding and not significantly worse; of those, L3 is
    # cheaper than L6 (fewer parameters, same vectors): it is chosen.
    assert chosen.chosen == "l3.mnrl"
    assert "l3.mnrl costs less to run" in chosen.why and "it is chosen" in chosen.why
    assert "over l6.mnrl; l6.mnrl costs less to run" in chosen.why
    assert "within the interval, but l3.mnrl costs less still" in chosen.why


def test_the_report_names_why_an_equally_cheap_candidate_lost_by_dev_score_or_stages():
    # A meta-embedding leads; two L6 candidates of the same cost to run are within its interval: the one with
    # the higher dev score is chosen, and the other's verdict says so (not merely "a cheaper one").
    meta = BASE + 3.3 + SWING
    results, items = table({"l6.start": (BASE, L6, 0), "l6.mnrl": (BASE + 3.1 - SWING, L6, 60),
                            "l6.tsdae+mnrl": (BASE + 3.2 - SWING, L6, 60),
                            "meta-concat": (meta, speed(150.0, 45_400_000, dim=768, encoders=2), 0)})
    chosen = select(results, ["l6.start"], "significant", items)
    assert chosen.leader == "meta-concat" and chosen.chosen == "l6.tsdae+mnrl"
    assert ("over l6.mnrl; l6.mnrl costs less to run (1 encoder instead of 2, fewer parameters: 22.7M vs "
            "45.4M, smaller vectors: 384 vs 768 dimensions) and the difference is within the interval, but "
            "l6.tsdae+mnrl, as cheap, has the higher dev score") in chosen.why
    # Under "simplest", fewer training stages decide between the two equally cheap ones.
    simplest = select(results, ["l6.start"], "simplest", items)
    assert simplest.leader == "meta-concat" and simplest.chosen == "l6.mnrl"
    assert "within the interval, but l6.mnrl costs less still" in simplest.why


def test_fewer_training_steps_never_win_over_a_better_candidate_of_the_same_architecture():
    results, items = table({"l6.start": (BASE, L6, 0), "l6.mnrl": (BASE + 3.29 - 3 * SWING, L6, 32),
                            "l6.tsdae+mnrl": (BASE + 4.46 + 3 * SWING, replace(L6, texts_per_second=280.0), 88)})
    results["l6.tsdae+mnrl"] = results["l6.tsdae+mnrl"].update(chain_steps=175)
    chosen = select(results, ["l6.start"], "significant", items)
    (comparison,) = chosen.comparisons
    assert comparison.candidate == "l6.mnrl" and comparison.interval.low < 0 < comparison.interval.high
    assert comparison.cheaper is None and comparison.same_cost  # a speed measured apart is noise
    assert chosen.chosen == "l6.tsdae+mnrl"
    interval = comparison.interval
    assert (f"l6.tsdae+mnrl: {interval.difference:+.2f} [{interval.low:+.2f}, {interval.high:+.2f}] "
            "over l6.mnrl; same cost to run, higher dev score") in chosen.why


def test_the_simplest_rule_takes_the_candidate_of_fewer_training_stages_within_the_interval():
    # The same table as above: tsdae+mnrl leads mnrl by 1.17 with a swing of 6 per unit, an interval around 0.
    results, items = table({"l6.start": (BASE, L6, 0), "l6.mnrl": (BASE + 3.29 - 3 * SWING, L6, 32),
                            "l6.tsdae+mnrl": (BASE + 4.46 + 3 * SWING, replace(L6, texts_per_second=280.0), 88)})
    chosen = select(results, ["l6.start"], "simplest", items)
    (comparison,) = chosen.comparisons
    assert comparison.same_cost and comparison.cheaper == "made in 1 training stage instead of 2"
    assert chosen.leader == "l6.tsdae+mnrl" and chosen.chosen == "l6.mnrl"
    assert ("over l6.mnrl; l6.mnrl costs the same to run, made in 1 training stage instead of 2 and the "
            "difference is within the interval: it is chosen") in chosen.why
    # Significantly ahead (the same means without the swing), the leader of more stages keeps its place.
    results, items = table({"l6.start": (BASE, L6, 0), "l6.mnrl": (BASE + 3.29, L6, 32),
                            "l6.tsdae+mnrl": (BASE + 4.46, L6, 88)})
    chosen = select(results, ["l6.start"], "simplest", items)
    assert chosen.chosen == "l6.tsdae+mnrl" and "but l6.tsdae+mnrl is significantly better" in chosen.why


def test_training_stages_count_the_commands_that_made_a_candidate():
    from sentforge.adaptation.select import training_stages

    results = typed({"m.start": {"kind": "start", "status": "done", "dev": 50.0},
                     "m.mnrl": {"status": "done", "dev": 51.0, "commands": ["sentforge train mnrl"]},
                     "m.tsdae+mnrl": {"status": "done", "dev": 52.0},
                     "m.mnrl.continued": {"status": "done", "dev": 52.0, "method": "mnrl", "continues": "m.mnrl",
                                          "commands": ["sentforge train mnrl", "sentforge train mnrl"]},
                     "distil": {"kind": "distil", "status": "done", "dev": 49.0, "member": "m.tsdae+mnrl",
                                "commands": ["sentforge train distil"]},
                     "meta-concat": {"kind": "meta", "status": "done", "dev": 52.0,
                                     "members": ["m.mnrl", "m.tsdae+mnrl"]},
                     # Resumed once after the time limit cut it: the same run, one stage (its second command
                     # resumes the first from its checkpoint); a continuation of it adds one.
                     "m.augsbert": {"status": "done", "dev": 51.0, "method": "augsbert", "extensions": 1,
                                    "commands": ["sentforge train sts", "sentforge train sts"]},
                     "m.augsbert.continued": {"status": "done", "dev": 51.0, "method": "augsbert",
                                              "continues": "m.augsbert", "commands": ["sentforge train sts"] * 3}})
    assert {name: training_stages(results, name) for name in results} == {
        "m.start": 0, "m.mnrl": 1, "m.tsdae+mnrl": 2, "m.mnrl.continued": 2, "distil": 3, "meta-concat": 0,
        "m.augsbert": 1, "m.augsbert.continued": 2}


def test_a_cheaper_candidate_significantly_worse_than_the_leader_loses():
    # l3.mnrl gains over the start on every unit, but l6.mnrl is 1 to 2 better on every unit.
    results, items = table({"l6.start": (BASE, L6, 0), "l3.start": (BASE - 2, L3, 0),
                            "l6.mnrl": (BASE + 4 + SWING, L6, 40), "l3.mnrl": (BASE + 2.5 + 0.5 * SWING, L3, 40)},
                           starts=("l6.start", "l3.start"))
    chosen = select(results, ["l6.start", "l3.start"], "significant", items)
    (comparison,) = chosen.comparisons
    assert comparison.cheaper and comparison.interval.low > 0
    assert chosen.chosen == "l6.mnrl" and "but l6.mnrl is significantly better" in chosen.why


def test_min_texts_per_second_changes_the_choice():
    rows = {"l6.start": (BASE, L6, 0), "l3.start": (BASE - 2, L3, 0), "l6.mnrl": (BASE + 4 + SWING, L6, 40),
            "l3.mnrl": (BASE + 2.5 + 0.5 * SWING, L3, 40)}
    results, items = table(rows, starts=("l6.start", "l3.start"))
    starts = ["l6.start", "l3.start"]
    assert select(results, starts, "significant", items).chosen == "l6.mnrl"
    bounded = select(results, starts, "significant", items, min_texts_per_second=400)
    # The L6 models are not eligible: l3.mnrl is measured against l3.start, the fastest eligible start model.
    assert bounded.chosen == "l3.mnrl" and bounded.base == "l3.start"
    assert bounded.too_slow == {"l6.start": 300.0, "l6.mnrl": 300.0}
    assert bounded.gains["l3.mnrl"].difference == pytest.approx(4.5)
    assert "fewer than 400 texts per second here: l6.start (300.0), l6.mnrl (300.0)" in bounded.why
    assert select(results, starts, "best", items, min_texts_per_second=400).chosen == "l3.mnrl"
    # No candidate that fast: the fastest start model is the reference, and kept since nothing eligible beats it.
    none = select(results, starts, "significant", items, min_texts_per_second=1000)
    assert none.chosen == none.base == "l3.start" and "no start model is that fast" in none.why


def test_cost_to_run_compares_structure_first_then_a_clear_speed_difference():
    assert cheaper(L3, L6) == "fewer parameters: 17.4M vs 22.7M" and cheaper(L6, L3) is None
    assert cheaper(L6, replace(L6, texts_per_second=100.0)) is None  # same architecture: the same cost
    wide = speed(500.0, 10_000_000, dim=1024)  # fewer parameters but wider vectors: the measured speed decides
    assert cheaper(wide, L6) == "encodes 1.7x faster here" and cheaper(L6, wide) is None
    assert cheaper(replace(wide, texts_per_second=330.0), L6) is None  # within the margin of timing noise


def test_the_front_keeps_the_candidates_no_other_beats_on_speed_and_dev():
    results = {name: {"status": "done", "dev": dev, "speed": speed(rate, 1)} for name, dev, rate in
               [("fast", 80.0, 600.0), ("slow-best", 90.0, 200.0), ("middle", 85.0, 300.0),
                ("dominated", 84.0, 290.0), ("tie", 85.0, 300.0)]}
    results["skipped"] = {"status": "skipped"}
    assert pareto_front(typed(results)) == ["fast", "middle", "tie", "slow-best"]


def test_a_bound_no_start_model_reaches_is_refused_before_the_run(tiny_bert_dir, overlapping, tmp_path, capsys):
    code, _, err = run_cli(["adapt", "--model", tiny_bert_dir, "--unlabelled", overlapping / "unlabelled.txt",
                            "--dev", overlapping / "dev.jsonl", "--output", tmp_path / "out",
                            "--min-texts-per-second", "1e9"], capsys)
    assert_one_line_error(code, err, "--min-texts-per-second", "no start model")
    assert not (tmp_path / "out").exists()


def report_of(results: dict[str, CandidateResult], selection) -> dict:
    """The report adapt writes for `results` chosen by `selection`, its run details made up."""
    candidates = {name: r.update(method=r.kind, wall_s=1.0, dev_gain=selection.gains[name]).to_json()
                  for name, r in results.items()}
    return {"selected": selection.chosen, "selection": selection.to_json(),
            "front": pareto_front(results), "selected_off_front": better_and_faster(results, selection.chosen),
            "speed_texts": 512, "metric": "map", "dev": "dev:dev.jsonl",
            "budget_minutes": 1, "wall_s": 60.0, "hygiene": {"applied": True, "heldout_texts": 0},
            "candidates": candidates, "settings": {"race": True}, "output_bytes": 1 << 20,
            "keep_checkpoints": False}


def test_the_report_gives_the_costs_the_paired_comparisons_the_bound_and_the_front(tmp_path):
    results, items = table({"l3.start": (BASE - 1, L3, 0), "l6.start": (BASE, L6, 0),
                            "l6.mnrl": (BASE + 3.1 - SWING, L6, 40), "l3.mnrl": (BASE + 3.05 - SWING, L3, 40),
                            "meta-concat": (BASE + 3.15 + SWING, speed(200.0, 40_100_000, dim=768, encoders=2), 0)},
                           starts=("l3.start", "l6.start"))
    selection = select(results, ["l3.start", "l6.start"], "significant", items, min_texts_per_second=250)
    report = report_of(results, selection)
    write_report(tmp_path, report)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    # l6.mnrl leads by 0.05 on every unit: significant, so the cheaper l3.mnrl does not replace it.
    assert selection.chosen == "l6.mnrl" and report["front"] == ["l3.mnrl", "l6.mnrl", "meta-concat"]
    assert "| l3.mnrl | +0.05 [+0.05, +0.05] | fewer parameters: 17.4M vs 22.7M |" in text
    assert "| l6.mnrl (selected) | train | 53.10 | +3.10 [" in text and "| 300.0 | 22.7 | 384 |" in text
    assert "| meta-concat (too slow) |" in text and "here: meta-concat (200.0)" in text
    assert "both faster and better on dev: l3.mnrl, l6.mnrl, meta-concat." in text
    assert (tmp_path / "front.png").read_bytes()[:4] == b"\x89PNG"


def test_the_report_says_why_the_selected_model_is_off_the_front():
    # simcse leads on dev at the same speed; labels-first takes mnrl within its noise, which leaves mnrl off the front.
    results, items = table({"l6.start": (BASE, L6, 0), "l6.simcse": (BASE + 4.0 + 4 * SWING, L6, 40),
                            "l6.mnrl": (BASE + 3.0 - 4 * SWING, L6, 40)})
    report = report_of(results, select(results, ["l6.start"], "labels-first", items))
    assert report["selected"] == "l6.mnrl" and report["front"] == ["l6.simcse"]
    assert report["selected_off_front"] == ["l6.simcse"]
    assert ("l6.mnrl (dev map 53.00, 300.0 texts/s) is off the speed–quality front of front.png: l6.simcse (dev "
            "54.00, 300.0 texts/s) is no worse on dev score and encode speed and better on one. The rule above "
            "chose it") in markdown(report)
    # On the front, nothing is said.
    report = report_of(results, select(results, ["l6.start"], "best", items))
    assert report["selected"] == "l6.simcse" and report["selected_off_front"] == []
    assert "off the speed–quality front" not in markdown(report)


def test_the_report_warns_when_dev_does_not_tell_the_selected_model_from_another():
    # tsdae+mnrl leads mnrl by 1.2 with a per-unit swing of 6 (unresolved) and simcse by 3 up to a swing of 3
    # (resolved); all three gain significantly over the start.
    rows = {"l6.start": (BASE, L6, 0), "l6.mnrl": (BASE + 3.3 - 3 * SWING, L6, 60), "l6.simcse": (BASE + 1.5, L6, 60),
            "l6.tsdae+mnrl": (BASE + 4.5 + 3 * SWING, L6, 60)}
    results, items = table(rows)
    report = report_of(results, select(results, ["l6.start"], "significant", items))
    assert report["selected"] == "l6.tsdae+mnrl" and unresolved(report) == ["l6.mnrl"]
    assert ("**Dev does not resolve this choice**: on the 40 dev units, the paired interval between l6.tsdae+mnrl "
            "and l6.mnrl includes 0, so on new data either may score higher.") in markdown(report)
    # Without mnrl, the leader is significantly above every other gated candidate: no warning.
    del rows["l6.mnrl"]
    results, items = table(rows)
    report = report_of(results, select(results, ["l6.start"], "significant", items))
    assert unresolved(report) == [] and "does not resolve" not in markdown(report)
    # A cheaper candidate chosen within the leader's interval: the leader is among the unresolved ones.
    results, items = table({"l6.start": (BASE, L6, 0), "l6.mnrl": (BASE + 3.1 - SWING, L6, 40),
                            "meta-concat": (BASE + 3.15 + SWING, speed(200.0, 40_100_000, dim=768, encoders=2), 0)})
    report = report_of(results, select(results, ["l6.start"], "significant", items))
    assert report["selected"] == "l6.mnrl" and unresolved(report) == ["meta-concat"]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture()
def overlapping(tmp_path) -> Path:
    """A domain whose unlabelled texts and labelled pairs hold dev and test texts, exact and near copies."""
    data = tmp_path / "data"
    data.mkdir()
    dev_queries = ["how do i renew my residence permit", "where can i buy a cheap used car"]
    test_queries = ["which school is best for small kids"]
    others = ["the weather is hot in summer", "a new mall opened near the airport", "my phone screen is broken",
              "traffic on the corniche was slow", "the museum opens at nine", "rent prices went up this year",
              "looking for a tennis partner", "the visa office closes early on thursday",
              "our cat likes to sleep all day", "fresh fish at the souq every morning"]
    unlabelled = [*others,
                  "how do i renew my residence permit",            # exact dev text
                  "how do i renew my residence permit quickly",    # near copy (Jaccard 7/8)
                  "which school is best for small kids",           # exact test text
                  "where to buy bread in the old market today"]    # shares words but is no near copy
    (data / "unlabelled.txt").write_text("".join(t + "\n" for t in unlabelled), encoding="utf-8")
    write_jsonl(data / "dev.jsonl", [{"query": q, "positive": [f"{q} please help"], "negative": [others[i]]}
                                     for i, q in enumerate(dev_queries)])
    write_jsonl(data / "test.jsonl", [{"query": q, "positive": [f"{q} in doha"], "negative": [others[5]]}
                                      for q in test_queries])
    write_jsonl(data / "labelled.jsonl", [
        {"sentence1": "where can i buy a cheap used car", "sentence2": "cheap cars for sale"},   # dev text
        {"sentence1": "best beach for a family picnic", "sentence2": "a good beach for families"},
        {"sentence1": "how to open a bank account", "sentence2": "which school is best for small kids in doha"},
        {"sentence1": "is tap water safe to drink", "sentence2": "can i drink the tap water"}])
    return data


def test_hygiene_counts_and_drops_dev_and_test_texts_and_their_near_copies(overlapping, tmp_path):
    inputs = read_inputs(overlapping / "unlabelled.txt", overlapping / "dev.jsonl", overlapping / "labelled.jsonl",
                         overlapping / "test.jsonl")
    # Held out: the dev and test queries, positives and negatives (others 0, 1 and 5): 3 + 3 texts match.
    cleaned, hygiene = apply_hygiene(inputs, tmp_path / "out" / "data", keep_dev_texts=False)
    assert hygiene.counts["unlabelled"] == Counted(read=14, near_duplicates=3 + 3)
    assert hygiene.counts["positives"] == Counted(read=4, near_duplicates=2)
    assert "how do i renew my residence permit quickly" not in cleaned.texts
    assert "where to buy bread in the old market today" in cleaned.texts
    assert [a for a, _ in cleaned.labelled.positives] == ["best beach for a family picnic",
                                                          "is tap water safe to drink"]
    assert cleaned.unlabelled.read_text(encoding="utf-8").splitlines() == cleaned.texts
    kept, same = apply_hygiene(inputs, tmp_path / "kept" / "data", keep_dev_texts=True)
    assert kept is inputs and same.applied is False and same.counts["unlabelled"] == hygiene.counts["unlabelled"]
    assert not (tmp_path / "kept").exists()


LABELLED_PAIRS = [("where can i buy a cheap used car", "cheap cars for sale"),                # a dev text
                  ("how do i renew my residence permit", "permit renewal steps"),            # a dev text
                  ("which school is best for small kids", "good schools for young children"),  # a test text
                  ("is tap water safe to drink", "can i drink the tap water")]


def hygiene_cli(model, data: Path, labelled: Path, output: Path, candidates: str, capsys):
    """adapt with a budget too small to train: hygiene, planning and the report only."""
    return run_cli(["adapt", "--model", model, "--unlabelled", data / "unlabelled.txt", "--dev", data / "dev.jsonl",
                    "--test", data / "test.jsonl", "--labelled", labelled, "--output", output,
                    "--candidates", candidates, "--budget-minutes", 1e-4], capsys)


def test_hygiene_that_drops_most_pairs_warns_in_the_log_and_the_report(tiny_bert_dir, overlapping, tmp_path, capsys,
                                                                        caplog):
    # 3 of the 4 pairs hold a dev or test text: over half; the overlapping fixture's file (2 of 4) is not.
    labelled = write_jsonl(tmp_path / "templated.jsonl", [{"sentence1": a, "sentence2": b} for a, b in LABELLED_PAIRS])
    expected = ("dev hygiene dropped 3 of 4 positive pairs as dev or test texts or near copies of one, leaving 1 "
                "to train on")
    code, _, err = hygiene_cli(tiny_bert_dir, overlapping, labelled, tmp_path / "adapted", "tsdae,mnrl", capsys)
    assert code == 0, err
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "hygiene" in r.name]
    assert len(warnings) == 1 and warnings[0].startswith(expected)
    text = (tmp_path / "adapted" / "report.md").read_text(encoding="utf-8")
    assert f"**Warning**: {expected}" in text and "3 of 4 positive pairs" in text
    assert "positives pairs" not in text and "see report.md" not in text
    caplog.clear()
    code, _, err = hygiene_cli(tiny_bert_dir, overlapping, overlapping / "labelled.jsonl", tmp_path / "half",
                               "tsdae,mnrl", capsys)
    assert code == 0, err
    assert not [r for r in caplog.records if r.levelname == "WARNING" and "hygiene" in r.name]
    assert "**Warning**" not in (tmp_path / "half" / "report.md").read_text(encoding="utf-8")


def test_hygiene_that_leaves_the_chosen_candidates_no_pairs_is_an_error_unless_one_is_unsupervised(
        tiny_bert_dir, overlapping, tmp_path, capsys):
    labelled = write_jsonl(tmp_path / "all-heldout.jsonl", [{"sentence1": a, "sentence2": b}
                                                           for a, b in LABELLED_PAIRS[:3]])
    code, _, err = hygiene_cli(tiny_bert_dir, overlapping, labelled, tmp_path / "mnrl", "mnrl", capsys)
    assert_one_line_error(code, err, f"--labelled {labelled}", "drops all 3 positive pairs",
                          "candidates (mnrl) have nothing to train on")
    assert not (tmp_path / "mnrl").exists()  # refused before anything is written
    # TSDAE still trains on the unlabelled texts: the run goes on, mnrl listed as not applicable.
    code, _, err = hygiene_cli(tiny_bert_dir, overlapping, labelled, tmp_path / "both", "tsdae,mnrl", capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "both" / "report.json").read_text(encoding="utf-8"))
    assert report["candidates"][f"{tiny_bert_dir.name}.mnrl"]["reason"] == (
        "no labelled positive pairs (--labelled) left after dev hygiene")


def test_adapt_trains_on_the_hygienic_data_and_reports_counts_and_intervals(tiny_bert_dir, overlapping, tmp_path):
    options = {**adapt_worker.FAST, "keep_dev_texts": False, "candidates": ["tsdae", "mnrl"],
               "overrides": {"tsdae": {"lr": 1e-3}, "mnrl": {"lr": 1e-3, "batch_size": 2}}}
    report = sentforge.adapt(str(tiny_bert_dir), overlapping / "unlabelled.txt", overlapping / "dev.jsonl",
                             tmp_path / "adapted", labelled=overlapping / "labelled.jsonl",
                             test=overlapping / "test.jsonl", **options)
    assert report["hygiene"]["applied"] and report["hygiene"]["unlabelled"]["near_duplicates"] == 6
    tsdae = report["candidates"][f"{tiny_bert_dir.name}.tsdae"]
    assert tsdae["examples"] == 8 and tsdae["commands"][0].count("data/unlabelled.txt") == 1
    assert report["candidates"][f"{tiny_bert_dir.name}.mnrl"]["examples"] == 2
    for result in report["candidates"].values():
        interval = result["dev_gain"]
        assert interval["low"] <= interval["difference"] <= interval["high"] and interval["resamples"] == 5000
        assert interval["difference"] == pytest.approx(result["dev"] - report["candidates"][
            f"{tiny_bert_dir.name}.start"]["dev"], abs=1e-6)
    text = (tmp_path / "adapted" / "report.md").read_text(encoding="utf-8")
    assert "Dev hygiene: dropped before training" in text and "6 of 14 unlabelled" in text
    assert "Rule `labels-first`" in text
    assert report["selection"]["base"] == f"{tiny_bert_dir.name}.start"
    # Every candidate's cost to run, measured on the same sample of the texts: the tiny model's parameters and
    # dimension, counted here from the loaded model.
    start = sentforge.load(tiny_bert_dir)
    for result in report["candidates"].values():
        cost = result["speed"]
        assert cost["parameters"] == sum(p.numel() for p in start.parameters()) and cost["dim"] == start.dim
        assert cost["encoders"] == 1 and cost["texts_per_second"] > 0
        # The trained candidates run the start model's computation: they take its timed speed.
        assert cost.get("same_as") == (None if result["kind"] == "start" else f"{tiny_bert_dir.name}.start")
    assert report["front"] and set(report["front"]) <= set(report["candidates"])
    inputs = read_inputs(overlapping / "unlabelled.txt", overlapping / "dev.jsonl")
    assert report["speed_texts"] == len(set(inputs.dev.texts()) | set(inputs.texts))  # all: fewer than the sample
    assert (tmp_path / "adapted" / "front.png").read_bytes()[:4] == b"\x89PNG"
    assert "| texts/s | params M | dim |" in text and "speed–quality front" in text


def test_a_rerun_with_another_speed_bound_chooses_again_without_measuring_again(tiny_bert_dir, overlapping,
                                                                                 tmp_path):
    options = {**adapt_worker.FAST, "candidates": []}
    args = (str(tiny_bert_dir), overlapping / "unlabelled.txt", overlapping / "dev.jsonl", tmp_path / "adapted")
    first = sentforge.adapt(*args, **options)
    start = f"{tiny_bert_dir.name}.start"
    measured = first["candidates"][start]["speed"]
    bounded = sentforge.adapt(*args, **options, min_texts_per_second=1.0)  # the bound is no changed command
    assert bounded["selection"]["min_texts_per_second"] == 1.0 and first["selection"]["min_texts_per_second"] is None
    assert bounded["candidates"][start]["speed"] == measured and bounded["selected"] == start


def test_the_selection_regret_on_test_is_the_best_candidates_test_score_minus_the_selected_ones():
    from sentforge.adaptation.report import test_regret

    def done(kind, test):
        return {"status": "done", "kind": kind, "test": test}

    candidates = {"m.start": done("start", 90.0), "m.mnrl": done("train", 78.41), "m.simcse": done("train", 77.42),
                  "meta-concat": done("meta", 77.67), "m.ct": {"status": "skipped", "kind": "train"}}
    # The start model is not a candidate adapt made: its higher test score is no regret.
    assert test_regret(candidates, "m.simcse") == {"best": "m.mnrl", "best_test": 78.41, "selected_test": 77.42,
                                                   "regret": 0.99}
    assert test_regret(candidates, "m.mnrl")["regret"] == 0
    # The start model kept: the regret is what the best candidate would have given over it, 0 when none beats it.
    assert test_regret(candidates, "m.start")["regret"] == 0
    assert test_regret({"m.start": {"status": "done", "kind": "start"}}, "m.start") is None


def test_cross_fitting_scores_each_unit_by_the_checkpoint_the_other_half_chose():
    from sentforge.adaptation.intervals import cross_fitted

    # Two checkpoints over 4 queries: each is best on one half of the units and mediocre on the other, so
    # whichever half chooses, the other half is scored by the checkpoint that is worse there.
    a = ItemScores("mean", np.array([90.0, 90.0, 50.0, 50.0]))
    b = ItemScores("mean", np.array([50.0, 50.0, 90.0, 90.0]))
    honest = cross_fitted([a, b], seed=0, splits=200)
    assert a.score() == b.score() == 70.0  # the best of the two on all units: 70
    # The three halvings of 4 units, each as likely: {1,2 | 3,4} scores every unit by the checkpoint worse
    # there (50); {1,3 | 2,4} and {1,4 | 2,3} tie on each half, the earlier checkpoint a is chosen and scores
    # 90, 50 on each other half (70). Expected: (50 + 70 + 70) / 3, where the best checkpoint shows 70.
    assert honest.score() == pytest.approx(50 + 40 / 3, abs=1.5)
    # One checkpoint: nothing was chosen, the scores are its own.
    assert cross_fitted([a], seed=0) is a
    # A checkpoint better on every unit is chosen by every half: its own scores.
    c = ItemScores("mean", np.array([95.0, 95.0, 95.0, 95.0]))
    assert cross_fitted([a, c, b], seed=0).score() == 95.0


def test_the_cross_fitted_rule_ranks_by_cross_fitted_scores():
    start = ItemScores("mean", np.full(40, 50.0))
    rng = np.random.default_rng(0)
    mnrl = ItemScores("mean", 55 + rng.normal(0, 1, 40))
    lucky = ItemScores("mean", 56 + rng.normal(0, 1, 40))  # its kept checkpoint scores higher on dev ...
    honest = ItemScores("mean", 54 + rng.normal(0, 1, 40))  # ... its cross-fitted scores lower
    results = typed({"m.start": {"kind": "start", "status": "done", "dev": 50.0, "speed": L6},
                     "m.mnrl": {"status": "done", "dev": mnrl.score(), "speed": L6},
                     "m.tsdae+mnrl": {"status": "done", "dev": lucky.score(), "speed": L6}})
    raw = select(results, ["m.start"], "significant", {"m.start": start, "m.mnrl": mnrl, "m.tsdae+mnrl": lucky})
    assert raw.chosen == "m.tsdae+mnrl"
    fitted = select(results, ["m.start"], "cross-fitted",
                    {"m.start": start, "m.mnrl": mnrl, "m.tsdae+mnrl": honest})
    assert fitted.chosen == "m.mnrl" and "highest cross-fitted dev score" in fitted.why


def test_cross_fitting_pair_scores_standardises_each_checkpoint_so_one_order_keeps_its_ap():
    from sentforge.adaptation.intervals import cross_fitted

    rng = np.random.default_rng(1)
    labels = (rng.random(60) < 0.4).astype(float)
    similarities = labels * 0.3 + rng.normal(0.5, 0.2, 60)
    a = ItemScores("ap", similarities, labels)
    rescaled = ItemScores("ap", 2 * similarities + 1, labels)  # the same order on another scale
    mixed = cross_fitted([a, rescaled], seed=0)
    assert mixed.statistic == "ap" and np.array_equal(mixed.targets, labels)
    assert mixed.score() == pytest.approx(a.score())  # standardised, the one order scores as itself
