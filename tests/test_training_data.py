"""Training data is never silently misread: a 0/1 label column trains MNRL on the label-1 rows only (the
count is logged), a score column given to a method that needs positive pairs is an error naming `sts`, and
strings that are paths of existing files are read as files, never trained on as texts."""

from __future__ import annotations

import json
import logging

import pytest

import sentforge
from sentforge.errors import ConfigError
from sentforge.recipes.data import read_examples

from conftest import CORPUS, assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROWS = [("how do i reset my password", "where can i change my password", 1),
        ("a dog runs in the park", "the weather is nice today", 0),
        ("the app crashes on start", "the application fails when it starts", 1),
        ("a man is playing a guitar", "two women are walking on the beach", 0),
        ("please cancel my subscription", "i want to end my subscription", 1)]


def write_tsv(path, header, rows):
    path.write_text("\t".join(header) + "\n" + "".join("\t".join(map(str, row)) + "\n" for row in rows),
                    encoding="utf-8")
    return path


def test_label_column_keeps_the_positive_rows_and_logs_the_count(tmp_path, caplog):
    path = write_tsv(tmp_path / "pairs.tsv", ["sentence1", "sentence2", "label"], ROWS)
    with caplog.at_level(logging.INFO, logger="sentforge"):
        pairs = read_examples("pairs", path)
    assert pairs == [(a, b) for a, b, label in ROWS if label == 1]
    assert "3 positive pairs (label 1); 2 rows labelled 0 or unlabelled left out" in caplog.text


def test_mnrl_from_the_cli_trains_on_the_label_1_rows(tiny_bert_dir, tmp_path, capsys):
    path = write_tsv(tmp_path / "pairs.tsv", ["sentence1", "sentence2", "label"], ROWS)
    code, _, err = run_cli(["train", "mnrl", "--model", tiny_bert_dir, "--corpus", path, "--output",
                            tmp_path / "out", "--batch-size", 2, "--steps", 1], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "train.json").read_text(encoding="utf-8"))["examples"] == 3


def test_labels_other_than_0_and_1_are_refused_with_the_line(tmp_path):
    path = write_tsv(tmp_path / "pairs.tsv", ["sentence1", "sentence2", "label"],
                     [ROWS[0], ("a b c", "d e f", "entailment")])
    with pytest.raises(sentforge.errors.InputFileError, match=r"pairs.tsv:3: label 'entailment' is not 0 or 1"):
        read_examples("pairs", path)


def test_a_scored_file_to_mnrl_exits_2_with_one_error_line(tiny_bert_dir, tmp_path, capsys):
    path = write_tsv(tmp_path / "scored.tsv", ["sentence1", "sentence2", "score"],
                     [(a, b, 4.5 * label) for a, b, label in ROWS])
    code, out, err = run_cli(["train", "mnrl", "--model", tiny_bert_dir, "--corpus", path, "--output",
                              tmp_path / "out", "--steps", 1], capsys)
    assert_one_line_error(code, err, "scored.tsv:2: a 'score' column", "`sts`")
    assert not (tmp_path / "out").exists()


def test_path_strings_are_read_as_files(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("".join(f"{line}\n" for line in CORPUS[:6]), encoding="utf-8")
    second.write_text("".join(f"{line}\n" for line in CORPUS[6:12]), encoding="utf-8")
    as_strings = read_examples("sentences", [str(first), str(second)])
    assert as_strings == read_examples("sentences", [first, second])
    assert len(as_strings) == 12 and str(first) not in as_strings


def test_a_list_mixing_paths_and_texts_is_refused(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("the cat sat on the mat\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\(item 1\) is the path of an existing file"):
        read_examples("sentences", ["a dog runs in the park", str(path)])


def test_train_tsdae_on_two_path_strings_reads_both_files(tiny_bert_dir, tmp_path):
    paths = []
    for i, chunk in enumerate((CORPUS[:12], CORPUS[12:24])):
        paths.append(tmp_path / f"corpus-{i}.txt")
        paths[-1].write_text("".join(f"{line} number {i}\n" for line in chunk), encoding="utf-8")
    sentforge.train("tsdae", str(tiny_bert_dir), [str(p) for p in paths], tmp_path / "out", steps=1, batch_size=4)
    summary = json.loads((tmp_path / "out" / "train.json").read_text(encoding="utf-8"))
    assert summary["examples"] == 24
