"""Pre-training from scratch: tokenizer + tiny BERT (MLM) and T5 (span corruption), standard HF output,
the `sentforge pretrain` command (refuses a non-empty output, resumes)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import CORPUS
from transformers import AutoModel, AutoTokenizer, BertModel, T5Model
from typer.testing import CliRunner

from sentforge import build_encoder, load
from sentforge.cli import app
from sentforge.support.errors import ConfigError, InputFileError, OutputExistsError
from sentforge.recipes.pretrain import (
    PretrainConfig,
    canonical_vocabulary,
    pretrain,
    pretrain_corpus,
    random_init_like,
    split_heldout,
    train_tokenizer,
)

# Enough distinct sentences for a tokenizer and a held-out split.
SENTENCES = [f"{text} number {i} of the story" for i, text in enumerate(CORPUS * 3)]
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _config(kind: str, **overrides) -> PretrainConfig:
    options = {"kind": kind, "size": "tiny", "steps": 30, "batch_size": 8, "heldout": 16, "checkpoint_every": 10,
               "eval_every": 10, "vocab_size": 300, "lr": 3e-3, "log_every": 5}
    return PretrainConfig(**{**options, **overrides})


def test_heldout_split_is_seeded_and_disjoint():
    train, held = split_heldout(SENTENCES, 10, seed=1)
    assert len(held) == 10 and len(train) == len(SENTENCES) - 10 and not set(held) & set(train)
    assert split_heldout(SENTENCES, 10, seed=1) == (train, held)
    with pytest.raises(ConfigError, match="cannot hold out"):
        split_heldout(SENTENCES[:5], 5, seed=0)


@pytest.mark.parametrize("kind", ["mlm", "t5"])
def test_canonical_vocabulary_renumbers_without_changing_tokenisation(tmp_path, kind):
    tokenizer = train_tokenizer(kind, SENTENCES, 300)
    tokenizer.save_pretrained(tmp_path)
    special_ids = {token: tokenizer.convert_tokens_to_ids(token) for token in tokenizer.all_special_tokens}
    canonical_vocabulary(tmp_path / "tokenizer.json")
    renumbered = AutoTokenizer.from_pretrained(tmp_path)
    for text in SENTENCES[:20]:
        assert renumbered.tokenize(text) == tokenizer.tokenize(text)
    assert {token: renumbered.convert_tokens_to_ids(token) for token in special_ids} == special_ids
    model = json.loads((tmp_path / "tokenizer.json").read_text())["model"]
    if kind == "mlm":
        ordinary = [t for t, _ in sorted(model["vocab"].items(), key=lambda item: item[1]) if t not in special_ids]
        assert ordinary == sorted(ordinary)
    else:
        scores = [score for piece, score in model["vocab"] if piece not in special_ids]
        assert scores == sorted(scores, reverse=True)


def test_mlm_pretraining_writes_a_standard_model_that_learned(tmp_path):
    out = tmp_path / "bert"
    summary = pretrain(SENTENCES, out, _config("mlm"), show_progress=False)
    records = [json.loads(line) for line in (out / "training" / "metrics.jsonl").read_text().splitlines()]
    evals = [r["eval"] for r in records if "eval" in r]
    assert [r["step"] for r in records if "eval" in r] == [0, 10, 20, 30]
    assert evals[-1]["mlm_loss"] < 0.85 * evals[0]["mlm_loss"]
    assert summary["heldout"] == evals[-1] and summary["steps"] == 30 and summary["tokens_per_second"] > 0
    assert json.loads((out / "pretrain.json").read_text())["heldout"] == summary["heldout"]

    model = AutoModel.from_pretrained(out)
    assert isinstance(model, BertModel) and model.config.num_hidden_layers == 2 and model.config.hidden_size == 64
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert tokenizer.mask_token == "[MASK]" and len(tokenizer) == model.config.vocab_size
    encoder = load(out)
    vectors = encoder.encode(["a cat on a mat", "the train leaves"])
    assert vectors.shape == (2, 64) and np.isfinite(vectors).all()
    # The saved encoder weights are the trained ones (not a fresh initialisation).
    again = build_encoder(out)
    assert np.allclose(again.encode(["a cat on a mat"]), vectors[:1], atol=1e-6)
    random = random_init_like(out, seed=0)
    assert random.dim == 64 and not np.allclose(random.encode(["a cat on a mat"]), vectors[:1], atol=1e-3)


def test_t5_pretraining_writes_a_standard_model_that_learned(tmp_path):
    out = tmp_path / "t5"
    summary = pretrain(SENTENCES, out, _config("t5"), show_progress=False)
    records = [json.loads(line) for line in (out / "training" / "metrics.jsonl").read_text().splitlines()]
    evals = [r["eval"]["span_loss"] for r in records if "eval" in r]
    assert evals[-1] < 0.5 * evals[0] and summary["heldout"]["span_loss"] == evals[-1]
    assert isinstance(AutoModel.from_pretrained(out), T5Model)
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert tokenizer.convert_tokens_to_ids("<extra_id_0>") != tokenizer.unk_token_id
    assert load(out).encode(["a cat"]).shape == (1, 64)
    assert build_encoder(out, backbone="t5-encdec", pooling="first").encode(["a cat"]).shape == (1, 64)


def test_pretrain_output_rules(tmp_path):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("user data")
    with pytest.raises(OutputExistsError, match="not empty"):
        pretrain(SENTENCES, out, _config("mlm", steps=2))
    with pytest.raises(OutputExistsError, match="holds no pre-training run"):
        pretrain(SENTENCES, out, _config("mlm", steps=2), resume=True)
    assert (out / "keep.txt").read_text() == "user data"
    with pytest.raises(ConfigError, match="unknown model size"):
        PretrainConfig(kind="t5", size="huge")


def test_cli_refuses_non_empty_output_and_resumes(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES), encoding="utf-8")
    out = tmp_path / "run"
    out.mkdir()
    (out / "x").write_text("x")
    args = ["pretrain", "mlm", "--corpus", str(corpus), "--config", "tiny", "--steps", "6", "--batch-size", "8",
            "--heldout", "16", "--vocab-size", "300", "--checkpoint-every", "3", "--output", str(out), "--seed", "1"]
    runner = CliRunner()
    refused = runner.invoke(app, args)
    assert refused.exit_code != 0 and isinstance(refused.exception, OutputExistsError)
    refused = runner.invoke(app, [*args, "--overwrite"])  # x is not a pretrain output's: kept
    assert isinstance(refused.exception, OutputExistsError) and "holds x" in str(refused.exception)
    assert (out / "x").read_text() == "x"
    (out / "x").unlink()
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "6 steps" in done.output
    again = runner.invoke(app, [*args, "--overwrite"])  # its own earlier output is replaced
    assert again.exit_code == 0, again.output
    weights = (out / "model.safetensors").read_bytes()
    # Resuming a finished run restores the last checkpoint and writes the same model again.
    again = runner.invoke(app, [*args, "--resume"])
    assert again.exit_code == 0, again.output
    assert (out / "model.safetensors").read_bytes() == weights


def test_pretrain_corpus_writes_the_model_of_the_pretrain_command(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES), encoding="utf-8")
    settings = {"steps": 4, "batch_size": 8, "heldout": 16, "vocab_size": 300, "seed": 1}
    done = CliRunner().invoke(app, ["pretrain", "mlm", "--corpus", str(corpus), "--config", "tiny",
                                    *(arg for name, value in settings.items()
                                      for arg in (f"--{name.replace('_', '-')}", str(value))),
                                    "--output", str(tmp_path / "cli")])
    assert done.exit_code == 0, done.output
    summary = pretrain_corpus("mlm", [corpus], tmp_path / "python", size="tiny", **settings)
    # The same run: settings, sentences and model (a tokenizer trained twice breaks ties differently, so the
    # weights are not compared).
    cli = json.loads((tmp_path / "cli" / "pretrain.json").read_text())
    same = ("config", "model_size", "parameters", "train_sentences", "heldout_sentences", "steps")
    assert {key: summary[key] for key in same} == {key: cli[key] for key in same}
    assert load(tmp_path / "python").encode(SENTENCES[:3]).shape == load(tmp_path / "cli").encode(SENTENCES[:3]).shape
    short = tmp_path / "short.txt"
    short.write_text("too short\n", encoding="utf-8")
    with pytest.raises(InputFileError, match="no sentences of 3-128 words"):
        pretrain_corpus("mlm", [short], tmp_path / "none", size="tiny", steps=2)
