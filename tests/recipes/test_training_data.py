"""Training data is never silently misread: a 0/1 label column trains MNRL on the label-1 rows, with the
label-0 texts as hard negatives (the counts are logged), a score column given to a method that needs
positive pairs is an error naming `sts`, and strings that are paths of existing files are read as files,
never trained on as texts."""

from __future__ import annotations

import json
import logging

import pytest

import sentforge
from sentforge.support.errors import ConfigError, InputFileError
from sentforge.recipes.data import read_examples

from conftest import CORPUS, assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROWS = [("how do i reset my password", "where can i change my password", 1),
        ("a dog runs in the park", "the weather is nice today", 0),
        ("the app crashes on start", "the application fails when it starts", 1),
        ("a man is playing a guitar", "two women are walking on the beach", 0),
        ("please cancel my subscription", "i want to end my subscription", 1)]
# No positive's sentence1 has a label-0 row: each borrows from the pool (weather, beach), spread evenly over
# the three: starts 0 * 2 // 3, 1 * 2 // 3, 2 * 2 // 3 = 0, 0, 1.
TRIPLES = [(*ROWS[0][:2], ROWS[1][1]), (*ROWS[2][:2], ROWS[1][1]), (*ROWS[4][:2], ROWS[3][1])]


def write_tsv(path, header, rows):
    path.write_text("\t".join(header) + "\n" + "".join("\t".join(map(str, row)) + "\n" for row in rows),
                    encoding="utf-8")
    return path


def test_label_column_keeps_the_positive_rows_with_label_0_negatives_and_logs_the_count(tmp_path, caplog):
    path = write_tsv(tmp_path / "pairs.tsv", ["sentence1", "sentence2", "label"], ROWS)
    with caplog.at_level(logging.INFO, logger="sentforge"):
        pairs = read_examples("pairs", path)
    assert pairs == TRIPLES
    assert "3 positive pairs (label 1), each with a hard negative from the rows labelled 0: 0 of its own " \
           "sentence1, 3 (a sentence1 without such a row) of another" in caplog.text


def test_mnrl_from_the_cli_trains_on_the_label_1_rows(tiny_bert_dir, tmp_path, capsys):
    path = write_tsv(tmp_path / "pairs.tsv", ["sentence1", "sentence2", "label"], ROWS)
    code, _, err = run_cli(["train", "mnrl", "--model", tiny_bert_dir, "--corpus", path, "--output",
                            tmp_path / "out", "--batch-size", 2, "--steps", 1], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "train.json").read_text(encoding="utf-8"))["examples"] == 3


def test_labels_other_than_0_and_1_are_refused_with_the_line(tmp_path):
    path = write_tsv(tmp_path / "pairs.tsv", ["sentence1", "sentence2", "label"],
                     [ROWS[0], ("a b c", "d e f", "entailment")])
    with pytest.raises(sentforge.support.errors.InputFileError, match=r"pairs.tsv:3: label 'entailment' is not 0 or 1"):
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


# ---------------------------------------------------------------- the shapes sentence-transformers trains on
SCORED = [("a man is playing a guitar", "a person plays an instrument", 4.2),
          ("the cat sat on the mat", "a dog runs in the park", 0.4),
          ("the train leaves at noon", "the train departs at twelve", 4.8)]
TRIPLETS = [("how do i reset my password", "where can i change my password", "the weather is nice today"),
            ("the app crashes on start", "the application fails when it starts", "a child eats an apple")]


def dataset(columns, rows):
    datasets = pytest.importorskip("datasets")
    return datasets.Dataset.from_dict({name: [row[i] for row in rows] for i, name in enumerate(columns)})


def input_examples(rows, with_label=True):
    st = pytest.importorskip("sentence_transformers")
    return [st.InputExample(texts=list(row[:-1]), label=row[-1]) if with_label else st.InputExample(texts=list(row))
            for row in rows]


def test_a_labelled_pair_dataset_dicts_and_input_examples_give_the_file_s_pairs(tmp_path):
    expected = read_examples("pairs", write_tsv(tmp_path / "pairs.tsv", ["sentence1", "sentence2", "label"], ROWS))
    assert len(expected) == 3
    as_dicts = [{"question": a, "answer": b, "label": label} for a, b, label in ROWS]
    assert read_examples("pairs", dataset(["question", "answer", "label"], ROWS)) == expected  # by position
    assert read_examples("pairs", dataset(["label", "anchor", "positive"], [(c, a, b) for a, b, c in ROWS])) == expected
    assert read_examples("pairs", as_dicts) == expected
    assert read_examples("pairs", input_examples(ROWS)) == expected


