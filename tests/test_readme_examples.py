"""The README's adapt and labels examples stay true: each runs with the README's own command line (its files
and options; a tiny model for the real one, and for adapt a budget that skips every trained candidate, the run
the README quotes) and gives what the README says: adapt the output it quotes, line by line up to its numbers
and model name, the default --keep and the model directory that sentence-transformers loads; labels a fitted
curve from runs long enough to learn, none skipped."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from conftest import REPO, run_cli
from docs_blocks import blocks_of

pytestmark = pytest.mark.usefixtures("one_torch_thread")
README = REPO / "README.md"


def readme_command(command: str) -> list[str]:
    """The README's `sentforge COMMAND ...` line (continuations joined), as the arguments after `sentforge`."""
    for block in blocks_of(README):
        for line in block.code.replace("\\\n", " ").splitlines():
            if line.startswith(f"sentforge {command} "):
                return shlex.split(line)[1:]
    raise AssertionError(f"README.md shows no `sentforge {command}` command")


def with_values(argv: list[str], **values: object) -> list[str]:
    """`argv` with the values of the options named (model="x" sets --model x, budget_minutes=... too)."""
    argv = list(argv)
    for name, value in values.items():
        argv[argv.index("--" + name.replace("_", "-")) + 1] = str(value)
    return argv


def quoted(first_words: str) -> list[str]:
    """The lines of the README's `text` block that starts with `first_words` (output it quotes)."""
    for block in re.findall(r"^```text\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M):
        if block.startswith(first_words):
            return [line for line in block.splitlines() if line.strip()]
    raise AssertionError(f"README.md quotes no output starting {first_words!r}")


def shape(line: str, names: dict[str, str]) -> str:
    """The line up to its numbers and the names that differ between the README's run and this one."""
    for name, placeholder in names.items():
        line = line.replace(name, placeholder)
    return re.sub(r"\d+(\.\d+)?", "#", line)


def test_the_readme_adapt_example_says_what_the_readme_quotes(tiny_bert_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)  # the README's paths are relative to the repository root
    out = tmp_path / "adapted"
    argv = with_values(readme_command("adapt"), model=tiny_bert_dir, output=out, budget_minutes=1e-4)
    code, stdout, err = run_cli(argv, capsys)
    assert code == 0, err
    name = re.match(r"selected (\S+)\.start:", stdout.splitlines()[-1])[1]
    names = {str(out): "OUT", "runs/adapted": "OUT", name: "MODEL", "all-MiniLM-L6-v2": "MODEL"}
    assert shape(stdout.splitlines()[-1], names) == shape(quoted("selected ")[0], names)
    report = [shape(line, names) for line in (out / "report.md").read_text(encoding="utf-8").splitlines()]
    for line in quoted("Selected: "):
        assert shape(line, names) in report, line
    # The default --keep selected: model/ and the report, no candidate's model; the report says how to keep them.
    assert not (out / "runs").exists() and (out / "model" / "modules.json").is_file()
    output_line = next(line for line in report if line.startswith("Output: "))
    assert "--keep selected: only model/ and the report kept" in output_line and "--keep all" in output_line
    st = pytest.importorskip("sentence_transformers")
    assert st.SentenceTransformer(str(out / "model"), device="cpu").encode(["a ticket"]).shape[0] == 1


def test_the_readme_labels_example_fits_a_curve_from_runs_long_enough_to_learn(tiny_bert_dir, tmp_path, capsys,
                                                                               monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "curve"
    code, stdout, err = run_cli(with_values(readme_command("labels"), model=tiny_bert_dir, output=out), capsys)
    assert code == 0, err
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["short_runs"] == [] and report["skipped"] == [] and report["fit"] is not None
    assert min(run["steps"] for run in report["runs"].values()) >= 10
    assert stdout.splitlines()[-1].startswith("with 2x the labels: dev ap ")
    assert "Its last line gives the expected dev score with twice the labels" in " ".join(
        README.read_text(encoding="utf-8").split())
