"""A trained model's card says how it was made: start model, method, hyper-parameters, data name and size."""

from __future__ import annotations

import json

import pytest

from conftest import CORPUS, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_train_writes_a_model_card_with_method_settings_and_data(tiny_bert_dir, tmp_path, capsys):
    corpus = tmp_path / "tickets.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    output = tmp_path / "tsdae"
    code, _, err = run_cli(["train", "tsdae", "--model", tiny_bert_dir, "--corpus", corpus, "--output", output,
                            "--steps", "2", "--batch-size", "4", "--seed", "0"], capsys)
    assert code in (0, None), err

    card = json.loads((output / "model_card.json").read_text(encoding="utf-8"))
    assert card["base_model"] == str(tiny_bert_dir)
    assert card["training_method"] == "tsdae"
    settings = card["hyperparameters"]
    assert settings["lr"] == 3e-5 and settings["batch_size"] == 4 and settings["steps"] == 2
    assert settings["noise_ratio"] == 0.6 and settings["pooling"] == "cls"
    assert "output_dir" not in settings
    summary = json.loads((output / "train.json").read_text(encoding="utf-8"))
    assert card["datasets"] == [{"name": "tickets.txt", "size": summary["examples"], "role": "training"}]

    readme = (output / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("---\n") and "tsdae" in readme and "tickets.txt" in readme
    assert str(tmp_path) not in readme.replace(str(tiny_bert_dir), "")
