"""Sentence-T5 training (recipes/sentence_t5.py, `sentforge train st5`) on tiny random T5 and BERT models:
the encoders of the three variants, the recipe per backbone, two stages whose losses fall and whose
encoders are saved per stage, resume after a crash ending with the weights of an uninterrupted run,
output refusal and one-line errors; and the `train` command group keeps every method."""

from __future__ import annotations

import json
import shutil
import sys

import numpy as np
import pytest
import torch

import sentforge
from sentforge.cli import main
from sentforge.support.errors import ConfigError
from sentforge.modules import Normalize, Pooling, Projection, T5EncoderDecoder, Transformer
from sentforge.recipes import sentence_t5
from sentforge.recipes.sentence_t5 import SentenceT5Config, Stage, sentence_t5_encoder

from conftest import CORPUS, assert_one_line_error, run_cli

SENTENCES = sorted(set(CORPUS))
QA_PAIRS = [(s, s.replace("the ", "a ") + " indeed") for s in SENTENCES]
NLI_ROWS = [row for i, s in enumerate(SENTENCES) for row in (
    (s, f"{s} today", "entailment"), (s, f"nothing like {SENTENCES[(i + 3) % len(SENTENCES)]}", "contradiction"),
    (s, "maybe", "neutral"))]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def write_data(directory):
    directory.mkdir(parents=True, exist_ok=True)
    qa = directory / "qa.tsv"
    qa.write_text("sentence1\tsentence2\n" + "".join(f"{a}\t{b}\n" for a, b in QA_PAIRS), encoding="utf-8")
    nli = directory / "nli.tsv"
    nli.write_text("sentence1\tsentence2\tlabel\n" + "".join("\t".join(row) + "\n" for row in NLI_ROWS),
                   encoding="utf-8")
    return qa, nli


def invoke(args):
    """The exit code of `sentforge ARGS`, output left uncaptured: the module-scoped run cannot use capsys."""
    sys.argv = ["sentforge", *map(str, args)]
    with pytest.raises(SystemExit) as exit_info:
        main()
    return exit_info.value.code


def st5_args(model, qa, nli, output, *extra):
    return ["train", "st5", "--model", model, "--stage", "qa", "--qa-data", qa, "--stage", "nli", "--nli-data", nli,
            "--output", output, "--batch-size", 6, "--projection-dim", 16, "--log-every", 1, "--seed", 3, *extra]


STRAIGHT = ["--stage-steps", "6,6", "--lr", 1e-2, "--checkpoint-every", 2]


@pytest.fixture(scope="module")
def straight_run(tiny_t5_dir, tmp_path_factory):
    """One uninterrupted two-stage run (enc-mean), shared by the tests that inspect or resume it."""
    root = tmp_path_factory.mktemp("st5")
    qa, nli = write_data(root / "data")
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert invoke(st5_args(tiny_t5_dir, qa, nli, root / "straight", *STRAIGHT)) == 0
    finally:
        torch.set_num_threads(previous)
    return root, qa, nli


def losses(run_dir):
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [r["loss"] for r in records if "loss" in r]


# --- encoders ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("variant,backbone,mode", [("enc-mean", Transformer, "mean"), ("enc-first", Transformer, "cls"),
                                                   ("encdec-first", T5EncoderDecoder, "cls")])
def test_t5_variants(tiny_t5_dir, variant, backbone, mode):
    encoder = sentence_t5_encoder(tiny_t5_dir, variant, projection_dim=12, max_seq_length=20)
    assert [type(m) for m in encoder] == [backbone, Pooling, Projection, Normalize]
    assert encoder[1].modes == (mode,) and encoder.max_seq_length == 20
    vectors = encoder.encode(SENTENCES[:4])
    assert vectors.shape == (4, 12)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert sentence_t5.is_t5(encoder) and sentence_t5.variant_of(encoder) == variant
    assert SentenceT5Config().training_settings(encoder) == {"optimizer": "adafactor", "lr": 1e-3, "weight_decay": 0.0}


def test_bert_like_variants_and_recipe(tiny_bert_dir):
    encoder = sentence_t5_encoder(tiny_bert_dir, "cls")
    assert encoder[1].modes == ("cls",) and encoder.dim == 32  # projection default: the hidden size
    assert sentence_t5.variant_of(sentence_t5_encoder(tiny_bert_dir)) == "mean"
    settings = SentenceT5Config(device="cpu").training_settings(encoder)
    assert settings == {"optimizer": "adamw", "lr": 2e-5, "weight_decay": 0.01, "optimizer_options": {"fused": True}}
    assert SentenceT5Config(optimizer="adafactor", lr=1e-3).training_settings(encoder)["optimizer"] == "adafactor"
    with pytest.raises(Exception, match="T5-family"):
        sentence_t5_encoder(tiny_bert_dir, "encdec-first")
    with pytest.raises(ConfigError, match="unknown Sentence-T5 pooling"):
        sentence_t5_encoder(tiny_bert_dir, "max")


