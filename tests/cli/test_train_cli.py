"""`sentforge train`: every method runs from the command line on the Trainer, runs chain through
--model, a TSDAE model written by the CLI loads in sentence-transformers with identical vectors,
--resume ends where an uninterrupted run ends, and bad input gives one clean error line."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sentforge

from conftest import CORPUS, assert_one_line_error, run_cli

PAIRS = [("the cat sat on the mat", "a cat is sitting on a mat", 4.2),
         ("a dog runs in the park", "the weather is nice today", 0.4),
         ("how do i reset my password", "where can i change my password", 3.1),
         ("the app crashes on start", "the application fails when it starts", 4.8),
         ("a man is playing a guitar", "two women are walking on the beach", 0.0),
         ("please cancel my subscription", "i want to end my subscription", 4.0)]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture()
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("".join(f"{line}\n" for line in CORPUS), encoding="utf-8")
    return path


def train(method, model, corpus, output, capsys, *extra):
    code, out, err = run_cli(["train", method, "--model", model, "--corpus", corpus, "--output", output,
                              "--batch-size", 4, *extra], capsys)
    assert code == 0, err
    return json.loads((output / "train.json").read_text(encoding="utf-8"))


def test_tsdae_from_the_cli_loads_in_sentence_transformers(tiny_bert_dir, corpus, tmp_path, capsys):
    st = pytest.importorskip("sentence_transformers")
    summary = train("tsdae", tiny_bert_dir, corpus, tmp_path / "tsdae", capsys, "--steps", 3, "--lr", 1e-3)
    assert summary["steps"] == 3 and summary["pooling"] == "cls"
    assert summary["method_options"] == {"noise": "delete", "noise_ratio": 0.6, "tied": True}
    assert summary["training"]["optimizer"] == "adamw" and summary["training"]["lr"] == 1e-3
    records = [json.loads(line) for line in (tmp_path / "tsdae/training/metrics.jsonl").read_text().splitlines()]
    assert any(r.get("step") == 3 and "loss" in r for r in records)
    ours = sentforge.load(tmp_path / "tsdae").encode(CORPUS)
    untrained = sentforge.build_encoder(tiny_bert_dir, pooling="cls").encode(CORPUS)
    assert not np.allclose(ours, untrained, atol=1e-4)
    theirs = st.SentenceTransformer(str(tmp_path / "tsdae"), device="cpu").encode(CORPUS, convert_to_numpy=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_a_pooling_that_the_method_changes_is_said_on_the_last_line_and_lines_are_told_from_sentences(
        tiny_bert_dir, tmp_path, capsys, caplog):
    """A plain Hugging Face directory pools by mean; TSDAE trains with CLS pooling, a switch that alone moves every
    score. Two sentences on one line are two training sentences (adapt reads one text per line)."""
    corpus = tmp_path / "corpus.txt"
    lines = [f"{first}. {second.capitalize()}." for first, second in zip(CORPUS[:10], CORPUS[10:20])]
    corpus.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")  # two sentences a line
    code, out, err = run_cli(["train", "tsdae", "--model", tiny_bert_dir, "--corpus", corpus, "--output",
                              tmp_path / "t", "--batch-size", 4, "--steps", 1], capsys)
    assert code == 0, err
    assert out.splitlines()[-1] == ("pooling: mean -> cls, tsdae's pooling: the switch alone changes every score of "
                                    "the model; --pooling keep trains with the start model's")
    assert json.loads((tmp_path / "t" / "train.json").read_text())["pooling_before"] == "mean"
    assert any(r.getMessage().startswith(f"corpus.txt: 10 texts split into {2 * 10} sentences (a line may hold a "
                                         "paragraph; split=False, --no-split, trains on one text per line as adapt "
                                         "does)") for r in caplog.records)
    code, out, err = run_cli(["train", "tsdae", "--model", tiny_bert_dir, "--corpus", corpus, "--output",
                              tmp_path / "k", "--batch-size", 4, "--steps", 1, "--pooling", "keep"], capsys)
    assert code == 0, err
    assert not any(line.startswith("pooling:") for line in out.splitlines())
    assert "pooling_before" not in json.loads((tmp_path / "k" / "train.json").read_text())


@pytest.mark.parametrize("method,extra,modules", [
    ("mlm", [], ["Transformer", "Pooling"]),
    ("simcse", [], ["Transformer", "Pooling"]),
    ("ct", ["--negatives", 3], ["Transformer", "Pooling"]),
    ("bertflow", ["--flow-steps", 2], ["Transformer", "Pooling", "Flow"]),
    ("tsdae", ["--noise", "swap", "--noise-ratio", 0.3, "--untied", "--pooling", "max"], ["Transformer", "Pooling"]),
])
def test_unsupervised_methods(tiny_bert_dir, corpus, tmp_path, capsys, method, extra, modules):
    summary = train(method, tiny_bert_dir, corpus, tmp_path / method, capsys, "--steps", 2, *extra)
    assert summary["method"] == method and summary["steps"] == 2
    encoder = sentforge.load(tmp_path / method)
    assert [type(m).__name__ for m in encoder] == modules
    vectors = encoder.encode(CORPUS[:5])
    assert vectors.shape == (5, 32) and np.isfinite(vectors).all()


def test_unsupervised_then_supervised_chain(tiny_bert_dir, corpus, tmp_path, capsys):
    train("tsdae", tiny_bert_dir, corpus, tmp_path / "tsdae", capsys, "--steps", 2)
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("sentence1\tsentence2\n" + "".join(f"{a}\t{b}\n" for a, b, _ in PAIRS), encoding="utf-8")
    summary = train("mnrl", tmp_path / "tsdae", tsv, tmp_path / "mnrl", capsys, "--steps", 2)
    assert summary["model"] == str(tmp_path / "tsdae") and summary["pooling"] == "keep"
    assert [m.modes for m in sentforge.load(tmp_path / "mnrl") if hasattr(m, "modes")] == [("cls",)]
    jsonl = tmp_path / "sts.jsonl"
    jsonl.write_text("".join(json.dumps({"sentence1": a, "sentence2": b, "score": s}) + "\n" for a, b, s in PAIRS),
                     encoding="utf-8")
    summary = train("sts", tmp_path / "mnrl", jsonl, tmp_path / "sts", capsys, "--steps", 3, "--lr", 1e-3)
    assert summary["examples"] == len(PAIRS)
    before, after = sentforge.load(tmp_path / "mnrl").encode(CORPUS), sentforge.load(tmp_path / "sts").encode(CORPUS)
    assert not np.allclose(before, after, atol=1e-5)


def test_resume_ends_with_the_uninterrupted_weights(tiny_bert_dir, corpus, tmp_path, capsys):
    common = ["--lr", 1e-3, "--checkpoint-every", 2, "--seed", 5]
    train("tsdae", tiny_bert_dir, corpus, tmp_path / "straight", capsys, "--steps", 4, *common)
    train("tsdae", tiny_bert_dir, corpus, tmp_path / "parts", capsys, "--steps", 2, *common)
    summary = train("tsdae", tiny_bert_dir, corpus, tmp_path / "parts", capsys, "--steps", 4, "--resume", *common)
    assert summary["steps"] == 4
    np.testing.assert_array_equal(sentforge.load(tmp_path / "parts").encode(CORPUS),
                                  sentforge.load(tmp_path / "straight").encode(CORPUS))


def test_lines_corpus_and_overwrite(tiny_bert_dir, tmp_path, capsys):
    toks = tmp_path / "a.toks"  # any other suffix: one sentence per line
    toks.write_text("".join(f"{line}\n" for line in CORPUS), encoding="utf-8")
    summary = train("simcse", tiny_bert_dir, toks, tmp_path / "out", capsys, "--steps", 1)
    assert summary["examples"] == len(set(CORPUS))  # de-duplicated
    code, _, err = run_cli(["train", "simcse", "--model", tiny_bert_dir, "--corpus", toks, "--output", tmp_path / "out",
                            "--steps", 1, "--batch-size", 4], capsys)
    assert_one_line_error(code, err, "not empty", "pass --overwrite to replace it")
    assert "overwrite=True" not in err
    train("simcse", tiny_bert_dir, toks, tmp_path / "out", capsys, "--steps", 1, "--overwrite")


def test_bad_input_gives_one_line_errors(tiny_bert_dir, corpus, tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("sentence1\tsentence2\tscore\na\tb\t3\nc\td\tlots\n", encoding="utf-8")
    code, _, err = run_cli(["train", "sts", "--model", tiny_bert_dir, "--corpus", bad, "--output", tmp_path / "o"],
                           capsys)
    assert_one_line_error(code, err, "bad.tsv:3", "not a number")
    missing = tmp_path / "missing.csv"
    missing.write_text("left,right\na,b\n", encoding="utf-8")
    code, _, err = run_cli(["train", "mnrl", "--model", tiny_bert_dir, "--corpus", missing, "--output", tmp_path / "o"],
                           capsys)
    assert_one_line_error(code, err, "missing.csv:2", "sentence1")
    code, _, err = run_cli(["train", "tsdae", "--model", tiny_bert_dir, "--corpus", corpus, "--output", tmp_path / "o",
                            "--noise", "shuffle"], capsys)
    assert_one_line_error(code, err, "unknown noise type")
    code, _, err = run_cli(["train", "tsdae", "--model", tiny_bert_dir, "--corpus", tmp_path / "nope.txt",
                            "--output", tmp_path / "o"], capsys)
    assert_one_line_error(code, err, "not found", "nope.txt")


def test_the_summary_line_quotes_the_last_steps_loss_and_names_the_saved_encoder(tiny_bert_dir, tmp_path, capsys):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("sentence1\tsentence2\n" + "".join(f"{a}\t{b}\n" for a, b, _ in PAIRS), encoding="utf-8")
    code, out, err = run_cli(["train", "mnrl", "--model", tiny_bert_dir, "--corpus", pairs, "--output",
                              tmp_path / "m", "--batch-size", 2, "--steps", 4, "--log-every", 2, "--lr", 1e-3], capsys)
    assert code == 0, err
    records = [json.loads(line) for line in (tmp_path / "m/training/metrics.jsonl").read_text().splitlines()]
    logged = next(r["loss"] for r in records if r.get("step") == 4 and "loss" in r)  # the mean of steps 3 and 4
    last = json.loads((tmp_path / "m/train.json").read_text())["final_loss"]
    assert out.strip() == (f"wrote {tmp_path / 'm'}: mnrl, 4 steps, last step's loss {last:.4f} (the log's are means "
                           "over --log-every steps)")
    assert f"{logged:.4f}" != f"{last:.4f}"  # the two differ, and the line says which one it quotes


@pytest.mark.parametrize("best_step, saved", [
    (0, "the start encoder, unchanged (it scored best on --dev: map 71.2500); ran mnrl, 10 steps"),
    (6, "the encoder of step 6 (it scored best on --dev: map 71.2500); ran mnrl, 10 steps"),
    (10, "mnrl, 10 steps")])
def test_the_summary_line_says_when_the_saved_encoder_is_not_the_last_steps(capsys, best_step, saved):
    from sentforge.cli.train import echo_summary

    echo_summary("out", {"method": "mnrl", "steps": 10, "final_loss": 2.33091,
                         "best": {"step": best_step, "metric": "map", "value": 71.25}})
    assert capsys.readouterr().out == (f"wrote out: {saved}, last step's loss 2.3309 (the log's are means over "
                                       "--log-every steps)\n")