def test_triplets_in_every_shape_give_the_file_s_triplets(tmp_path):
    expected = read_examples("pairs", write_tsv(tmp_path / "t.tsv", ["sentence1", "sentence2", "negative"], TRIPLETS))
    assert read_examples("pairs", dataset(["anchor", "positive", "negative"], TRIPLETS)) == expected
    assert read_examples("pairs", dataset(["q", "pos", "neg"], TRIPLETS)) == expected
    # Dicts whose keys name their roles are read by name, in any key order.
    assert read_examples("pairs", [{"negative": c, "positive": b, "anchor": a} for a, b, c in TRIPLETS]) == expected
    assert read_examples("pairs", input_examples(TRIPLETS, with_label=False)) == expected


def test_scored_pairs_in_every_shape_give_the_file_s_scored_pairs(tmp_path):
    expected = read_examples("scored pairs", write_tsv(tmp_path / "s.tsv", ["sentence1", "sentence2", "score"], SCORED))
    assert expected == SCORED
    assert read_examples("scored pairs", dataset(["sentence1", "sentence2", "score"], SCORED)) == expected
    assert read_examples("scored pairs", dataset(["text_a", "text_b", "label"], SCORED)) == expected
    assert read_examples("scored pairs", [dict(zip(("s1", "s2", "score"), row)) for row in SCORED]) == expected
    assert read_examples("scored pairs", input_examples(SCORED)) == expected


def test_sentences_from_a_one_column_dataset_and_input_examples_are_the_list_of_texts():
    texts = CORPUS[:12]
    assert read_examples("sentences", dataset(["text"], [(t,) for t in texts])) == texts
    assert read_examples("sentences", input_examples([(t,) for t in texts], with_label=False)) == texts


def test_labelled_pairs_from_a_dataset_equal_the_pair_table(tmp_path):
    rows = [("a man plays", "someone plays music", "entailment"), ("a cat sleeps", "the cat runs", "")]
    path = tmp_path / "nli.jsonl"
    path.write_text("".join(json.dumps({"premise": a, "hypothesis": b, "label": c}) + "\n" for a, b, c in rows),
                    encoding="utf-8")
    expected = read_examples("labelled pairs", path, columns={"premise": "sentence1", "hypothesis": "sentence2"})
    assert expected == [("a man plays", "someone plays music", "entailment"), ("a cat sleeps", "the cat runs", None)]
    assert read_examples("labelled pairs", dataset(["premise", "hypothesis", "label"], rows)) == expected


def test_input_examples_with_the_default_label_are_all_positive_pairs():
    st = pytest.importorskip("sentence_transformers")
    examples = [st.InputExample(texts=[a, b]) for a, b, _ in ROWS]  # label 0, the default
    assert read_examples("pairs", examples) == [(a, b) for a, b, _ in ROWS]


def test_column_mapping_renames_a_file_s_columns(tmp_path):
    path = write_tsv(tmp_path / "qa.tsv", ["question", "answer", "label"], ROWS)
    pairs = read_examples("pairs", path, columns={"question": "sentence1", "answer": "sentence2"})
    assert pairs == TRIPLES


def test_a_dataset_trains_like_its_file(tiny_bert_dir, tmp_path):
    path = write_tsv(tmp_path / "pairs.tsv", ["sentence1", "sentence2", "label"], ROWS)
    from_file = sentforge.train("mnrl", str(tiny_bert_dir), path, tmp_path / "file", steps=2, batch_size=2)
    from_dataset = sentforge.train("mnrl", str(tiny_bert_dir), dataset(["anchor", "positive", "label"], ROWS),
                                   tmp_path / "dataset", steps=2, batch_size=2)
    summary = json.loads((tmp_path / "dataset" / "train.json").read_text(encoding="utf-8"))
    assert summary["examples"] == 3
    assert (from_file.encode(CORPUS[:6]) == from_dataset.encode(CORPUS[:6])).all()


def test_cli_columns_option_maps_the_file_s_columns(tiny_bert_dir, tmp_path, capsys):
    path = write_tsv(tmp_path / "qa.tsv", ["question", "answer", "label"], ROWS)
    code, _, err = run_cli(["train", "mnrl", "--model", tiny_bert_dir, "--corpus", path, "--columns",
                            "question=sentence1,answer=sentence2", "--output", tmp_path / "out", "--batch-size", 2,
                            "--steps", 1], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "train.json").read_text(encoding="utf-8"))["examples"] == 3


