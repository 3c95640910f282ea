"""A classifier trained by the setfit recipe (both losses) on a tiny random BERT: the run directory holds the
encoder (a sentence-transformers directory: SentenceTransformer gives the same vectors) and the head in
safetensors; loaded in a fresh process it predicts the same probabilities; `sentforge predict` writes the same
classes, and refuses bad input with one error line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import sentforge
from sentforge.classification.classifier import SentenceClassifier
from sentforge.classification.head import HEAD_FILE
from sentforge.support.errors import ConfigError

from conftest import CORPUS, assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROWS = [{"text": text, "label": ("greeting", "support", "scene")[i % 3]} for i, text in enumerate(CORPUS[:12])]
TEXTS = ["the cat runs", "reset the app", "a man walks on the beach"]
FAST = {"iterations": 1, "batch_size": 4, "steps": 3, "show_progress": False}


def test_setfit_recipe_trains_a_classifier_that_round_trips(tiny_bert_dir, tmp_path):
    classifier = sentforge.train("setfit", tiny_bert_dir, ROWS, tmp_path / "out", seed=1, **FAST)
    assert isinstance(classifier, SentenceClassifier) and classifier.classes == ("greeting", "scene", "support")
    assert (tmp_path / "out" / HEAD_FILE).is_file() and not list((tmp_path / "out").glob("*.pkl"))
    summary = json.loads((tmp_path / "out" / "train.json").read_text())
    assert summary["method"] == "setfit" and summary["steps"] == 3 and summary["classes"] == 3
    probabilities = classifier.predict_proba(TEXTS)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-6)
    assert classifier.predict(TEXTS) == [classifier.classes[i] for i in probabilities.argmax(axis=1)]

    script = ("import json, sys; from sentforge.classification.classifier import SentenceClassifier; "
              "c = SentenceClassifier.load(sys.argv[1]); print(json.dumps(c.predict_proba(json.loads(sys.argv[2]))"
              ".tolist()))")
    fresh = subprocess.run([sys.executable, "-c", script, str(tmp_path / "out"), json.dumps(TEXTS)],
                           capture_output=True, text=True, check=True)
    np.testing.assert_array_equal(np.array(json.loads(fresh.stdout.strip().splitlines()[-1])), probabilities)

    from sentence_transformers import SentenceTransformer

    theirs = SentenceTransformer(str(tmp_path / "out"), device="cpu").encode(TEXTS, convert_to_numpy=True)
    np.testing.assert_allclose(theirs, classifier.encoder.encode(TEXTS), atol=1e-5)


def test_supcon_loss_trains_the_same_kind_of_classifier(tiny_bert_dir, tmp_path):
    classifier = sentforge.train("setfit", tiny_bert_dir, ROWS, tmp_path / "out", loss="supcon", seed=1, **FAST)
    assert classifier.classes == ("greeting", "scene", "support")
    assert json.loads((tmp_path / "out" / "train.json").read_text())["method_options"]["loss"] == "supcon"
    with pytest.raises(ConfigError, match="--loss must be one of cosine, supcon"):
        sentforge.train("setfit", tiny_bert_dir, ROWS, tmp_path / "bad", loss="triplet", **FAST)


def test_save_is_whole_and_refuses_an_existing_directory(tiny_bert_dir, tmp_path):
    from sentforge.support.errors import OutputExistsError

    classifier = SentenceClassifier.fit(sentforge.load(tiny_bert_dir), [(r["text"], r["label"]) for r in ROWS])
    classifier.save(tmp_path / "clf")
    assert SentenceClassifier.load(tmp_path / "clf").predict(TEXTS) == classifier.predict(TEXTS)
    with pytest.raises(OutputExistsError):
        classifier.save(tmp_path / "clf")


def test_cli_train_and_predict(tiny_bert_dir, tmp_path, capsys):
    data = tmp_path / "intents.csv"
    data.write_text("text,label\n" + "".join(f"{r['text']},{r['label']}\n" for r in ROWS), encoding="utf-8")
    code, _, err = run_cli(["train", "setfit", "--model", tiny_bert_dir, "--corpus", data, "--output",
                            tmp_path / "clf", "--steps", "2", "--batch-size", "4", "--iterations", "1",
                            "--seed", "3"], capsys)
    assert code == 0, err
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    code, out, err = run_cli(["predict", tmp_path / "clf", texts, "--output", tmp_path / "p.json"], capsys)
    assert code == 0, err
    assert "3 texts, 3 classes" in out
    report = json.loads((tmp_path / "p.json").read_text())
    expected = SentenceClassifier.load(tmp_path / "clf").predict(TEXTS)
    assert [p["label"] for p in report["predictions"]] == expected
    assert report["classes"] == ["greeting", "scene", "support"]

    code, _, err = run_cli(["predict", tmp_path / "clf", texts, "--output", tmp_path / "p.json"], capsys)
    assert_one_line_error(code, err, "p.json already exists")
    code, _, err = run_cli(["predict", tiny_bert_dir, texts, "--output", tmp_path / "q.json"], capsys)
    assert_one_line_error(code, err, f"no {HEAD_FILE}")
    code, _, err = run_cli(["predict", tmp_path / "clf", tmp_path / "absent.txt", "--output", tmp_path / "q.json"],
                           capsys)
    assert_one_line_error(code, err, "absent.txt")
