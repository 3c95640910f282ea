"""Every label used: the label-0 pairs of a 0/1-labelled file are their anchor's hard negatives for MNRL,
in every labelled format and every way the rows arrive (files, memory, adapt's labelled file); an anchor
without a label-0 pair borrows one; dev hygiene drops a negative that is a dev text (and keeps its
positive); MNRL trains on the triples. Expected triples are worked out by hand from the rows below."""

from __future__ import annotations

import csv
import json
import logging

import pytest

import sentforge
from sentforge.adaptation.hygiene import Counted, apply_hygiene
from sentforge.adaptation.inputs import read_inputs, read_labelled
from sentforge.data.pairs import with_hard_negatives
from sentforge.support.errors import InputFileError
from sentforge.recipes.data import read_examples

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# Anchor "reset" has 2 positives and 3 label-0 texts; "cancel" 3 positives and 2 label-0 texts;
# "refund" one positive and none; "weather" only a label-0 text (no positive).
ROWS = [("how do i reset my password", "where can i change my password", 1),
        ("how do i reset my password", "the app crashes on start", 0),
        ("please cancel my subscription", "i want to end my subscription", 1),
        ("how do i reset my password", "where is the nearest bank", 0),
        ("please cancel my subscription", "how do i upgrade my plan", 0),
        ("how do i reset my password", "i forgot my password, what now", 1),
        ("how do i reset my password", "my phone screen is broken", 0),
        ("please cancel my subscription", "stop my monthly plan please", 1),
        ("can i get a refund", "i want my money back", 1),
        ("please cancel my subscription", "where can i buy a gift card", 0),
        ("is it going to rain", "the app crashes on start", 0),
        ("please cancel my subscription", "end my membership", 1)]
# The i-th positive of an anchor takes its (i mod n)-th label-0 text in file order. "refund" borrows from the
# pool of every label-0 text in first-seen order (crashes, bank, upgrade, screen, gift card): the one
# anchor without label-0 rows starts at 0 * 5 // 1 = 0, the app crash text.
EXPECTED = [("how do i reset my password", "where can i change my password", "the app crashes on start"),
            ("please cancel my subscription", "i want to end my subscription", "how do i upgrade my plan"),
            ("how do i reset my password", "i forgot my password, what now", "where is the nearest bank"),
            ("please cancel my subscription", "stop my monthly plan please", "where can i buy a gift card"),
            ("can i get a refund", "i want my money back", "the app crashes on start"),
            ("please cancel my subscription", "end my membership", "how do i upgrade my plan")]
HEADER = ("sentence1", "sentence2", "label")


def write(path, rows=ROWS, label=lambda value: value):
    """The rows as a labelled file of the format `path` names (.jsonl, .csv or .tsv)."""
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(dict(zip(HEADER, (a, b, label(y))))) + "\n" for a, b, y in rows),
                        encoding="utf-8")
        return path
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t" if path.suffix == ".tsv" else ",", lineterminator="\n")
        writer.writerows([HEADER, *[(a, b, label(y)) for a, b, y in rows]])
    return path


@pytest.mark.parametrize("name, label", [("pairs.jsonl", int), ("pairs-strings.jsonl", str),
                                         ("pairs.csv", int), ("pairs.tsv", int),
                                         ("pairs-words.tsv", lambda y: "true" if y else "false")])
def test_every_labelled_format_gives_the_hand_made_triples(tmp_path, name, label, caplog):
    path = write(tmp_path / name, label=label)
    with caplog.at_level(logging.INFO, logger="sentforge"):
        assert read_examples("pairs", path) == EXPECTED
    assert "6 positive pairs (label 1), each with a hard negative from the rows labelled 0: 5 of its own " \
           "sentence1, 1 (a sentence1 without such a row) of another" in caplog.text
    labelled = read_labelled(path)
    assert labelled.positives == EXPECTED and labelled.partial is None
    assert labelled.negatives == [(a, b) for a, b, y in ROWS if y == 0]
    # `sentforge train mnrl` reads the same examples from the file adapt names
    assert labelled.positives_file == path


def test_rows_in_memory_give_the_file_s_triples():
    datasets = pytest.importorskip("datasets")
    as_dicts = [dict(zip(HEADER, row)) for row in ROWS]
    assert read_examples("pairs", as_dicts) == EXPECTED
    table = datasets.Dataset.from_dict({name: [row[i] for row in ROWS] for i, name in enumerate(HEADER)})
    assert read_examples("pairs", table) == EXPECTED


