"""`sentforge labels` from class-labelled texts: sizes are examples per class, draws nested per class and seeded,
a class smaller than the largest size named, each run the setfit recipe scored by its own head on dev accuracy,
the curve's answer in examples per class, and bad input refused with one error line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import sentforge
from sentforge.classification.classifier import SentenceClassifier
from sentforge.classification.head import LogisticHead
from sentforge.data.classes import read_classes
from sentforge.learning_curve.classes import DEFAULT_SHOTS, ClassLabelData
from sentforge.learning_curve.read import read_label_data
from sentforge.support.errors import ConfigError

from conftest import assert_one_line_error, run_cli
from labels_domain import write_domain, write_jsonl

# Texts from the tiny model's vocabulary: two classes of 15 texts, one of 3 (smaller than the largest size).
BASES = {"support": ["how do i reset my password", "please cancel my subscription", "where can i change the language",
                     "my invoice shows a double charge", "the app crashes on start"],
         "scene": ["a man is playing a guitar", "two women are walking on the beach", "a child eats an apple",
                   "the cat sat on the mat", "a dog runs in the park"],
         "small": ["the weather is nice today", "the train leaves at noon"]}
ENDINGS = ("", " today", " in the park")


def texts_of(label: str) -> list[str]:
    return [f"{base}{ending}" for ending in ENDINGS for base in BASES[label]]


def write_classes(folder: Path) -> tuple[Path, Path]:
    """FOLDER/train.jsonl (8, 8 and 3 texts) and FOLDER/dev.jsonl (the other texts of the two large classes and
    two of the small one)."""
    folder.mkdir()
    train, dev = [], []
    for label, count in (("support", 8), ("scene", 8), ("small", 3)):
        texts = texts_of(label)
        train += [{"text": text, "label": label} for text in texts[:count]]
        dev += [{"text": text, "label": label} for text in texts[count:][:7]]
    return write_jsonl(folder / "train.jsonl", train), write_jsonl(folder / "dev.jsonl", dev)


@pytest.fixture()
def classes(tmp_path) -> tuple[Path, Path]:
    return write_classes(tmp_path / "classes")


def test_a_class_labelled_file_is_read_as_classes_and_counts_examples_per_class(classes):
    train, _ = classes
    data = read_label_data(train)
    assert isinstance(data, ClassLabelData) and data.method == "classes" and data.recipe == "setfit"
    assert data.unit == "examples per class" and data.rows == read_classes(train)
    assert data.counts == Counter({"support": 8, "scene": 8, "small": 3})
    assert data.sizes(None, None) == [k for k in DEFAULT_SHOTS if k <= 8] == [2, 4, 8]
    assert data.sizes(None, [8, 2, 5, 2]) == [2, 5, 8]
    # The setfit recipe's pairs: two per text and round (20 rounds); the small class gives its 3 texts above 3.
    assert data.training_rows(2) == 2 * 20 * 6 and data.training_rows(5) == 2 * 20 * (5 + 5 + 3)


def test_draws_are_nested_per_class_and_seeded(classes):
    data = read_label_data(classes[0])
    sizes = [2, 3, 5, 8]
    for repeat in (0, 1):
        draws = {k: data.draw(k, seed=7, repeat=repeat) for k in sizes}
        for k in sizes:
            assert Counter(label for _, label in draws[k]) == {label: min(k, n) for label, n in data.counts.items()}
        for small, large in zip(sizes, sizes[1:]):
            for label in data.counts:  # class by class, the smaller draw lies inside the larger one
                assert {t for t, c in draws[small] if c == label} <= {t for t, c in draws[large] if c == label}
    assert data.draw(3, seed=7, repeat=0) == data.draw(3, seed=7, repeat=0)
    assert data.draw(3, seed=7, repeat=0) != data.draw(3, seed=7, repeat=1)
    assert data.draw(3, seed=7, repeat=0) != data.draw(3, seed=8, repeat=0)


def test_a_class_smaller_than_the_largest_size_is_named_and_sizes_are_checked(classes, tmp_path):
    data = read_label_data(classes[0])
    assert data.notes([2, 3]) == []
    (note,) = data.notes([2, 4, 8])
    assert note.startswith("1 of 3 classes have fewer than 8 examples: 'small' (3); a draw of k per class takes all")
    with pytest.raises(ConfigError, match="--shots 9: no class of .* has more than 8 examples"):
        data.sizes(None, [2, 9])
    with pytest.raises(ConfigError, match="--shots: examples per class are whole numbers of at least 2.*got 1"):
        data.sizes(None, [1, 4])
    with pytest.raises(ConfigError, match="--fractions: .* class-labelled texts, drawn per class: give --shots"):
        data.sizes([50, 100], None)
    pairs = read_label_data(write_jsonl(tmp_path / "pairs.jsonl", [{"sentence1": "a", "sentence2": "b"}] * 3))
    with pytest.raises(ConfigError, match="--shots counts examples per class"):
        pairs.sizes(None, [2, 4])
    with pytest.raises(ConfigError, match="--method mnrl: .* holds class-labelled texts"):
        read_label_data(classes[0], "mnrl")


FAST = {"repeats": 2, "steps": 10, "batch_size": 8, "max_seq_length": 16, "show_progress": False}


@pytest.mark.usefixtures("one_torch_thread")
def test_end_to_end_curve_over_examples_per_class(tiny_bert_dir, classes, tmp_path, caplog):
    train, dev = classes
    out = tmp_path / "curve"
    report = sentforge.labels(str(tiny_bert_dir), train, dev, out, shots=[2, 4, 8], target=99.0, seed=3, **FAST)
    assert report["method"] == "classes" and report["metric"] == "accuracy" and report["unit"] == "examples per class"
    assert [row["labels"] for row in report["sizes"]] == [2, 4, 8]
    assert report["settings"]["shots"] == [2, 4, 8] and report["settings"]["fractions"] is None
    runs = report["runs"]
    assert set(runs) == {f"n{k}-r{r}" for k in (2, 4, 8) for r in (0, 1)}
    assert all(r["status"] == "done" and r["steps"] == 10 for r in runs.values())
    assert runs["n8-r0"]["command"].startswith("sentforge train setfit ")
    # The small class is named before the work and in the report.
    assert any("'small' (3)" in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)
    markdown = (out / "report.md").read_text()
    assert "**Note**: 1 of 3 classes have fewer than 8 examples: 'small' (3)" in markdown
    assert f"Start model + head on the draw of 8 examples per class (repeat 0): dev accuracy {report['start']:.2f}." \
        in markdown
    assert "nested draws of 2, 4, 8 examples per class" in markdown and "| examples per class | runs |" in markdown
    # The subsets are nested per class within a repeat, with min(k, class size) texts of each class.
    for repeat in (0, 1):
        draws = {k: read_classes(out / "subsets" / f"n{k}-r{repeat}.jsonl") for k in (2, 4, 8)}
        assert Counter(c for _, c in draws[4]) == {"support": 4, "scene": 4, "small": 3}
        assert set(draws[2]) < set(draws[4]) < set(draws[8])
    # Each run's dev accuracy is its saved classifier's (its own head) on the dev texts.
    gold = read_classes(dev, min_per_class=1)
    for name in ("n2-r0", "n8-r1"):
        classifier = SentenceClassifier.load(out / "runs" / name)
        predicted = classifier.predict([text for text, _ in gold])
        assert runs[name]["dev"] == pytest.approx(100 * np.mean([p == g for p, (_, g) in zip(predicted, gold)]))
    # The start model's reference: a head on its vectors of the largest draw of repeat 0.
    start = sentforge.load(str(tiny_bert_dir))
    start.max_seq_length = 16
    largest = read_classes(out / "subsets" / "n8-r0.jsonl")
    head = LogisticHead.fit(start.encode([t for t, _ in largest]), [c for _, c in largest], seed=3)
    predicted = head.predict(start.encode([t for t, _ in gold]))
    assert report["start"] == pytest.approx(100 * np.mean([p == g for p, (_, g) in zip(predicted, gold)]))
    # Three sizes fit the curve, and the answer is in examples per class.
    assert report["answer"] is not None and report["answer"]["target"]["score"] == 99.0
    assert "With 8 examples per class the measured mean is" in markdown
    assert "- Target 99: " in markdown
    # A rerun of the finished command trains nothing.
    again = sentforge.labels(str(tiny_bert_dir), train, dev, out, shots=[2, 4, 8], target=99.0, seed=3, **FAST)
    assert again["runs"] == runs


@pytest.mark.usefixtures("one_torch_thread")
def test_cli_answers_in_examples_per_class(tiny_bert_dir, classes, tmp_path, capsys):
    train, dev = classes
    code, stdout, err = run_cli(["labels", "--model", tiny_bert_dir, "--labelled", train, "--dev", dev, "--output",
                                 tmp_path / "o", "--shots", "2,3,4", "--repeats", "1", "--steps", "10",
                                 "--batch-size", "8", "--max-seq-length", "16", "--target", "100", "--seed", "1"],
                                capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["settings"]["sizes"] == [2, 3, 4] and report["settings"]["seed"] == 1
    assert len(report["notes"]) == 1 and stdout.startswith("with 2x the labels: dev accuracy ")
    assert "; target 100: " in stdout
    target = report["answer"]["target"]
    if target["status"] in ("reached", "predicted"):
        assert "examples per class" in stdout


def test_cli_bad_class_input_gives_one_error_line(tiny_bert_dir, classes, tmp_path, capsys):
    train, dev = classes
    domain = write_domain(tmp_path / "pairs")
    out = tmp_path / "o"

    def refused(labelled, dev_file, *extra):
        return run_cli(["labels", "--model", tiny_bert_dir, "--labelled", labelled, "--dev", dev_file, "--output",
                        out, *extra], capsys)[::2]

    assert_one_line_error(*refused(train, dev, "--shots", "2,x"), "--shots", "'2,x'")
    assert_one_line_error(*refused(train, dev, "--shots", "1,4"), "--shots", "at least 2")
    assert_one_line_error(*refused(train, dev, "--shots", "4,16"), "--shots 16", "more than 8 examples")
    assert_one_line_error(*refused(train, dev, "--fractions", "50,100"), "--fractions", "give --shots")
    assert_one_line_error(*refused(train, domain / "dev.jsonl"), "--dev", "class-labelled dev texts", "reranking")
    assert_one_line_error(*refused(domain / "labelled.jsonl", dev), "--dev", "class-labelled texts score")
    assert_one_line_error(*refused(domain / "labelled.jsonl", domain / "dev.jsonl", "--shots", "2"),
                          "--shots counts examples per class")
    assert_one_line_error(*refused(train, tmp_path / "none.jsonl"), "--dev", "none.jsonl", "not found")
    lonely = write_jsonl(tmp_path / "lonely.jsonl", [*map(json.loads, train.read_text().splitlines()),
                                                     {"text": "a child eats an apple", "label": "lonely"}])
    assert_one_line_error(*refused(lonely, dev), "lonely.jsonl", "1 class(es) with one example: 'lonely'")
    assert_one_line_error(*refused(train, dev, "--target", "101"), "--target 101", "[0, 100]")
    assert not out.exists()