def test_sentence_transformers_directory_keeps_its_head(tiny_bert_dir, tmp_path):
    plain = sentforge.build_encoder(tiny_bert_dir, pooling="mean")
    plain.save(tmp_path / "plain")
    adapted = sentence_t5_encoder(tmp_path / "plain", projection_dim=8)  # gains projection + normalisation
    assert [type(m) for m in adapted] == [Transformer, Pooling, Projection, Normalize] and adapted.dim == 8
    adapted.save(tmp_path / "st5")
    again = sentence_t5_encoder(tmp_path / "st5", "cls")  # its projection is kept, the pooling replaced
    assert [type(m) for m in again] == [Transformer, Pooling, Projection, Normalize] and again[1].modes == ("cls",)
    torch.testing.assert_close(again[2].linear.weight, adapted[2].linear.weight)
    with pytest.raises(ConfigError, match="already projects to 8"):
        sentence_t5_encoder(tmp_path / "st5", projection_dim=16)
    with pytest.raises(ConfigError, match="encdec-first"):
        sentence_t5_encoder(tmp_path / "st5", "encdec-first")


def test_stage_checks():
    with pytest.raises(ConfigError, match="all be"):
        Stage("qa", [("a", "b"), ("a", "b", "c")])
    with pytest.raises(ConfigError, match="unknown stage"):
        Stage("mlm", [("a", "b")])
    with pytest.raises(ConfigError, match="no training examples"):
        Stage("nli", [])


# --- the CLI -----------------------------------------------------------------------------------------

def test_two_stages_fall_and_save_each_stage(straight_run, tiny_t5_dir):
    st = pytest.importorskip("sentence_transformers")
    root = straight_run[0]
    output = root / "straight"
    summary = json.loads((output / "train.json").read_text())
    assert summary["method"] == "st5" and summary["pooling"] == "enc-mean" and summary["dim"] == 16
    assert summary["training"] == {"optimizer": "adafactor", "lr": 1e-2, "weight_decay": 0.0}
    assert [s["stage"] for s in summary["stages"]] == ["stage-1-qa", "stage-2-nli"]
    assert [s["examples"] for s in summary["stages"]] == [len(QA_PAIRS), len(SENTENCES)]
    assert all(s["training"]["schedule"] == "t5-constant-then-linear" and s["steps"] == 6 for s in summary["stages"])
    for stage in ("stage-1-qa", "stage-2-nli"):
        stage_losses = losses(output / "training" / stage)
        assert len(stage_losses) == 6 and np.mean(stage_losses[-2:]) < np.mean(stage_losses[:2]), stage_losses
    untrained = sentence_t5_encoder(tiny_t5_dir, projection_dim=16)
    first, second, final = (sentforge.load(path).encode(SENTENCES)
                            for path in (output / "stage-1-qa", output / "stage-2-nli", output))
    np.testing.assert_array_equal(second, final)
    assert not np.allclose(first, final, atol=1e-4) and not np.allclose(untrained.encode(SENTENCES), first, atol=1e-4)
    theirs = st.SentenceTransformer(str(output), device="cpu").encode(SENTENCES, convert_to_numpy=True)
    np.testing.assert_allclose(final, theirs, atol=1e-5)


class Crash(Exception):
    pass


