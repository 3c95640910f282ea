"""Every command that writes follows one rule (sentforge.support.output_guard): it never replaces, or writes into or
around, one of its inputs; --overwrite replaces only what the command wrote; one run per output. Each row
runs the real CLI and checks exit code 2, one `error:` line and every file under the test folder unchanged.

The table is checked against the commands of the CLI app: a new command with an --output or --html path
that has no row here fails `test_every_writing_command_has_a_row`."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import typer

from conftest import assert_one_line_error, run_cli

from sentforge.recipes.registry import DATA_OPTIONS, recipes

TEXTS = "a cat sat on the mat\na dog ran in the park\nthe sun is warm today\nrain falls on the roof\n"
CLASSES = "text\tlabel\na cat sat on the mat\tpets\na dog ran in the park\tpets\nthe sun is warm today\tweather\n" \
          "rain falls on the roof\tweather\n"
PAIRS = "sentence1\tsentence2\tscore\na cat\ta kitten\t4.5\na dog\ta car\t0.5\nthe sun\tthe moon\t2.0\n"

# command -> (arguments before --output given the inputs, whether it takes --overwrite, the output option,
# the output's format: None for a directory, else the suffix of a file). A row named "COMMAND (what)" runs the
# command on other inputs or options, each its own case.
Row = tuple


def lock_path(output: Path) -> Path:
    """Where a run holds the lock of its output (documented in docs: beside it, never inside)."""
    return output.parent / f".{output.name}.lock"


def _table(ins: dict[str, Path]) -> dict[str, Row]:
    model, texts, pairs, classes = str(ins["model"]), str(ins["texts"]), str(ins["pairs"]), str(ins["classes"])
    table = {
        "encode": (["encode", texts, "-m", model], True, "--output", None),
        "index build": (["index", "build", texts, "-m", model, "--kind", "flat"], True, "--output", None),
        "export": (["export", model], True, "--output", None),
        "meta fit": (["meta", "fit", "--member", model, "--corpus", texts, "--method", "concat"], True,
                     "--output", None),
        "meta ablate": (["meta", "ablate", "--member", model, "--member", model, "--corpus", texts, "--method",
                         "concat"], True, "--output", ".json"),
        "eval": (["eval", "-m", model, "--dataset", pairs], True, "--output", ".json"),
        "predict": (["predict", model, texts], True, "--output", ".json"),
        "distil": (["distil", "--static", "-m", model, "--texts", texts], True, "--output", None),
        "train cross-encoder": (["train", "cross-encoder", "-m", model, "--labelled", pairs, "--steps", "1"], True,
                                "--output", None),
        "explain": (["explain", model, "a cat", "a kitten", "--method", "deletion"], True, "--html", ".html"),
        "pretrain": (["pretrain", "mlm", "--corpus", texts, "--config", "tiny", "--steps", "1"], True,
                     "--output", None),
        "train st5": (["train", "st5", "-m", model, "--stage", "qa", "--qa-data", pairs, "--stage-steps", "1"],
                      True, "--output", None),
        "labels": (["labels", "-m", model, "--labelled", pairs, "--dev", pairs, "--steps", "1", "--repeats", "1"],
                   False, "--output", None),
        "labels (classes)": (["labels", "-m", model, "--labelled", classes, "--dev", classes, "--shots", "2",
                              "--steps", "1", "--repeats", "1"], False, "--output", None),
        "adapt": (["adapt", "-m", model, "--unlabelled", texts, "--dev", pairs, "--budget-minutes", "0.1"], False,
                  "--output", None),
    }
    for recipe in recipes():
        data = f"--{DATA_OPTIONS[recipe.data][0]}"
        table[f"train {recipe.name}"] = (["train", recipe.name, "-m", model, data, texts, "--steps", "1"], True,
                                         "--output", None)
    return table


def _writing_commands() -> set[str]:
    """Every CLI command with an --output or --html path option, by its command path."""
    from sentforge.cli import app

    found = set()

    def walk(command, path: list[str]) -> None:
        if hasattr(command, "commands"):  # a group
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
            return
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        if options & {"--output", "--html"}:
            found.add(" ".join(path))

    walk(typer.main.get_command(app), [])
    return found


@pytest.fixture
def inputs(tmp_path, tiny_bert_dir) -> dict[str, Path]:
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "texts.txt").write_text(TEXTS, encoding="utf-8")
    (folder / "pairs.tsv").write_text(PAIRS, encoding="utf-8")
    (folder / "classes.tsv").write_text(CLASSES, encoding="utf-8")
    shutil.copytree(tiny_bert_dir, folder / "model")
    return {"texts": folder / "texts.txt", "pairs": folder / "pairs.tsv", "classes": folder / "classes.tsv",
            "model": folder / "model"}


def _hashes(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*")) if path.is_file()}


def test_every_writing_command_has_a_row(tmp_path):
    paths = {name: tmp_path for name in ("model", "texts", "pairs", "classes")}
    assert _writing_commands() == {name.split(" (")[0] for name in _table(paths)}


CASES = ("output is an input", "output is the folder of an input", "output holds a foreign file",
         "another run holds the output")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("command", sorted(_table({n: Path(n) for n in ("model", "texts", "pairs", "classes")})))
def test_a_writing_command_refuses_and_keeps_every_input(command, case, inputs, tmp_path, capsys):
    args, takes_overwrite, option, file_suffix = _table(inputs)[command]
    only_model = command in ("export", "explain")  # the model is their only input path
    victim = inputs["model"] if only_model else inputs["classes"] if "(classes)" in command else inputs["texts"]
    fragments = []
    if case == "output is an input":
        output = victim
    elif case == "output is the folder of an input":
        output = victim.parent
    elif case == "output holds a foreign file":
        if file_suffix:  # a file of the user's at the path, not in the format this command writes
            output = tmp_path / f"notes{file_suffix}"
            output.write_text("my own notes, not written by sentforge\n", encoding="utf-8")
            fragments = [str(output)]
        else:
            output = tmp_path / "out"
            output.mkdir()
            (output / "keep-me.txt").write_text("mine\n", encoding="utf-8")
            fragments = ["keep-me.txt"] if takes_overwrite else [str(output)]
    else:
        output = tmp_path / "fresh" / f"out{file_suffix or ''}"
        output.parent.mkdir()
        fragments = ["another sentforge", str(output), "process 4242"]
    before = _hashes(tmp_path)
    extra = ["--overwrite"] if takes_overwrite else []
    if case == "another run holds the output":
        import fcntl

        with open(lock_path(output), "w") as held:  # what a running command holds
            fcntl.flock(held, fcntl.LOCK_EX)
            held.write(json.dumps({"pid": 4242, "command": command}) + "\n")
            held.flush()
            before = _hashes(tmp_path)
            code, _, err = run_cli([*args, option, output, *extra], capsys)
    else:
        code, _, err = run_cli([*args, option, output, *extra], capsys)
    assert_one_line_error(code, err, *fragments)
    assert _hashes(tmp_path) == before
    if case == "another run holds the output":
        assert not output.exists()


def test_a_lock_left_by_a_killed_run_is_taken_over(inputs, tmp_path, capsys, caplog):
    output = tmp_path / "vectors"
    # The process that wrote the lock is gone (the kernel released its flock): its pid no longer runs.
    pid = os.getpid()
    while True:
        pid += 1000
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            continue
    lock_path(output).write_text(json.dumps({"pid": pid, "command": "encode"}) + "\n", encoding="utf-8")
    code, _, err = run_cli(["encode", inputs["texts"], "-m", inputs["model"], "--output", output], capsys)
    assert code == 0, err
    assert f"the lock names process {pid}, which no longer runs; taking the lock over" in caplog.text
    assert not lock_path(output).exists()


def test_a_free_lock_naming_a_live_process_is_taken_over_without_saying_that_it_ended(inputs, tmp_path, capsys,
                                                                                      caplog):
    output = tmp_path / "vectors"
    live = os.getppid()  # runs, and holds no lock on the file
    lock_path(output).write_text(json.dumps({"pid": live, "command": "encode"}) + "\n", encoding="utf-8")
    code, _, err = run_cli(["encode", inputs["texts"], "-m", inputs["model"], "--output", output], capsys)
    assert code == 0, err
    assert f"the lock names process {live}, which holds no lock on it; taking the lock over" in caplog.text


def test_overwrite_replaces_the_commands_own_output(inputs, tmp_path, capsys):
    output = tmp_path / "vectors"
    for _ in range(2):
        code, _, err = run_cli(["encode", inputs["texts"], "-m", inputs["model"], "--output", output,
                                "--overwrite"], capsys)
        assert code == 0, err
    (output / "keep-me.txt").write_text("mine\n", encoding="utf-8")  # added by the user since
    code, _, err = run_cli(["encode", inputs["texts"], "-m", inputs["model"], "--output", output, "--overwrite"],
                           capsys)
    assert_one_line_error(code, err, "keep-me.txt", "did not write")
    assert (output / "keep-me.txt").read_text(encoding="utf-8") == "mine\n"


def test_an_unwritable_output_is_named_before_any_work(inputs, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x\n", encoding="utf-8")
    output = blocker / "report.json"  # its folder is a file: nothing can be written there
    code, _, err = run_cli(["eval", "-m", inputs["model"], "--dataset", inputs["pairs"], "--output", output],
                           capsys)
    assert_one_line_error(code, err, f"cannot write --output {output}")
    assert ".lock" not in err and ".tmp" not in err


# Files a command writes beside its named output, for an output at `out` (the output's own name given):
# command -> (output name, files beside it). A user's file at one of those paths is never replaced.
SIDE_FILES = {
    "eval": ("report.json", ["report.md"]),
    "meta ablate": ("ablation.json", ["ablation.md"]),
    "encode to .npy": ("vectors.npy", [".vectors.npy.partial", ".vectors.npy.progress.json"]),
    "encode to shards": ("vectors", [".vectors.partial"]),
}


def _side_file_args(command: str, ins: dict[str, Path]) -> list:
    if command.startswith("encode"):
        return _table(ins)["encode"][0]
    return _table(ins)[command][0]


@pytest.mark.parametrize("command,side", [(c, s) for c, (_, sides) in SIDE_FILES.items() for s in sides])
def test_a_file_beside_the_output_that_the_user_owns_is_refused_and_kept(command, side, inputs, tmp_path, capsys):
    name, _ = SIDE_FILES[command]
    output = tmp_path / "out" / name
    output.parent.mkdir()
    (output.parent / side).write_text("my own notes, not written by sentforge\n", encoding="utf-8")
    before = _hashes(tmp_path)
    code, _, err = run_cli([*_side_file_args(command, inputs), "--output", output, "--overwrite"], capsys)
    assert_one_line_error(code, err, side)
    assert _hashes(tmp_path) == before


def test_overwrite_replaces_the_report_and_table_that_eval_wrote(inputs, tmp_path, capsys):
    command = "eval"
    name, (table,) = SIDE_FILES[command]
    output = tmp_path / name
    for _ in range(2):
        code, _, err = run_cli([*_side_file_args(command, inputs), "--output", output, "--overwrite"], capsys)
        assert code == 0, err
    assert (tmp_path / table).read_text(encoding="utf-8").startswith(f"<!-- written by sentforge {command} -->\n")
    assert json.loads(output.read_text(encoding="utf-8"))["written_by"] == f"sentforge {command}"
    # Another command's report at the same path is not this command's to replace.
    (tmp_path / table).write_text("<!-- written by sentforge meta ablate -->\n| a |\n", encoding="utf-8")
    before = _hashes(tmp_path)
    code, _, err = run_cli([*_side_file_args(command, inputs), "--output", output, "--overwrite"], capsys)
    assert_one_line_error(code, err, str(tmp_path / table), f"written by sentforge {command}")
    assert _hashes(tmp_path) == before


def test_index_build_leaves_a_folder_named_like_its_old_scratch_space_alone(inputs, tmp_path, capsys):
    """Its vectors are encoded in a folder of its own beside the output, removed afterwards."""
    output = tmp_path / "idx"
    keep = tmp_path / ".idx.vectors"
    keep.mkdir()
    (keep / "mine.txt").write_text("mine\n", encoding="utf-8")
    code, _, err = run_cli([*_table(inputs)["index build"][0], "--output", output], capsys)
    assert code == 0, err
    assert (keep / "mine.txt").read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".idx.vectors", "idx", "inputs"]
