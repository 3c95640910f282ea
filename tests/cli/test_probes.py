"""The careless-user probe suite: every command x every kind of bad (or merely unusual) input.

Each case runs the command in-process on tiny inputs and asserts: exit code 2 with exactly one
`error:` line naming the culprit (or exit 0 where the input is legitimately fine: CRLF line ends and
a UTF-8 byte-order mark, a huge line that is truncated), never a traceback, and no file that existed
before the run was changed, added to or removed (the run's own new output excepted on success).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import CORPUS, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")

OK, ERROR, EITHER = "ok", "error", "either"
LINES = CORPUS[:12]


# --- input files: (file name, content, expectation, words the error names) -------------------------

def _text_inputs(suffix: str) -> dict[str, tuple[str, bytes | None, str, list[str]]]:
    """Variants of a text file with one text per line (.txt) or per record (.jsonl/.tsv)."""
    body = {".txt": "".join(f"{t}\n" for t in LINES),
            ".jsonl": "".join(json.dumps({"text": t}) + "\n" for t in LINES),
            ".csv": "text\n" + "".join(f"{t}\n" for t in LINES)}[suffix]
    malformed = {".txt": None, ".jsonl": body + "{not json\n", ".csv": 'text\n"unterminated\n'}[suffix]
    wrong_field = {".txt": None, ".jsonl": "".join(json.dumps({"body": t}) + "\n" for t in LINES),
                   ".csv": "body\n" + "".join(f"{t}\n" for t in LINES)}[suffix]
    cases = {
        "missing": (f"missing{suffix}", None, ERROR, [f"missing{suffix}"]),
        "empty": (f"empty{suffix}", b"", EITHER, [f"empty{suffix}"]),
        "directory": (f"folder{suffix}", "DIR", ERROR, [f"folder{suffix}"]),
        "binary": (f"binary{suffix}", bytes(range(256)) * 8, ERROR, [f"binary{suffix}"]),
        "invalid-utf8": (f"latin{suffix}", body.encode() + "caf\xe9 au lait\n".encode("latin-1"), ERROR,
                         [f"latin{suffix}"]),
        "crlf-bom": (f"windows{suffix}", ("\ufeff" + body.replace("\n", "\r\n")).encode(), OK, []),
        "huge-line": (f"huge{suffix}", (body + ("word " * 100_000).strip() + "\n").encode()
                      if suffix == ".txt" else None, EITHER, [f"huge{suffix}"]),
    }
    if malformed is not None:
        cases["malformed-row"] = (f"malformed{suffix}", malformed.encode(), ERROR, [f"malformed{suffix}"])
    if wrong_field is not None:
        cases["wrong-field"] = (f"fields{suffix}", wrong_field.encode(), ERROR, [f"fields{suffix}"])
    return {k: v for k, v in cases.items() if v[1] is not None or k == "missing"}


def _pair_inputs(header: str, rows: list[str]) -> dict[str, tuple[str, bytes | None, str, list[str]]]:
    body = header + "\n" + "".join(row + "\n" for row in rows)
    return {
        "missing": ("missing.tsv", None, ERROR, ["missing.tsv"]),
        "empty": ("empty.tsv", b"", ERROR, ["empty.tsv"]),
        "directory": ("folder.tsv", "DIR", ERROR, ["folder.tsv"]),
        "binary": ("binary.tsv", bytes(range(256)) * 8, ERROR, ["binary.tsv"]),
        "invalid-utf8": ("latin.tsv", body.encode() + b"caf\xe9\tau lait\t1\n", ERROR, ["latin.tsv"]),
        "crlf-bom": ("windows.tsv", ("\ufeff" + body.replace("\n", "\r\n")).encode(), OK, []),
        "malformed-row": ("malformed.tsv", (body + "only one field\n").encode(), ERROR, ["malformed.tsv"]),
        "wrong-column": ("columns.tsv", body.replace("sentence1", "first", 1).encode(), ERROR, ["columns.tsv"]),
    }


PAIR_ROWS = [f"{a}\t{b}" for a, b in zip(LINES, LINES[1:] + LINES[:1])]
SCORED_ROWS = [f"{row}\t{i % 6}" for i, row in enumerate(PAIR_ROWS)]
LABELLED_ROWS = [f"{row}\t{['entailment', 'contradiction'][i % 2]}" for i, row in enumerate(PAIR_ROWS)]


# --- commands: how each takes its input, output and model -----------------------------------------

@dataclass
class Command:
    name: str
    args: Callable[[dict], list]  # argv from {"input", "output", "model", "t5", "glove", "data"}
    inputs: dict  # the input-file variants it is probed with
    output_is_dir: bool
    numeric: list[list[str]]  # absurd numeric options, each must be refused
    model_option: bool = True
    has_output: bool = True


TRAIN_STEPS = ["--steps", "1", "--batch-size", "4"]


def _train(method: str, data_option: str = "--corpus", *extra: str) -> Callable[[dict], list]:
    return lambda p: ["train", method, "--model", p["t5"] if method == "st5" else p["model"], data_option,
                      p["input"], "--output", p["output"], *(TRAIN_STEPS if method != "st5" else
                                                              ["--stage-steps", "1", "--batch-size", "4"]), *extra]


COMMANDS = [
    Command("encode", lambda p: ["encode", p["input"], "--output", p["output"], "--model", p["model"]],
            _text_inputs(".txt") | {f"jsonl-{k}": v for k, v in _text_inputs(".jsonl").items() if k != "missing"}
            | {f"csv-{k}": v for k, v in _text_inputs(".csv").items() if k != "missing"}, False,
            [["--batch-size", "0"], ["--max-seq-length", "100000"], ["--max-seq-length", "-1"]]),
    Command("search", lambda p: ["search", "a cat", "--corpus", p["input"], "--model", p["model"]],
            _text_inputs(".txt"), False, [["--top-k", "0"], ["--batch-size", "-5"]], has_output=False),
    *[Command(f"train-{m}", _train(m), _text_inputs(".txt"), True,
              [["--lr", "nan"], ["--lr", "1e10"], ["--steps", "0"], ["--batch-size", "0"],
               ["--max-seq-length", "100000"], ["--warmup-ratio", "5"]])
      for m in ("tsdae", "mlm", "simcse", "ct", "bertflow")],
    Command("train-mnrl", _train("mnrl"), _pair_inputs("sentence1\tsentence2", PAIR_ROWS), True,
            [["--lr", "-1"], ["--temperature", "0"]]),
    Command("train-sts", _train("sts"), _pair_inputs("sentence1\tsentence2\tscore", SCORED_ROWS), True,
            [["--lr", "inf"], ["--score-max", "0"], ["--score-max", "nan"]]),
    Command("train-pause", _train("pause", "--pairs"), _pair_inputs("sentence1\tsentence2\tlabel", LABELLED_ROWS),
            True, [["--lr", "nan"], ["--label-fraction", "7"]]),
    Command("train-st5", _train("st5", "--qa-data", "--stage", "qa"), _pair_inputs("sentence1\tsentence2", PAIR_ROWS),
            True, [["--lr", "nan"], ["--stage-steps", "0"]]),
    Command("meta-fit", lambda p: ["meta", "fit", "--member", p["glove"], "--member", p["model"], "--corpus",
                                   p["input"], "--output", p["output"], "--method", "concat", "--no-cache"],
            _text_inputs(".txt"), True, [["--dim", "0"], ["--batch-size", "0"], ["--method", "gcca", "--tau", "nan"]]),
    Command("pretrain", lambda p: ["pretrain", "mlm", "--corpus", p["input"], "--output", p["output"], "--config",
                                   "tiny", "--steps", "1", "--batch-size", "4", "--heldout", "2", "--vocab-size",
                                   "200", "--eval-every", "1", "--checkpoint-every", "1"],
            _text_inputs(".txt"), True, [["--lr", "nan"], ["--steps", "0"], ["--max-seq-length", "3"]],
            model_option=False),
]
BY_NAME = {command.name: command for command in COMMANDS}


# --- the harness ----------------------------------------------------------------------------------

def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*"))}


def _assert_outcome(code: int, err: str, expect: str, words: list[str]) -> None:
    assert "Traceback" not in err, err
    if expect == OK or (expect == EITHER and code == 0):
        assert code == 0, err
        return
    assert code == 2, f"exit {code}: {err}"
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    for word in words:  # a word, or a tuple of spellings of which one must appear
        assert any(w in lines[0] for w in ((word,) if isinstance(word, str) else word)), lines[0]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, tiny_bert_dir, tiny_t5_dir):
    root = tmp_path_factory.mktemp("probe-models")
    glove = root / "glove.txt"
    glove.write_text("".join(f"{w} {i / 10:.1f} {1 - i / 10:.1f}\n"
                             for i, w in enumerate(sorted({w for t in CORPUS for w in t.split()}))))
    broken = root / "broken-model"
    broken.mkdir()
    for file in tiny_bert_dir.iterdir():
        (broken / file.name).write_bytes(file.read_bytes())
    (broken / "model.safetensors").write_bytes(b"\x00" * 64)
    return {"model": str(tiny_bert_dir), "t5": str(tiny_t5_dir), "glove": f"glove:{glove}", "broken": str(broken)}


def _run(command: Command, tmp_path: Path, capsys, workspace: dict, input_path: Path, output: Path,
         extra: list[str] = (), model: str | None = None):
    paths = {**workspace, "input": input_path, "output": output}
    if model is not None:
        paths["model"] = paths["t5"] = model
    return run_cli([*command.args(paths), *extra], capsys)


def _good_input(command: Command, tmp_path: Path) -> Path:
    name, content, _, _ = command.inputs["crlf-bom"]
    path = tmp_path / name.replace("windows", "good")
    path.write_bytes(content)
    return path


INPUT_CASES = [(c.name, kind) for c in COMMANDS for kind in c.inputs]


@pytest.mark.parametrize("command_name, kind", INPUT_CASES, ids=[f"{c}-{k}" for c, k in INPUT_CASES])
def test_input_file(command_name, kind, tmp_path, capsys, workspace):
    command = BY_NAME[command_name]
    name, content, expect, words = command.inputs[kind]
    path = tmp_path / name
    if content == "DIR":
        path.mkdir()
        (path / "inside.bin").write_bytes(bytes(range(256)))
    elif content is not None:
        path.write_bytes(content)
    output = tmp_path / ("out" if command.output_is_dir else "out.npy")
    before = _snapshot(tmp_path)
    code, _, err = _run(command, tmp_path, capsys, workspace, path, output)
    _assert_outcome(code, err, expect, words)
    after = _snapshot(tmp_path)
    if code == 0:
        after = {k: v for k, v in after.items() if not k.startswith(output.name)}
    assert after == before


OTHER_CASES = [(c.name, kind) for c in COMMANDS for kind in ("unwritable-output", "existing-output", "bad-model")
               if (kind != "bad-model" or c.model_option) and (kind == "bad-model" or c.has_output)]
OTHER_CASES += [(c.name, f"numeric:{' '.join(option)}") for c in COMMANDS for option in c.numeric]


@pytest.mark.parametrize("command_name, kind", OTHER_CASES, ids=[f"{c}-{k}" for c, k in OTHER_CASES])
def test_output_model_and_numbers(command_name, kind, tmp_path, capsys, workspace):
    command = BY_NAME[command_name]
    good = _good_input(command, tmp_path)
    output = tmp_path / ("out" if command.output_is_dir else "out.npy")
    extra, model, words = [], None, []
    if kind == "unwritable-output":
        blocker = tmp_path / "blocker"
        blocker.write_text("a file, not a directory")
        output = blocker / output.name
        words = ["blocker"]
    elif kind == "existing-output":
        if command.output_is_dir:
            output.mkdir()
            (output / "keep.txt").write_text("precious")
        else:
            output.write_bytes(b"precious")
        words = ["--overwrite"]
    elif kind == "bad-model":
        model, words = workspace["broken"], ["model.safetensors"]
    else:
        extra = kind.removeprefix("numeric:").split()
        words = [(extra[-2], extra[-2].lstrip("-").replace("-", "_"))]  # the option, as the message spells it
    before = _snapshot(tmp_path)
    code, _, err = _run(command, tmp_path, capsys, workspace, good, output, extra, model)
    _assert_outcome(code, err, ERROR, words)
    assert _snapshot(tmp_path) == before


def test_info_and_eval_probes(tmp_path, capsys, workspace):
    cases = [
        (["info", workspace["broken"]], ["model.safetensors"]),
        (["info", str(tmp_path / "nowhere")], ["nowhere"]),
        (["eval", "--model", workspace["broken"], "--output", str(tmp_path / "r.json"), "--data-dir",
          str((tmp_path / "data").mkdir() or tmp_path / "data")], ["model.safetensors"]),
        (["eval", "--model", workspace["model"], "--output", str(tmp_path / "r.json"), "--data-dir",
          str(tmp_path / "nowhere"), "--strict"], ["nowhere"]),
        (["eval", "--model", workspace["model"], "--output", str(tmp_path / "r.json"), "--batch-size", "0"],
         ["--batch-size"]),
        (["eval", "--model", workspace["model"], "--output", str(tmp_path / "r.json"), "--tasks", "nonsense"],
         ["nonsense"]),
    ]
    (tmp_path / "existing.json").write_text("{}")
    cases.append((["eval", "--model", workspace["model"], "--output", str(tmp_path / "existing.json"),
                   "--data-dir", str(tmp_path / "data")], ["--overwrite"]))
    for argv, words in cases:
        before = _snapshot(tmp_path)
        code, _, err = run_cli(argv, capsys)
        _assert_outcome(code, err, ERROR, words)
        assert _snapshot(tmp_path) == before, argv

