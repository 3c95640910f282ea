"""NLI pair data for PAUSE's positive-only setting: the GLUE QQP reader (with and without the header,
test files, malformed rows) and `positive_only` turning labelled pairs into positive-unlabelled ones."""

from __future__ import annotations

import logging
from collections import Counter

import pytest

from sentforge.data.nli import (DUPLICATE, NOT_DUPLICATE, POSITIVE, label_fraction, positive_only, read_nli_pairs,
                                read_nli_table, read_qqp)
from sentforge.support.errors import ConfigError, InputFileError

from conftest import DATA, needs

QQP_ROWS = ["5\t11\t12\tHow do I learn Python?\tWhat is the best way to learn Python?\t1",
            "6\t13\t14\tWhy is the sky blue?\tHow tall is Everest?\t0",
            '7\t15\t16\tIs "quoted" text kept?\tDoes it keep "quotes"?\t1']
QQP_PAIRS = [("How do I learn Python?", "What is the best way to learn Python?", DUPLICATE),
             ("Why is the sky blue?", "How tall is Everest?", NOT_DUPLICATE),
             ('Is "quoted" text kept?', 'Does it keep "quotes"?', DUPLICATE)]


def test_qqp_with_and_without_header(tmp_path):
    headed = tmp_path / "train.tsv"
    headed.write_text("id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n" + "\n".join(QQP_ROWS) + "\n")
    bare = tmp_path / "subset.tsv"
    bare.write_text("\n".join(QQP_ROWS) + "\n")
    assert read_qqp(headed) == QQP_PAIRS
    assert read_qqp(bare) == QQP_PAIRS
    assert read_nli_pairs(headed) == QQP_PAIRS  # told apart from other .tsv files by the columns
    assert read_nli_pairs(bare) == QQP_PAIRS


def test_qqp_test_file_is_unlabelled(tmp_path):
    test = tmp_path / "test.tsv"
    test.write_text("id\tquestion1\tquestion2\n0\tWhat is AI?\tWhat is machine learning?\n")
    assert read_nli_pairs(test) == [("What is AI?", "What is machine learning?", None)]


def test_qqp_malformed_rows_raise_or_are_skipped(tmp_path, caplog):
    # GLUE's known malformed row: question2 and the label run together, one field short.
    path = tmp_path / "subset.tsv"
    path.write_text("1\t2\t3\tHow is the life of a math student?\tWhich level is enough? 0\n" + "\n".join(QQP_ROWS))
    with pytest.raises(InputFileError, match=r"subset\.tsv:1: 5 fields, expected 6"):
        read_nli_pairs(path)
    with caplog.at_level(logging.WARNING, logger="sentforge.data.nli"):
        assert read_qqp(path, skip_malformed=True) == QQP_PAIRS
    assert "subset.tsv:1" in caplog.text
    bad_label = tmp_path / "bad_label.tsv"
    bad_label.write_text(QQP_ROWS[0] + "\n" + QQP_ROWS[1][:-1] + "yes\n")
    with pytest.raises(InputFileError, match=r"bad_label\.tsv:2: is_duplicate must be 0 or 1"):
        read_qqp(bad_label)
    empty_question = tmp_path / "empty.tsv"
    empty_question.write_text(QQP_ROWS[0] + "\n8\t17\t18\t \tWhat?\t0\n")
    with pytest.raises(InputFileError, match=r"empty\.tsv:2: both sentences must be non-empty"):
        read_qqp(empty_question)
    assert read_qqp(empty_question, skip_malformed=True) == QQP_PAIRS[:1]


def test_other_tsv_files_are_not_taken_for_qqp(tmp_path):
    table = tmp_path / "pairs.tsv"
    table.write_text("sentence1\tsentence2\tlabel\n12 apples\t3 pears\tneutral\n")
    assert read_nli_pairs(table) == [("12 apples", "3 pears", "neutral")]


def test_positive_only_keeps_positives_and_hides_everything_else():
    pairs = [(f"q{i}", f"r{i}", label) for i, label in enumerate([DUPLICATE] * 40 + [NOT_DUPLICATE] * 60 + [None] * 5)]
    pu = positive_only(pairs, DUPLICATE)
    assert [p[:2] for p in pu] == [p[:2] for p in pairs]
    assert Counter(label for _, _, label in pu) == {POSITIVE: 40, None: 65}
    assert all((label == POSITIVE) == (original[2] == DUPLICATE) for (_, _, label), original in zip(pu, pairs))
    # then a seeded share of the positives stays labelled, no negative label anywhere
    tenth = label_fraction(pu, 0.1, seed=3)
    labelled = [i for i, (_, _, label) in enumerate(tenth) if label is not None]
    assert len(labelled) == 4 and all(pairs[i][2] == DUPLICATE for i in labelled)
    assert tenth == label_fraction(pu, 0.1, seed=3) and tenth != label_fraction(pu, 0.1, seed=4)
    with pytest.raises(ConfigError, match="no pair is labelled 'positive'"):
        positive_only(pairs, "positive")


@pytest.mark.slow
@needs(DATA / "glue/qqp-partial/qqp_train_subset.tsv")
def test_real_qqp_subset():
    path = DATA / "glue/qqp-partial/qqp_train_subset.tsv"
    with pytest.raises(InputFileError, match="qqp_train_subset.tsv:1: 5 fields"):  # the known malformed first row
        read_nli_pairs(path)
    pairs = read_qqp(path, skip_malformed=True)
    assert len(pairs) == 23496
    assert Counter(label for _, _, label in pairs) == {DUPLICATE: 8747, NOT_DUPLICATE: 14749}


@pytest.mark.parametrize("read", ["pairs", "nli"])
def test_a_class_labelled_file_given_as_pairs_is_named_as_such(tmp_path, read):
    from sentforge.data.pairs import read_pairs

    path = tmp_path / "intents.jsonl"
    path.write_text('{"text": "app crashes on start", "label": "bug"}\n'
                    '{"text": "please refund me", "label": "billing"}\n', encoding="utf-8")
    reader = read_pairs if read == "pairs" else read_nli_table
    with pytest.raises(InputFileError, match=r"intents.jsonl:1: no field 'sentence1', 'sentence2' .*"
                                             r"looks like a class-labelled file .*sentforge train setfit"):
        reader(path)


def test_a_pair_file_without_text_columns_gets_no_class_hint(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"first": "a", "second": "b", "label": 1}\n', encoding="utf-8")
    with pytest.raises(InputFileError) as raised:
        read_nli_table(path)
    assert "class-labelled" not in str(raised.value)
