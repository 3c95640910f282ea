"""Model cards: written on every save, kept by load -> save, extended by `sentforge eval --add-to-card`."""

from __future__ import annotations

import json

import pytest
from conftest import CORPUS, run_cli
from huggingface_hub import ModelCard

import sentforge
from sentforge import build_encoder
from sentforge.support.errors import ConfigError
from sentforge.evaluation.readers.sts import STSB_RAW
from sentforge.evaluation.runner import add_results_to_card

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture()
def trained_looking(tiny_bert_dir):
    encoder = build_encoder(tiny_bert_dir, projection_dim=16, normalize=True, name="tiny-tsdae")
    encoder.prompts = {"query": "query: "}
    encoder.card.base_model = "tiny-bert"
    encoder.card.set_training("tsdae", {"lr": 3e-5, "batch_size": 8, "steps": 100})
    encoder.card.add_dataset("brown", size=1000, role="unlabelled corpus")
    return encoder


def test_save_writes_a_hugging_face_card(trained_looking, tmp_path):
    trained_looking.save(tmp_path / "m")
    card = ModelCard.load(tmp_path / "m" / "README.md")
    assert card.data.base_model == "tiny-bert" and card.data.library_name == "sentence-transformers"
    assert card.data.datasets == ["brown"] and "tsdae" in card.data.tags
    for expected in ("| lr | 3e-05 |", "| steps | 100 |", "| brown | unlabelled corpus | 1,000 |",
                     "**Output dimension:** 16", "`query`: 'query: '", "Projection", "No evaluation recorded"):
        assert expected in card.text, expected


def test_load_then_save_keeps_the_card(trained_looking, tmp_path):
    trained_looking.save(tmp_path / "first")
    sentforge.load(tmp_path / "first").save(tmp_path / "second")
    first, second = (json.loads((tmp_path / d / "model_card.json").read_text()) for d in ("first", "second"))
    assert first == second and first["training_method"] == "tsdae"


def test_eval_adds_its_results_to_the_card(trained_looking, tmp_path, capsys):
    trained_looking.save(tmp_path / "m")
    sts = tmp_path / "data" / STSB_RAW
    sts.parent.mkdir(parents=True)
    rows = [f"main-news\tf\t2012\t{i}\t{(i * 7) % 6}.0\t{CORPUS[i]}\t{CORPUS[(i * 5 + 1) % 12]}" for i in range(12)]
    sts.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run_cli(["eval", "--model", tmp_path / "m", "--tasks", "STSBenchmark-raw", "--data-dir",
                              tmp_path / "data", "--output", tmp_path / "r.json", "--add-to-card"], capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    score = report["tasks"]["STSBenchmark-raw"]["main_score"]
    card = ModelCard.load(tmp_path / "m" / "README.md")
    (result,) = card.data.eval_results
    assert (result.dataset_name, result.metric_type, result.metric_value) == ("STSBenchmark-raw", "spearman", score)
    assert f"| STSBenchmark-raw | sts | spearman | {score:.2f} |" in card.text
    assert "training_method" in (tmp_path / "m" / "model_card.json").read_text()


def test_card_target_must_be_a_model_directory(tmp_path):
    with pytest.raises(ConfigError, match="not a saved model directory"):
        add_results_to_card(tmp_path, {"tasks": {}})
