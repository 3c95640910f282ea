"""The CLI: the main job works, and bad input gives exit code 2 with a one-line message, no traceback."""

from __future__ import annotations

import numpy as np
import pytest

import sentforge

from conftest import assert_one_line_error, run_cli


def test_encode_txt_matches_library(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("the cat sat\n\na dog runs\n", encoding="utf-8")
    code, _, _ = run_cli(["encode", tmp_path / "in.txt", "-m", tiny_bert_dir, "-o", tmp_path / "v.npy"], capsys)
    assert code == 0
    vectors = np.load(tmp_path / "v.npy")
    expected = sentforge.load(tiny_bert_dir).encode(["the cat sat", "", "a dog runs"])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)


def test_encode_jsonl_and_csv_fields(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "in.jsonl").write_text('{"body": "the cat"}\n{"body": "a dog"}\n', encoding="utf-8")
    (tmp_path / "in.csv").write_text('id,body\n1,"the cat"\n2,a dog\n', encoding="utf-8")
    code, _, _ = run_cli(["encode", tmp_path / "in.jsonl", "-m", tiny_bert_dir, "-o", tmp_path / "a.npy",
                          "--field", "body"], capsys)
    assert code == 0
    code, _, _ = run_cli(["encode", tmp_path / "in.csv", "-m", tiny_bert_dir, "-o", tmp_path / "b.npy",
                          "--column", "body"], capsys)
    assert code == 0
    np.testing.assert_allclose(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))


def test_an_empty_file_is_an_error_and_writes_nothing(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "empty.txt").write_bytes(b"")
    code, _, err = run_cli(["encode", tmp_path / "empty.txt", "-m", tiny_bert_dir, "-o", tmp_path / "v.npy"], capsys)
    assert_one_line_error(code, err, "empty.txt", "holds no texts")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt"]


@pytest.mark.parametrize("name, content, blank", [("blank.txt", "\n  \n\t\n", "3 blank texts"),
                                                   ("blank.jsonl", '{"text": " "}\n', "1 blank text")])
@pytest.mark.parametrize("command", ["encode", "index", "search"])
def test_a_file_of_blank_texts_is_refused_like_an_empty_one(tiny_bert_dir, tmp_path, capsys, name, content, blank,
                                                            command):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    args = {"encode": ["encode", path, "-o", tmp_path / "v.npy"],
            "index": ["index", "build", path, "--kind", "flat", "-o", tmp_path / "idx"],
            "search": ["search", "a query", "--corpus", path]}[command]
    code, _, err = run_cli([*args, "-m", tiny_bert_dir], capsys)
    option = "--corpus " if command == "search" else ""
    assert_one_line_error(code, err, f"{option}{path}: holds no texts (only {blank})")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_missing_file(tiny_bert_dir, tmp_path, capsys):
    code, _, err = run_cli(["encode", tmp_path / "nope.txt", "-m", tiny_bert_dir, "-o", tmp_path / "v.npy"], capsys)
    assert_one_line_error(code, err, "not found", "nope.txt")


def test_invalid_utf8_names_the_line(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "bad.txt").write_bytes(b"fine line\nalso fine\nbroken \xff\xfe here\n")
    code, _, err = run_cli(["encode", tmp_path / "bad.txt", "-m", tiny_bert_dir, "-o", tmp_path / "v.npy"], capsys)
    assert_one_line_error(code, err, "bad.txt:3", "UTF-8")


def test_unknown_model_lists_accepted_specs(tmp_path, capsys):
    (tmp_path / "in.txt").write_text("hello\n", encoding="utf-8")
    code, _, err = run_cli(["encode", tmp_path / "in.txt", "-m", "no-such-model-xyz", "-o", tmp_path / "v.npy"], capsys)
    assert_one_line_error(code, err, "no-such-model-xyz", "Accepted", "all-MiniLM-L6-v2")


def test_existing_output_needs_overwrite(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("hello\n", encoding="utf-8")
    np.save(tmp_path / "v.npy", np.zeros(3))
    code, _, err = run_cli(["encode", tmp_path / "in.txt", "-m", tiny_bert_dir, "-o", tmp_path / "v.npy"], capsys)
    assert_one_line_error(code, err, "already exists", "pass --overwrite to replace it")
    assert "overwrite=True" not in err  # the command line names its option, not the Python argument
    assert np.load(tmp_path / "v.npy").shape == (3,)
    code, _, _ = run_cli(["encode", tmp_path / "in.txt", "-m", tiny_bert_dir, "-o", tmp_path / "v.npy",
                          "--overwrite"], capsys)
    assert code == 0 and np.load(tmp_path / "v.npy").shape == (1, 32)


@pytest.mark.parametrize("suffix,content,flag", [
    (".jsonl", '{"text": "a"}\n{"body": "b"}\n', ["--field", "text"]),
    (".csv", "id,body\n1,hello\n", ["--column", "text"]),
    (".tsv", "id\tbody\n1\thello\n", ["--column", "txt"]),
])
def test_missing_field_or_column(tiny_bert_dir, tmp_path, capsys, suffix, content, flag):
    (tmp_path / f"in{suffix}").write_text(content, encoding="utf-8")
    code, _, err = run_cli(["encode", tmp_path / f"in{suffix}", "-m", tiny_bert_dir, "-o", tmp_path / "v.npy",
                            *flag], capsys)
    assert_one_line_error(code, err, flag[1])


def test_malformed_jsonl_line(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "in.jsonl").write_text('{"text": "a"}\n{"text": \n', encoding="utf-8")
    code, _, err = run_cli(["encode", tmp_path / "in.jsonl", "-m", tiny_bert_dir, "-o", tmp_path / "v.npy"], capsys)
    assert_one_line_error(code, err, "in.jsonl:2", "invalid JSON")



def test_info_prints_what_model_info_returns(tiny_bert_dir, capsys):
    code, out, err = run_cli(["info", tiny_bert_dir], capsys)
    assert code == 0, err
    details = sentforge.model_info(str(tiny_bert_dir))
    assert out.splitlines() == [f"model: {tiny_bert_dir}", f"dimension: {details['dimension']}",
                                f"max_seq_length: {details['max_seq_length']}",
                                f"parameters: {details['parameters']:,}",
                                *(f"module {i}: {name} {config}"
                                  for i, (name, config) in enumerate(details["modules"]))]
    assert details["dimension"] == 32 and "Pooling" in [name for name, _ in details["modules"]]


def test_info_and_search(tiny_bert_dir, tmp_path, capsys):
    code, out, _ = run_cli(["info", tiny_bert_dir], capsys)
    assert code == 0 and "dimension: 32" in out and "Pooling" in out
    (tmp_path / "c.txt").write_text("the cat sat on the mat\na dog runs\nhow do i reset my password\n",
                                    encoding="utf-8")
    code, out, _ = run_cli(["search", "the cat sat on the mat", "--corpus", tmp_path / "c.txt", "-m", tiny_bert_dir,
                            "-k", "2"], capsys)
    assert code == 0
    first = [line for line in out.splitlines() if line.strip().startswith("1.")][0]
    assert "the cat sat on the mat" in first and "1.0000" in first
