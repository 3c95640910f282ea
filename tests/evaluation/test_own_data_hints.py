"""Own-data files that cannot be evaluated say why: pairs without gold, or a built-in benchmark's file."""

from __future__ import annotations

import pytest

from sentforge.support.errors import InputFileError
from sentforge.evaluation.own.load import load_dataset, load_own_datasets

from conftest import assert_one_line_error, run_cli


def test_pairs_without_score_or_label_say_what_is_missing(tmp_path, capsys):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"sentence1": "a cat", "sentence2": "a dog"}\n', encoding="utf-8")
    with pytest.raises(InputFileError, match="without a 'score' or 'label' column") as info:
        load_dataset(path)
    assert "both" not in str(info.value)
    code, _, err = run_cli(["eval", "-m", tmp_path / "no-such-model", "--dataset", path, "-o", tmp_path / "r.json"],
                           capsys)
    assert_one_line_error(code, err, "pairs.jsonl:1", "without a 'score' or 'label' column")


def test_a_benchmark_file_given_as_own_data_points_to_the_built_in_task(tmp_path):
    folder = tmp_path / "SICK"
    folder.mkdir()
    (folder / "SICK_test_annotated.txt").write_text("pair_ID\tsentence_A\tsentence_B\n", encoding="utf-8")
    with pytest.raises(InputFileError, match="built-in task SICKRelatedness: evaluate it with --tasks SICKRelatedness"):
        load_own_datasets([str(folder / "SICK_test_annotated.txt")])


def test_a_common_file_name_alone_gives_no_hint(tmp_path):
    (tmp_path / "dev.tsv").write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        load_dataset(tmp_path / "dev.tsv")
    assert "built-in task" not in str(info.value)