def test_a_partially_labelled_file_gives_pause_its_rows_and_mnrl_its_triples(tmp_path):
    rows = [*ROWS, ("my card was declined", "payment failed at checkout", None)]
    path = write(tmp_path / "partial.jsonl", rows, label=lambda y: y)
    labelled = read_labelled(path)
    assert labelled.positives == EXPECTED
    assert labelled.partial is not None and len(labelled.partial) == len(rows)
    assert read_examples("pairs", path) == EXPECTED


def test_an_anchor_without_negatives_borrows_one_that_is_none_of_its_positives():
    # "b" has no label-0 row; the pool is [x, y]: two anchors without one start at 0 * 2 // 2 = 0 and
    # 1 * 2 // 2 = 1. "c" skips x, which it holds as a positive, and takes y.
    positives = [("a", "a1"), ("b", "b1"), ("c", "x")]
    negatives = [("a", "x"), ("a", "y")]
    assert with_hard_negatives(positives, negatives, "pairs") == [("a", "a1", "x"), ("b", "b1", "x"),
                                                                  ("c", "x", "y")]
    # a text labelled both 1 and 0 for one anchor is a positive, never its own negative
    assert with_hard_negatives([("a", "x"), ("a", "z")], negatives, "pairs") == [("a", "x", "y"), ("a", "z", "y")]
    with pytest.raises(InputFileError, match="no text labelled 0 can be the hard negative of 'b'"):
        with_hard_negatives([("a", "a1"), ("b", "x")], [("a", "x")], "pairs")


def test_rows_with_their_own_negatives_keep_them(tmp_path):
    path = tmp_path / "own.jsonl"
    path.write_text(json.dumps({"sentence1": "a b c", "sentence2": "a b d", "negative": "x y z", "label": 1}) + "\n"
                    + json.dumps({"sentence1": "a b c", "sentence2": "q r s", "label": 0}) + "\n", encoding="utf-8")
    assert read_examples("pairs", path) == [("a b c", "a b d", "x y z")]


def test_without_label_0_rows_the_pairs_stay_pairs(tmp_path):
    path = write(tmp_path / "positives.tsv", [row for row in ROWS if row[2] == 1])
    assert read_examples("pairs", path) == [(a, b) for a, b, _ in EXPECTED]


def test_hygiene_drops_a_negative_that_is_a_dev_text_and_keeps_its_positive(tmp_path):
    # The dev set holds "where is the nearest bank": the "reset" anchor keeps both positives and takes its
    # negatives from the two label-0 texts left (crashes, screen).
    write(tmp_path / "labelled.jsonl")
    (tmp_path / "dev.jsonl").write_text(json.dumps({"query": "which bank is open on friday", "positive":
                                                    ["where is the nearest bank"], "negative": ["a cat sat"]})
                                        + "\n", encoding="utf-8")
    (tmp_path / "unlabelled.txt").write_text("the park is open every day\nmy tea went cold again\n",
                                             encoding="utf-8")
    inputs = read_inputs(tmp_path / "unlabelled.txt", tmp_path / "dev.jsonl", tmp_path / "labelled.jsonl")
    cleaned, hygiene = apply_hygiene(inputs, tmp_path / "out" / "data", keep_dev_texts=False)
    assert hygiene.counts["positives"] == Counted(read=6, near_duplicates=0)
    assert hygiene.counts["negatives"] == Counted(read=6, near_duplicates=1)
    reset = [example for example in cleaned.labelled.positives if example[0] == "how do i reset my password"]
    assert reset == [("how do i reset my password", "where can i change my password", "the app crashes on start"),
                     ("how do i reset my password", "i forgot my password, what now", "my phone screen is broken")]
    assert all("where is the nearest bank" not in example for example in cleaned.labelled.positives)
    written = [json.loads(line) for line in cleaned.labelled.positives_file.read_text(encoding="utf-8").splitlines()]
    assert [(r["sentence1"], r["sentence2"], r["negative"]) for r in written] == cleaned.labelled.positives


def test_mnrl_trains_on_the_triples(tiny_bert_dir, tmp_path):
    path = write(tmp_path / "pairs.jsonl")
    sentforge.train("mnrl", tiny_bert_dir, path, tmp_path / "out", steps=2, batch_size=3, seed=0)
    summary = json.loads((tmp_path / "out" / "train.json").read_text(encoding="utf-8"))
    assert summary["examples"] == len(EXPECTED)
    records = [json.loads(line) for line in (tmp_path / "out" / "training" / "metrics.jsonl").read_text(
        encoding="utf-8").splitlines()]
    # every anchor of a batch of 3 triples ranks 3 positives and 3 hard negatives (pairs: 3 candidates)
    logged = [r for r in records if "candidates" in r]
    assert logged and all(r["candidates"] == 6.0 and r["loss"] > 0 for r in logged)
