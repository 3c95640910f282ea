"""Text file reading: a CSV quote left open is an error naming the line where it opened (it used to
merge the rest of the file into one text), quoted fields may span lines, and reading is lazy."""

from __future__ import annotations

import pytest

from sentforge.data.texts import iter_texts, read_texts
from sentforge.support.errors import InputFileError

from conftest import assert_one_line_error, run_cli


def test_unterminated_quote_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text('id,text\n1,first\n2,"second\n3,third\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"in\.csv:3: malformed row .*unterminated"):
        read_texts(path)


def test_unterminated_quote_in_tsv_too(tmp_path):
    path = tmp_path / "in.tsv"
    path.write_text('text\n"open\nnext\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"in\.tsv:2:"):
        read_texts(path)


def test_quoted_field_may_span_lines_and_rows_keep_their_line(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text('id,text\n1,"two\nlines"\n2,plain\n3\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"in\.csv:5: 1 fields, column 'text' is field 2"):
        read_texts(path)
    path.write_text('id,text\n1,"two\nlines"\n2,plain\n', encoding="utf-8")
    assert read_texts(path) == ["two\nlines", "plain"]


def test_cli_encode_refuses_unterminated_quote_and_writes_nothing(tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "in.csv").write_text('text\na\n"b\nc\n', encoding="utf-8")
    code, _, err = run_cli(["encode", tmp_path / "in.csv", "-m", tiny_bert_dir, "-o", tmp_path / "v.npy"], capsys)
    assert_one_line_error(code, err, "in.csv:3", "unterminated")
    assert not (tmp_path / "v.npy").exists()


def test_iter_texts_is_lazy(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "ok"}\nnot json\n', encoding="utf-8")
    texts = iter_texts(path)
    assert next(texts) == "ok"
    with pytest.raises(InputFileError, match=r"in\.jsonl:2: invalid JSON"):
        next(texts)
