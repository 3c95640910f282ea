"""The example domain of the README (examples/tickets/) reads in every format the README uses it for, and
its dev set leaves the training data whole: no dev text is a near copy of a text that adapt trains on, so dev
hygiene drops nothing."""

from __future__ import annotations

from sentforge.data.near_duplicates import near_duplicates
from sentforge.data.pairs import read_positives_and_negatives
from sentforge.data.texts import read_texts
from sentforge.evaluation import load_dataset
from sentforge.evaluation.own.pairs import LabelledPairsTask

from conftest import REPO

TICKETS = REPO / "examples" / "tickets"


def test_the_example_files_read_as_the_readme_uses_them():
    tickets = read_texts(TICKETS / "tickets.txt")
    positives, negatives = read_positives_and_negatives(TICKETS / "dupes.jsonl")
    dev = load_dataset(TICKETS / "dev.jsonl")
    assert len(tickets) == len(set(tickets)) >= 200
    assert len(positives) >= 100 and len(negatives) >= 50
    assert {text for pair in positives + negatives for text in pair} <= set(tickets)
    assert isinstance(dev, LabelledPairsTask) and len(dev.texts()) >= 100
    assert read_texts(TICKETS / "tickets.jsonl", field="body") == tickets[:40]
    assert len(read_texts(TICKETS / "faq.csv", column="question")) >= 10
    assert sum(path.stat().st_size for path in TICKETS.iterdir()) < 150_000


def test_no_dev_text_is_a_near_copy_of_a_training_text():
    dev = load_dataset(TICKETS / "dev.jsonl").texts()
    training = read_texts(TICKETS / "tickets.txt")
    assert not near_duplicates(training, dev).any()
