"""A command checks its options before it imports the model stack (torch, transformers) and before it creates
anything: a bad option answers with one `error:` line and exit 2 as fast as `--version`, and leaves the
folders as they were. All cases run in one subprocess (tests/helpers/refused_options.py), so that its imported
modules are those of the refused commands alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, assert_one_line_error

# (arguments, a fragment of the error line); paths are relative to the test folder.
REFUSED = [
    (["encode", "in/in.txt", "-o", "out.npy", "--dtype", "NOPE"], "'NOPE' is not a compute precision"),
    (["encode", "in/in.txt", "-o", "out.npy", "--precision", "NOPE"], "precision 'NOPE' (--precision)"),
    (["encode", "in/in.txt", "-o", "out.npy", "--engine", "NOPE"], "--engine 'NOPE'"),
    (["encode", "in/in.txt", "-o", "out.npy", "--workers", "2"], "the local engine runs one worker"),
    (["encode", "in/in.txt", "-o", "new/deeper/out.npy", "--dtype", "NOPE"], "--dtype"),
    (["encode", "in/in.txt", "-o", "in/nonexistent/..", "--overwrite"], "lies inside --output in/nonexistent/.."),
    (["index", "build", "in/in.txt", "-o", "index", "--kind", "NOPE"], "kind 'NOPE' (--kind)"),
    (["search", "a query", "--corpus", "in/in.txt", "--index", "index"], "give exactly one of --corpus"),
    (["export", "model", "-o", "exported", "--format", "NOPE"], "format 'NOPE' (--format)"),
    (["eval", "-m", "model", "-o", "report.json", "--tasks", "NOPE"], "unknown task 'NOPE'"),
    (["train", "tsdae", "-m", "model", "--corpus", "in/in.txt", "-o", "run", "--optimizer", "NOPE"],
     "unknown optimizer 'NOPE' (--optimizer)"),
    (["train", "mnrl", "-m", "model", "--corpus", "in/pairs.jsonl", "-o", "run", "--schedule", "NOPE"],
     "unknown schedule 'NOPE' (--schedule)"),
    (["train", "tsdae", "-m", "model", "--corpus", "in/in.txt", "-o", "run", "--steps", "1", "--epochs", "1"],
     "give steps or epochs"),
    (["pretrain", "mlm", "--corpus", "in/in.txt", "-o", "pretrained", "--optimizer", "NOPE"],
     "unknown optimizer 'NOPE'"),
    (["encode", "in/in.txt", "-o", "out.npy", "--seed", "-1"], "--seed must be a whole number from 0"),
    (["index", "build", "in/in.txt", "-o", "index", "--seed", "-1"], "--seed"),
    (["train", "tsdae", "-m", "model", "--corpus", "in/in.txt", "-o", "run", "--seed", "-1"], "--seed"),
    (["train", "cross-encoder", "-m", "model", "--labelled", "in/pairs.jsonl", "-o", "run", "--lr", "-1"], "--lr"),
    (["train", "cross-encoder", "-m", "model", "--labelled", "in/pairs.jsonl", "-o", "run", "--seed", "-1"],
     "--seed"),
    (["labels", "-m", "model", "--labelled", "in/pairs.jsonl", "--dev", "in/pairs.jsonl", "-o", "curve",
      "--seed", "-1"], "--seed"),
    (["labels", "-m", "model", "--labelled", "in/classes.jsonl", "--dev", "in/classes.jsonl", "-o", "curve",
      "--shots", "2,x"], "--shots: expected comma-separated whole numbers"),
    (["labels", "-m", "model", "--labelled", "in/classes.jsonl", "--dev", "in/classes.jsonl", "-o", "curve",
      "--shots", "1,2"], "at least 2"),
    (["labels", "-m", "model", "--labelled", "in/classes.jsonl", "--dev", "in/classes.jsonl", "-o", "curve",
      "--shots", "2,3"], "--shots 3: no class of in/classes.jsonl has more than 2 examples"),
    (["adapt", "-m", "model", "--unlabelled", "in/in.txt", "--dev", "in/pairs.jsonl", "-o", "adapted",
      "--seed", str(2**64)], "got 18446744073709551616"),
    (["eval", "-o", "report.json", "--seed", "-1"], "--seed"),
]


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """The runs of REFUSED, what they imported, and the files of the test folder before and after."""
    folder = tmp_path_factory.mktemp("refused")
    (folder / "in").mkdir()
    (folder / "in" / "in.txt").write_text("a cat sat on the mat\n", encoding="utf-8")
    (folder / "in" / "pairs.jsonl").write_text('{"sentence1": "a cat", "sentence2": "a kitten"}\n', encoding="utf-8")
    classes = [("a cat", "pets"), ("a dog", "pets"), ("sun", "weather"), ("rain", "weather")]
    (folder / "in" / "classes.jsonl").write_text("".join(json.dumps({"text": text, "label": label}) + "\n"
                                                         for text, label in classes), encoding="utf-8")
    before = sorted(path.relative_to(folder) for path in folder.rglob("*"))
    result = subprocess.run([sys.executable, str(REPO / "tests" / "helpers" / "refused_options.py"),
                             json.dumps([args for args, _ in REFUSED])], capture_output=True, text=True, check=True,
                            cwd=folder, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    after = sorted(path.relative_to(folder) for path in folder.rglob("*"))
    return json.loads(result.stdout.splitlines()[-1]), before, after


@pytest.mark.parametrize("case", range(len(REFUSED)), ids=[" ".join(args[:2]) + f" {args[-2]} {args[-1]}"
                                                           for args, _ in REFUSED])
def test_a_bad_option_gives_one_error_line(refused, case):
    run = refused[0]["runs"][case]
    assert_one_line_error(run["code"], run["stderr"], REFUSED[case][1])


def test_no_refused_command_imports_the_model_stack(refused):
    assert refused[0]["loaded"] == []


def test_no_refused_command_creates_anything(refused):
    _, before, after = refused
    assert after == before
