"""`sentforge adapt` from class-labelled texts on a tiny random model: the class candidates (the start model with a
head, setfit, tsdae, tsdae+setfit) run end to end, each scored again here by the accuracy of a head fitted on the
labelled texts; the choice follows the dev accuracies; dev texts are not trained on; OUTPUT/model is a classifier
that `sentforge predict` reads; a dev or test set of the other kind is refused with one error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sentforge
from sentforge.adaptation.candidates import check_methods
from sentforge.adaptation.intervals import selection_items
from sentforge.adaptation.select import select
from sentforge.classification.classifier import SentenceClassifier
from sentforge.data.classes import read_classes
from sentforge.data.near_duplicates import near_duplicates
from sentforge.evaluation.own.classes import ClassesTask
from sentforge.harness.dev_scores import load_items, paired_gain
from sentforge.support.errors import ConfigError

from adapt_domain import write_jsonl
from conftest import assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# Texts from the tiny model's vocabulary, two classes.
BASES = {"support": ["how do i reset my password", "please cancel my subscription", "where can i change the language",
                     "my invoice shows a double charge", "the app crashes on start"],
         "scene": ["a man is playing a guitar", "two women are walking on the beach", "a child eats an apple",
                   "the cat sat on the mat", "a dog runs in the park"]}
ENDINGS = ("", " today", " at noon", " on the beach")
WORDS = {"support": ["password", "subscription", "language", "invoice", "charge", "app", "crashes"],
         "scene": ["guitar", "beach", "child", "apple", "cat", "mat", "dog", "park"]}
FAST = {"eval_every": 2, "max_epochs": 1, "show_progress": False, "keep": "all",
        "overrides": {"tsdae": {"lr": 1e-3}, "setfit": {"lr": 1e-3, "iterations": 1},
                      "tsdae+setfit": {"lr": 1e-3, "iterations": 1}}}


def write_classes(folder: Path) -> dict[str, Path]:
    """FOLDER/labelled.jsonl (the first two endings of each text), dev.jsonl and test.jsonl (the third and fourth:
    near copies of labelled texts, which tests that run hygiene replace)."""
    folder.mkdir()
    rows = {ending: [{"text": f"{base}{ending}", "label": label} for label, bases in BASES.items() for base in bases]
            for ending in ENDINGS}
    return {"labelled": write_jsonl(folder / "labelled.jsonl", rows[""] + rows[" today"]),
            "dev": write_jsonl(folder / "dev.jsonl", rows[" at noon"]),
            "test": write_jsonl(folder / "test.jsonl", rows[" on the beach"])}


@pytest.fixture()
def classes(tmp_path) -> dict[str, Path]:
    return write_classes(tmp_path / "classes")


def adapt(model, files: dict[str, Path], output: Path, **settings):
    options = {**FAST, "keep_dev_texts": True, **settings}
    return sentforge.adapt(str(model), options.pop("unlabelled", None), files["dev"], output,
                           labelled=files["labelled"], **options)


def test_class_candidates_run_end_to_end_scored_by_dev_accuracy(tiny_bert_dir, classes, tmp_path, capsys):
    out = tmp_path / "adapted"
    report = adapt(tiny_bert_dir, classes, out, test=classes["test"])
    key = tiny_bert_dir.name
    # (then the leader's continuation, with the time left)
    assert list(report.candidates)[:4] == [f"{key}.{m}" for m in ("start", "tsdae", "setfit", "tsdae+setfit")]
    assert report.metric == "accuracy" and report.test_metric == "accuracy"
    labelled = read_classes(classes["labelled"])
    dev = ClassesTask(classes["dev"], train=classes["labelled"])
    test = ClassesTask(classes["test"], train=classes["labelled"])
    for name, result in report.candidates.items():
        assert result.done, (name, result)
        encoder = sentforge.load(result.model_path)
        # Every candidate's dev and test accuracy: a head fitted on its vectors of the labelled texts.
        assert dev.evaluate(encoder)["accuracy"] == pytest.approx(result.dev, abs=1e-9), name
        assert test.evaluate(encoder)["accuracy"] == pytest.approx(result.test, abs=1e-9), name
        assert result.macro_f1 == {"dev": pytest.approx(dev.evaluate(encoder)["macro_f1"], abs=1e-6),
                                   "test": pytest.approx(test.evaluate(encoder)["macro_f1"], abs=1e-6)}
    assert "setfit" in report.candidates[f"{key}.setfit"].commands[0]
    assert report.candidates[f"{key}.tsdae+setfit"].start.startswith(str(out / "runs" / f"{key}.tsdae"))
    # OUTPUT/model: the chosen encoder with the head that scored it on dev.
    classifier = SentenceClassifier.load(out / "model")
    chosen = report.candidates[report.selected]
    texts = [text for text, _ in dev.evaluated]
    assert classifier.predict(texts) == SentenceClassifier.fit(sentforge.load(chosen.model_path), labelled,
                                                               seed=dev.seed).predict(texts)
    correct = [p == gold for p, (_, gold) in zip(classifier.predict(texts), dev.evaluated)]
    assert 100 * sum(correct) / len(correct) == pytest.approx(chosen.dev, abs=1e-9)
    saved = json.loads((out / "report.json").read_text())
    assert saved["candidates"][report.selected]["macro_f1"]["dev"] == pytest.approx(chosen.macro_f1["dev"])
    markdown = (out / "report.md").read_text()
    assert "accuracy" in markdown and "macro-F1" in markdown
    # `sentforge predict` reads it.
    (tmp_path / "texts.txt").write_text("".join(f"{text}\n" for text in texts[:3]), encoding="utf-8")
    code, _, err = run_cli(["predict", out / "model", tmp_path / "texts.txt", "--output", tmp_path / "predicted.json"],
                           capsys)
    assert code == 0, err
    predicted = json.loads((tmp_path / "predicted.json").read_text())["predictions"]
    assert [p["label"] for p in predicted] == classifier.predict(texts[:3])


def test_the_choice_follows_the_paired_dev_accuracies(tiny_bert_dir, classes, tmp_path):
    # Single words as dev texts: harder than near copies of the labelled texts, so that the candidates differ.
    dev = [{"text": word, "label": label} for label, words in WORDS.items() for word in words]
    write_jsonl(classes["dev"], dev)
    out = tmp_path / "adapted"
    report = adapt(tiny_bert_dir, classes, out, candidates=["setfit"], select_rule="best")
    results = {name: r for name, r in report.candidates.items() if r.done}
    task = ClassesTask(classes["dev"], train=classes["labelled"])
    for name, result in results.items():
        # The saved dev units are the dev items' correctness under the candidate's head (x100).
        right = [100.0 * (p == gold) for p, (_, gold) in zip(task.predictions(sentforge.load(result.model_path))[0],
                                                             task.evaluated)]
        assert list(load_items(out, name).values) == right, name
        assert result.dev == pytest.approx(sum(right) / len(right), abs=1e-9)
    assert len({r.dev for r in results.values()}) > 1  # the data tells them apart
    assert report.selected == max(results, key=lambda name: results[name].dev)
    # The default rule on the same per-item correctness: select.py's choice, with its paired intervals.
    starts = [name for name in results if name.endswith(".start")]
    expected = select(results, starts, "labels-first", selection_items(out, results, "labels-first", 0), 0, None)
    labels_first = adapt(tiny_bert_dir, classes, tmp_path / "again", candidates=["setfit"])
    assert labels_first.selected == expected.chosen
    for name, result in labels_first.candidates.items():
        if result.done:
            assert result.dev_gain.to_json() == paired_gain(load_items(out, starts[0]), load_items(out, name),
                                                            0).to_json()


def test_dev_and_test_texts_are_not_trained_on(tiny_bert_dir, tmp_path):
    files = write_classes(tmp_path / "classes")
    labelled = read_classes(files["labelled"])
    # Dev and test texts apart from the labelled ones, but for two dev texts that are labelled texts.
    dev = [{"text": text, "label": label} for text, label in labelled[:2]] + [
        {"text": word, "label": label} for word, label in (("guitar", "scene"), ("invoice", "support"),
                                                            ("apple", "scene"), ("password", "support"))]
    write_jsonl(files["dev"], dev)
    write_jsonl(files["test"], [{"text": "beach", "label": "scene"}, {"text": "subscription", "label": "support"}])
    heldout = [row["text"] for row in dev] + ["beach", "subscription"]
    texts = [text for text, _ in labelled]
    out = tmp_path / "adapted"
    report = adapt(tiny_bert_dir, files, out, test=files["test"], keep_dev_texts=False, candidates=["setfit"])
    # A labelled text is dropped when it is a dev or test text (the same words); a near copy of one, the same
    # template, is class signal and stays. The texts standing in for --unlabelled lose the near copies too.
    dropped = near_duplicates(texts, heldout, threshold=1.0)
    assert [text for text, hit in zip(texts, dropped) if hit] == [row["text"] for row in dev[:2]]
    near = near_duplicates(texts, heldout)
    assert near.sum() > dropped.sum()
    kept = [example for example, hit in zip(labelled, dropped) if not hit]
    assert read_classes(out / "data" / "classes.jsonl") == kept
    assert (out / "data" / "unlabelled.txt").read_text().splitlines() == [t for t, hit in zip(texts, near) if not hit]
    assert report.hygiene.counts["classes"].near_duplicates == int(dropped.sum())
    setfit = report.candidates[f"{tiny_bert_dir.name}.setfit"]
    assert str(out / "data" / "classes.jsonl") in setfit.commands[0]
    # The dev head is fitted on the kept texts only.
    task = ClassesTask(files["dev"], train=out / "data" / "classes.jsonl")
    start = report.candidates[f"{tiny_bert_dir.name}.start"]
    assert task.evaluate(sentforge.load(start.model_path))["accuracy"] == pytest.approx(start.dev, abs=1e-9)


def test_default_candidates_follow_the_labelled_data():
    assert check_methods(None, classes=True) == ["start", "tsdae", "setfit", "tsdae+setfit"]
    assert not {"setfit", "tsdae+setfit"} & set(check_methods(None))
    with pytest.raises(ConfigError, match="add tsdae"):
        check_methods(["tsdae+setfit"], classes=True)


def test_a_dev_or_test_set_of_the_other_kind_is_refused(tiny_bert_dir, classes, tmp_path, capsys):
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [{"sentence1": "a dog", "sentence2": "a cat", "label": 1},
                                                   {"sentence1": "a man", "sentence2": "the app", "label": 0}])
    base = ["adapt", "--model", tiny_bert_dir, "--output", tmp_path / "out"]
    code, _, err = run_cli([*base, "--labelled", classes["labelled"], "--dev", pairs], capsys)
    assert_one_line_error(code, err, "--dev", str(pairs), "class-labelled")
    code, _, err = run_cli([*base, "--labelled", classes["labelled"], "--dev", classes["dev"], "--test", pairs],
                           capsys)
    assert_one_line_error(code, err, "--test", str(pairs))
    code, _, err = run_cli([*base, "--labelled", pairs, "--unlabelled", classes["labelled"], "--dev", classes["dev"]],
                           capsys)
    assert_one_line_error(code, err, "--dev", str(classes["dev"]), "holds pairs")
    code, _, err = run_cli([*base, "--labelled", pairs, "--dev", classes["dev"]], capsys)
    assert_one_line_error(code, err, "--unlabelled")
    assert not (tmp_path / "out").exists()
