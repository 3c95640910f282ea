"""Where each record of a text file begins (byte offset and line, checked by hand on small files), reading
on from such a position, the chunks read from those positions equal the chunks read in one pass, and a
chunk whose texts changed since it was listed is an error."""

from __future__ import annotations

import pytest

from sentforge.data.texts import Position, iter_records, read_texts
from sentforge.scale.engines.chunks import ChunkSource, texts_sha256
from sentforge.support.errors import InputFileError

# A BOM, a quoted field over two lines, a blank line between records and an escaped quote.
CSV = '\ufeffid,text\n1,"two\nlines"\n\n2,plain\n3,"say ""hi"""\n'
# 3 bytes of BOM + "id,text\n" (8) = 11; '1,"two\n' (7) + 'lines"\n' (7) + "\n" (1) = 26; "2,plain\n" (8) = 34.
CSV_RECORDS = [(Position(11, 2), "two\nlines"), (Position(26, 5), "plain"), (Position(34, 6), 'say "hi"')]

# Blank lines before, between and after the objects, and no final newline.
JSONL = '\n{"text": "a"}\n\n\n{"text": "b", "n": 1}\n{"text": "c"}\n\n'
# "\n" (1); '{"text": "a"}\n' (14) -> 15; "\n\n" -> 17; '{"text": "b", "n": 1}\n' (22) -> 39.
JSONL_RECORDS = [(Position(1, 2), "a"), (Position(17, 5), "b"), (Position(39, 6), "c")]

# Windows line endings and a blank line, which is a record of a .txt file.
TXT = "first\r\n\r\nthird\r\nfourth"
TXT_RECORDS = [(Position(0, 1), "first"), (Position(7, 2), ""), (Position(9, 3), "third"), (Position(16, 4), "fourth")]

FILES = {"in.csv": (CSV, CSV_RECORDS), "in.jsonl": (JSONL, JSONL_RECORDS), "in.txt": (TXT, TXT_RECORDS)}


@pytest.fixture(params=sorted(FILES))
def text_file(request, tmp_path):
    content, records = FILES[request.param]
    path = tmp_path / request.param
    path.write_bytes(content.encode("utf-8"))
    return path, records


def test_records_say_where_they_begin(text_file):
    path, records = text_file
    assert list(iter_records(path)) == records
    assert [text for _, text in records] == read_texts(path)


def test_reading_from_a_record_gives_the_rest_of_the_file(text_file):
    path, records = text_file
    for i, (start, _) in enumerate(records):
        assert list(iter_records(path, start=start)) == records[i:]


def test_tsv_header_is_read_before_jumping_to_a_record(tmp_path):
    path = tmp_path / "in.tsv"
    path.write_text("text\tid\na\t1\nb\t2\n", encoding="utf-8")
    assert list(iter_records(path, start=Position(12, 3))) == [(Position(12, 3), "b")]


def test_errors_after_a_jump_name_the_right_line(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "a"}\n{"text": "b"}\nnot json\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"in\.jsonl:3: invalid JSON"):
        list(iter_records(path, start=Position(14, 2)))
    path = tmp_path / "in.csv"
    path.write_text('text\na\nb\n"open\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"in\.csv:4: malformed row"):
        list(iter_records(path, start=Position(7, 3)))


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5])
def test_chunks_read_from_their_starts_equal_chunks_read_in_one_pass(text_file, chunk_size):
    path, records = text_file
    source = ChunkSource(path, chunk_size)
    chunks = list(source.iter_chunks())
    starts = list(source.iter_starts())
    assert [start.index for start in starts] == [index for index, _ in chunks] == list(range(len(chunks)))
    assert [start.position for start in starts] == [position for position, _ in records[::chunk_size]]
    assert [start.sha256 for start in starts] == [texts_sha256(texts) for _, texts in chunks]
    assert [source.read_chunk(start) for start in starts] == [texts for _, texts in chunks]


def test_chunks_before_skip_chunks_are_left_out(text_file):
    path, _ = text_file
    every = list(ChunkSource(path, 1).iter_chunks())
    later = ChunkSource(path, 1, skip_chunks=2)
    assert list(later.iter_chunks()) == every[2:]
    assert [start.index for start in later.iter_starts()] == [index for index, _ in every[2:]]


def test_a_chunk_that_changed_since_it_was_listed_is_an_error(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("a\nb\nc\nd\n", encoding="utf-8")
    source = ChunkSource(path, 2)
    starts = list(source.iter_starts())
    assert [source.read_chunk(start) for start in starts] == [["a", "b"], ["c", "d"]]
    path.write_text("a\nb\nC\nd\n", encoding="utf-8")
    assert source.read_chunk(starts[0]) == ["a", "b"]
    with pytest.raises(InputFileError, match=r"in\.txt:3: chunk 1 read from here differs from the one listed"):
        source.read_chunk(starts[1])


def test_texts_sha256_tells_apart_texts_that_join_alike():
    assert texts_sha256(["ab", "c"]) != texts_sha256(["a", "bc"]) != texts_sha256(["a", "b", "c"])
    assert texts_sha256(["a", "b"]) == texts_sha256(iter(["a", "b"]))