@pytest.mark.parametrize("crash_stage", ["stage-1-qa", "stage-2-nli"])
def test_resume_after_a_crash_ends_with_the_uninterrupted_weights(straight_run, tiny_t5_dir, tmp_path, monkeypatch,
                                                                   crash_stage):
    root, qa, nli = straight_run
    output = tmp_path / "parts"

    class CrashingTrainer(sentence_t5.Trainer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if self.output_dir.name == crash_stage:
                self.callbacks.append(self._crash)

        @staticmethod
        def _crash(state):
            if state.step == 3:  # after the checkpoint of step 2
                raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(sentence_t5, "Trainer", CrashingTrainer)
        with pytest.raises(Crash):
            invoke(st5_args(tiny_t5_dir, qa, nli, output, *STRAIGHT))
    assert (output / "stage-1-qa").exists() == (crash_stage == "stage-2-nli")
    assert invoke(st5_args(tiny_t5_dir, qa, nli, output, *STRAIGHT, "--resume")) == 0
    for path in ("stage-1-qa", "."):
        np.testing.assert_array_equal(sentforge.load(output / path).encode(SENTENCES),
                                      sentforge.load(root / "straight" / path).encode(SENTENCES))
    assert losses(output / "training" / crash_stage) == losses(root / "straight" / "training" / crash_stage)


def test_refuses_a_used_output_and_resume_checks_settings(straight_run, tiny_t5_dir, tmp_path, capsys):
    root, qa, nli = straight_run
    output = tmp_path / "copy"
    shutil.copytree(root / "straight", output)
    code, _, err = run_cli(st5_args(tiny_t5_dir, qa, nli, output, *STRAIGHT), capsys)
    assert_one_line_error(code, err, "not empty", "--overwrite")
    code, _, err = run_cli(st5_args(tiny_t5_dir, qa, nli, output, "--stage-steps", "5,6", "--resume"), capsys)
    assert_one_line_error(code, err, "cannot resume", "stage-1-qa", "requested_steps=6")
    code, _, err = run_cli(["train", "st5", "--model", tiny_t5_dir, "--stage", "nli", "--nli-data", nli,
                            "--output", output, "--batch-size", 6, "--stage-steps", 1, "--overwrite"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in output.iterdir() if p.name.startswith("stage-")) == ["stage-1-nli"]


def test_bert_like_one_stage_with_adamw(tiny_bert_dir, tmp_path, capsys):
    st = pytest.importorskip("sentence_transformers")
    _, nli = write_data(tmp_path / "data")
    code, _, err = run_cli(["train", "st5", "--model", tiny_bert_dir, "--pooling", "cls", "--stage", "nli",
                            "--nli-data", nli, "--output", tmp_path / "out", "--batch-size", 4, "--stage-epochs", 1,
                            "--symmetric"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "out/train.json").read_text())
    assert summary["pooling"] == "cls" and summary["symmetric"] and summary["stages"][0]["steps"] == 3  # 12 // 4
    assert summary["training"]["optimizer"] == "adamw" and summary["training"]["lr"] == 2e-5
    ours = sentforge.load(tmp_path / "out").encode(SENTENCES)
    theirs = st.SentenceTransformer(str(tmp_path / "out"), device="cpu").encode(SENTENCES, convert_to_numpy=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_encoder_decoder_variant_trains_and_loads(tiny_t5_dir, tmp_path, capsys):
    qa, _ = write_data(tmp_path / "data")
    code, _, err = run_cli(["train", "st5", "--model", tiny_t5_dir, "--pooling", "encdec-first", "--stage", "qa",
                            "--qa-data", qa, "--output", tmp_path / "out", "--batch-size", 6, "--stage-steps", 2],
                           capsys)
    assert code == 0, err
    encoder = sentforge.load(tmp_path / "out")
    assert isinstance(encoder[0], T5EncoderDecoder) and encoder.dim == 32
    untrained = sentence_t5_encoder(tiny_t5_dir, "encdec-first")
    assert not np.allclose(encoder.encode(SENTENCES), untrained.encode(SENTENCES), atol=1e-4)


def test_bad_input_gives_one_line_errors(tiny_t5_dir, tmp_path, capsys):
    qa, nli = write_data(tmp_path / "data")
    base = ["train", "st5", "--model", tiny_t5_dir, "--output", tmp_path / "o"]
    code, _, err = run_cli([*base, "--qa-data", qa], capsys)
    assert_one_line_error(code, err, "--stage nli needs --nli-data")
    code, _, err = run_cli([*base, "--stage", "qa", "--qa-data", qa, "--nli-data", nli], capsys)
    assert_one_line_error(code, err, "--nli-data given, but no --stage uses it")
    code, _, err = run_cli([*base, "--qa-data", qa, "--nli-data", nli, "--stage-steps", "1,2,3"], capsys)
    assert_one_line_error(code, err, "--stage-steps: 3 values for 2 stages")
    bad = tmp_path / "bad.tsv"
    bad.write_text("sentence1\tsentence2\nonly one field\n", encoding="utf-8")
    code, _, err = run_cli([*base, "--stage", "qa", "--qa-data", bad], capsys)
    assert_one_line_error(code, err, "bad.tsv:2")
    code, _, err = run_cli([*base, "--stage", "qa", "--qa-data", qa, "--batch-size", 64], capsys)
    assert_one_line_error(code, err, "fewer than one global batch")
    assert not (tmp_path / "o").exists()


# --- the train group ---------------------------------------------------------------------------------

def test_train_group_lists_every_method(capsys):
    code, out, _ = run_cli(["train", "--help"], capsys)
    assert code == 0
    for name in ("tsdae", "mlm", "simcse", "ct", "bertflow", "mnrl", "sts", "pause", "st5"):
        assert f" {name} " in out, name
    code, out, _ = run_cli(["train", "ct", "--help"], capsys)
    assert code == 0 and "--negatives" in out and "METHOD" not in out
    code, _, err = run_cli(["train", "nonsense", "--model", "x"], capsys)
    assert code == 2 and "nonsense" in err
