"""Class-labelled texts: the same rows from JSONL, CSV, TSV, a datasets.Dataset, dicts and tuples give the same
examples; each bad input (a class with one example, pair columns, no text column, mixed label types) is one
error naming the file and line; evaluation classes absent from training are a warning naming them; per-class
draws are seeded and nested."""

from __future__ import annotations

import json
import logging

import pytest

from sentforge.data.classes import per_class_draw, read_classes, unseen_classes
from sentforge.recipes.data import read_examples
from sentforge.support.errors import ConfigError, InputFileError

from conftest import assert_one_line_error, run_cli

ROWS = [("book a flight to paris", "travel"), ("my card was declined", "payment"),
        ("i need a plane ticket", "travel"), ("refund my purchase", "payment"),
        ("will it rain today", "weather"), ("is it sunny outside", "weather")]


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def write_table(path, header, rows, delimiter):
    path.write_text(delimiter.join(header) + "\n" + "".join(delimiter.join(map(str, row)) + "\n" for row in rows),
                    encoding="utf-8")
    return path


def test_files_and_memory_shapes_give_the_same_examples(tmp_path):
    from datasets import Dataset

    dicts = [{"text": text, "label": label} for text, label in ROWS]
    sources = [
        write_jsonl(tmp_path / "c.jsonl", dicts),
        write_table(tmp_path / "c.csv", ["text", "label"], ROWS, ","),
        write_table(tmp_path / "c.tsv", ["sentence", "label"], ROWS, "\t"),  # sentence-transformers' name
        Dataset.from_list(dicts), dicts, ROWS,
    ]
    for source in sources:
        assert read_examples("classes", source) == ROWS, source


def test_integer_classes_stay_integers_and_columns_are_renamed(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"utterance": text, "intent": i % 3, "id": i}
                                              for i, (text, _) in enumerate(ROWS)])
    examples = read_classes(path, columns={"utterance": "text", "intent": "label"})
    assert [label for _, label in examples] == [0, 1, 2, 0, 1, 2]
    # a JSON float with an integral value is that integer
    path = write_jsonl(tmp_path / "f.jsonl", [{"text": t, "label": float(i % 2)} for i, (t, _) in enumerate(ROWS)])
    assert {label for _, label in read_classes(path)} == {0, 1}


@pytest.mark.parametrize("records, fragments", [
    ([*({"text": t, "label": y} for t, y in ROWS), {"text": "alone", "label": "lonely"}],
     ["c.jsonl: 1 class(es) with one example: 'lonely' (", "c.jsonl:7"]),
    ([{"sentence1": "a b", "sentence2": "c d", "label": 1}, {"sentence1": "e", "sentence2": "f", "label": 0}],
     ["c.jsonl:1: columns sentence1, sentence2 make this row a sentence pair", "mnrl, sts or pause"]),
    ([{"question": t, "label": y} for t, y in ROWS], ["c.jsonl:1: no text column (found: question, label)",
                                                      "utterance=text,intent=label"]),
    ([{"text": t} for t, _ in ROWS], ["c.jsonl:1: no 'label' column"]),
    ([{"text": t, "label": y if i else 3} for i, (t, y) in enumerate(ROWS)], ["integers and some strings"]),
    ([{"text": t, "label": "" if i == 2 else y} for i, (t, y) in enumerate(ROWS)], ["c.jsonl:3: empty label"]),
    ([{"text": t, "label": "same"} for t, _ in ROWS], ["every row has class 'same'"]),
])
def test_bad_class_files_are_one_error_naming_file_and_line(tmp_path, records, fragments):
    path = write_jsonl(tmp_path / "c.jsonl", records)
    with pytest.raises(InputFileError) as error:
        read_classes(path)
    for fragment in fragments:
        assert fragment in str(error.value)


def test_bad_rows_in_memory_name_the_item():
    with pytest.raises(ConfigError, match=r"data\[6\]"):
        read_examples("classes", [*ROWS, ("only one", "single"), ("x", "y")])
    with pytest.raises(ConfigError, match=r"data\[0\]: no text column"):
        read_examples("classes", [{"question": t, "label": y} for t, y in ROWS])


def test_unseen_evaluation_classes_are_a_warning_naming_them(caplog):
    evaluated = [("what time is it", "clock"), ("set an alarm", "clock"), ("fly to rome", "travel")]
    with caplog.at_level(logging.WARNING, logger="sentforge"):
        assert unseen_classes(ROWS, evaluated, "dev.jsonl") == ["clock"]
    assert "dev.jsonl: 1 class(es) absent from the training data, so never predicted (2 of 3 items): 'clock'" \
        in caplog.text


def test_per_class_draws_are_seeded_and_nested():
    pool = [(f"text {i}", f"class {i % 4}") for i in range(40)]
    two, four = per_class_draw(pool, 2, seed=5), per_class_draw(pool, 4, seed=5)
    assert set(two) < set(four) and len(two) == 8 and len(four) == 16
    assert per_class_draw(pool, 4, seed=5) == four and per_class_draw(pool, 4, seed=6) != four
    assert all(sum(label == c for _, label in four) == 4 for c in {label for _, label in pool})


def test_cli_refuses_a_pair_file_given_to_setfit(tmp_path, capsys, tiny_bert_dir):
    path = write_jsonl(tmp_path / "pairs.jsonl", [{"sentence1": "a b", "sentence2": "c d", "label": 1}])
    code, _, err = run_cli(["train", "setfit", "--model", tiny_bert_dir, "--corpus", path, "--output",
                            tmp_path / "out"], capsys)
    assert_one_line_error(code, err, "pairs.jsonl:1: columns sentence1, sentence2 make this row a sentence pair")