@pytest.mark.parametrize("columns,fragments", [
    ("question=sentence1,answer=positive", ["--columns: 'positive' is not a role", "sentence1, sentence2"]),
    ("question", ["--columns: 'question' is not COLUMN=ROLE"]),
    ("question=sentence1,answer=sentence1", ["--columns: two columns are mapped to 'sentence1'"]),
])
def test_cli_column_errors_name_the_option(tiny_bert_dir, tmp_path, capsys, columns, fragments):
    path = write_tsv(tmp_path / "qa.tsv", ["question", "answer"], [row[:2] for row in ROWS])
    code, _, err = run_cli(["train", "mnrl", "--model", tiny_bert_dir, "--corpus", path, "--columns", columns,
                            "--output", tmp_path / "out", "--steps", 1], capsys)
    assert_one_line_error(code, err, *fragments)


def test_cli_missing_column_error_points_to_the_columns_option(tiny_bert_dir, tmp_path, capsys):
    path = write_tsv(tmp_path / "qa.tsv", ["question", "answer"], [row[:2] for row in ROWS])
    code, _, err = run_cli(["train", "mnrl", "--model", tiny_bert_dir, "--corpus", path, "--output",
                            tmp_path / "out", "--steps", 1], capsys)
    assert_one_line_error(code, err, "qa.tsv:2: no field 'sentence1', 'sentence2'", "--columns")


def test_python_errors_name_the_python_arguments(tmp_path):
    with pytest.raises(ConfigError, match=r"^columns: 'anchor' is not a role"):
        read_examples("pairs", write_tsv(tmp_path / "p.tsv", ["a", "b"], [("x", "y")]), columns={"a": "anchor"})
    with pytest.raises(ConfigError, match=r"^data\[1\]: score 'high' is not a number"):
        read_examples("scored pairs",
                      [{"a": "x y", "b": "y z", "score": 1.0}, {"a": "x y", "b": "y z", "score": "high"}])
    with pytest.raises(ConfigError, match=r"^data\[0\]: a 'score' column, but this method trains on positive pairs"):
        read_examples("pairs", dataset(["sentence1", "sentence2", "score"], SCORED))
    with pytest.raises(ConfigError, match=r"^data\[0\]: pairs take 2 or 3 text columns .* found 4"):
        read_examples("pairs", [{"a": "1", "b": "2", "c": "3", "d": "4"}])
    with pytest.raises(ConfigError, match=r"^data: a DatasetDict \(splits train\); give one split"):
        splits = pytest.importorskip("datasets").DatasetDict({"train": dataset(["a", "b"], [("x", "y")])})
        read_examples("pairs", splits)
    with pytest.raises(ConfigError, match=r"^data\[0\]: label 4\.2 is not 0 or 1"):
        read_examples("pairs", input_examples(SCORED[:1] + [("a b", "c d", 1)]))


def test_reading_a_dataset_does_not_need_sentence_transformers_imported():
    code = ("import sys, datasets; from sentforge.recipes.data import read_examples; "
            "d = datasets.Dataset.from_dict({'a': ['x y', 'u v'], 'b': ['y z', 'v w']}); "
            "assert read_examples('pairs', d) == [('x y', 'y z'), ('u v', 'v w')]; "
            "assert 'sentence_transformers' not in sys.modules")
    pytest.importorskip("datasets")
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_file_name_is_refused_not_trained_on_as_a_text(tmp_path):
    from sentforge.recipes.data import data_paths

    with pytest.raises(ConfigError, match=r"'corpus-missing.txt' \(item 0\) looks like a file name, but no such file"):
        data_paths(["corpus-missing.txt"])
    with pytest.raises(ConfigError, match="'data/pairs.tsv' \\(item 1\\)"):
        data_paths(["a sentence about notes.txt", "data/pairs.tsv"])
    assert data_paths(["a sentence about notes.txt", "another one"]) == []


def test_sentence_transformers_column_names_in_a_file_are_the_pair_fields(tmp_path):
    named = write_tsv(tmp_path / "named.tsv", ["anchor", "positive", "label"], ROWS)
    plain = write_tsv(tmp_path / "plain.tsv", ["sentence1", "sentence2", "label"], ROWS)
    assert read_examples("pairs", named) == read_examples("pairs", plain)
    swapped = read_examples("pairs", named, columns={"positive": "sentence1", "anchor": "sentence2"})
    # swapped, the label-0 rows' sentence2 is their first text: the negatives borrowed are those
    assert swapped == [(b, a, n) for (a, b, _), n in zip(TRIPLES, (ROWS[1][0], ROWS[1][0], ROWS[3][0]))]


def test_a_mapped_column_the_file_lacks_is_named(tmp_path):
    path = write_tsv(tmp_path / "qa.tsv", ["question", "answer", "label"], ROWS)
    with pytest.raises(InputFileError, match=r"qa.tsv:2: no column 'query', which columns names \(found: question"):
        read_examples("pairs", path, columns={"query": "sentence1", "answer": "sentence2"})
