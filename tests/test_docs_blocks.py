"""Every fenced python and shell block of README.md and the pages under docs/ runs as written.

The blocks of one page run in order in one working folder (a page's later blocks may use what its earlier
ones made), from the repository root's point of view: the folder holds links to the repository's files
and folders, `../shared` where this checkout has it, and tiny data files under the names the pages use.
Python blocks of a page share one namespace; shell blocks run in bash with `-e`, `sentforge` and `python`
from this interpreter. The short model names the pages use (all-MiniLM-L6-v2) load a tiny random model of
the same pipeline (BERT, mean pooling), in this process and, through a `sitecustomize` module, in every
Python process a shell block starts: the blocks are checked for what they do, not for their numbers. A
block marked `<!-- docs-test: skip (why) -->` is skipped with its reason; a block that uses `../shared` is
skipped where this checkout has no `../shared`. The session summary prints how many blocks ran and were
skipped (conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, REPO, SHARED
from docs_blocks import Block, blocks_of, doc_files, shell_commands

BLOCKS = [block for path in doc_files(REPO) for block in blocks_of(path)]
TEXTS = sorted(set(CORPUS))
PAIRS = [(TEXTS[i], TEXTS[i] + " indeed", 1) if i % 2 == 0 else (TEXTS[i], TEXTS[(i + 3) % len(TEXTS)], 0)
         for i in range(len(TEXTS))]
SHELL_TIMEOUT = 600
TINY_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
SITECUSTOMIZE = """import os

if os.environ.get("SENTFORGE_DOCS_TINY_MODEL"):
    from sentforge import loading
    from sentforge.encoder import Encoder

    for _name in {names!r}:
        loading.SHORT_NAMES[_name] = lambda spec: Encoder.load(os.environ["SENTFORGE_DOCS_TINY_MODEL"], name=spec)
"""


def _write_lines(path: Path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def make_workspace(root: Path, tiny_bert_dir: Path) -> Path:
    """A folder that looks like the repository root, with the tiny files the pages name."""
    import sentforge

    work = root / "repo"
    work.mkdir(parents=True)
    for entry in REPO.iterdir():
        # runs/ is where the pages write their outputs: a link would send them into the checkout
        if entry.name not in (".git", ".venv", "runs") and not entry.name.startswith("."):
            (work / entry.name).symlink_to(entry)
    if SHARED.exists():
        (root / "shared").symlink_to(SHARED)
    for name in ("texts.txt", "tickets.txt", "corpus.txt", "tweets.txt", "target.txt"):
        _write_lines(work / name, CORPUS)
    _write_lines(work / "tickets.jsonl", (json.dumps({"body": text}) for text in TEXTS))
    _write_lines(work / "rows.csv", ["id,question", *(f"{i},{text}" for i, text in enumerate(TEXTS))])
    labelled = [json.dumps({"sentence1": a, "sentence2": b, "label": label}) for a, b, label in PAIRS]
    for name in ("dev.jsonl", "tickets-dev.jsonl", "test-pairs.jsonl", "dev-pairs.jsonl", "dupes.jsonl",
                 "ticket-pairs.jsonl", "tickets-test.jsonl"):
        _write_lines(work / name, labelled)
    for name in ("pairs.tsv", "pairs-dev.tsv"):
        _write_lines(work / name, ["sentence1\tsentence2\tlabel", *(f"{a}\t{b}\t{label}" for a, b, label in PAIRS)])
    _write_lines(work / "labelled_pairs.tsv", ["sentence1\tsentence2\tscore",
                                               *(f"{a}\t{b}\t{4.0 * label + 0.5}" for a, b, label in PAIRS)])
    reranking = [json.dumps({"query": TEXTS[i], "positive": [TEXTS[i] + " indeed"],
                             "negative": [TEXTS[(i + 1) % len(TEXTS)], TEXTS[(i + 2) % len(TEXTS)]]})
                 for i in range(6)]
    for name in ("faq.jsonl", "faq-dev.jsonl"):
        _write_lines(work / name, reranking)
    beir = work / "my-beir-folder"
    _write_lines(beir / "corpus.jsonl", (json.dumps({"_id": f"d{i}", "title": "", "text": t})
                                         for i, t in enumerate(TEXTS)))
    _write_lines(beir / "queries.jsonl", (json.dumps({"_id": f"q{i}", "text": TEXTS[i] + " indeed"})
                                          for i in range(4)))
    _write_lines(beir / "qrels" / "test.tsv", ["query-id\tcorpus-id\tscore", *(f"q{i}\td{i}\t1" for i in range(4))])
    model = sentforge.load(tiny_bert_dir)
    model.prompts = {"query": "query: ", "document": ""}
    model.save(work / "out" / "my-model")
    return work


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, tiny_bert_dir):
    """The tiny model saved as a sentence-transformers directory, and a folder with the `sitecustomize`
    that makes the short names load it."""
    import sentforge

    root = tmp_path_factory.mktemp("docs-tiny")
    sentforge.load(tiny_bert_dir).save(root / "model")
    (root / "site").mkdir()
    (root / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE.format(names=TINY_NAMES), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def pages(tmp_path_factory, tiny_bert_dir):
    """One working folder and one Python namespace per page, made when the page's first block runs."""
    made: dict[Path, tuple[Path, dict]] = {}

    def page(path: Path) -> tuple[Path, dict]:
        if path not in made:
            made[path] = (make_workspace(tmp_path_factory.mktemp(f"docs-{path.stem}"), tiny_bert_dir),
                          {"__name__": "__docs__"})
        return made[path]

    return page


def _run_python(block: Block, work: Path, namespace: dict, tiny_model: Path, monkeypatch) -> None:
    from sentforge import loading
    from sentforge.encoder import Encoder

    for name in TINY_NAMES:
        monkeypatch.setitem(loading.SHORT_NAMES, name, lambda spec: Encoder.load(tiny_model / "model", name=spec))
    monkeypatch.chdir(work)
    exec(compile(block.code, f"{block.path.name}:{block.line}", "exec"), namespace)


def _run_shell(block: Block, work: Path, tiny_model: Path) -> None:
    bin_dir = str(Path(sys.executable).parent)
    python_path = [str(tiny_model / "site"), str(REPO / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(python_path).rstrip(os.pathsep),
           "SENTFORGE_DOCS_TINY_MODEL": str(tiny_model / "model"),
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "HF_HUB_OFFLINE": "1"}
    script = "set -eo pipefail\n" + shell_commands(block.code)
    result = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True,
                            timeout=SHELL_TIMEOUT)
    assert result.returncode == 0, f"{block.name} failed (exit {result.returncode}):\n{result.stderr[-4000:]}"


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_docs_block_runs_as_written(block: Block, pages, tiny_model, monkeypatch):
    if block.skip:
        pytest.skip(f"docs block {block.name}: {block.skip}")
    if "../shared" in block.code and not SHARED.exists():
        pytest.skip(f"docs block {block.name}: needs ../shared, which this checkout lacks")
    work, namespace = pages(block.path)
    if block.language == "python":
        _run_python(block, work, namespace, tiny_model, monkeypatch)
    else:
        _run_shell(block, work, tiny_model)


def test_the_collector_reads_fences_skip_marks_and_prompts(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n\n<!-- docs-test: skip (needs real data) -->\n```bash\n"
                    "sentforge eval\n```\n\n```text\n$ not run\n```\n\n1. a list item:\n\n   ```console\n"
                    "   $ echo a \\\n     b\n   a b\n   ```\n\n```\nsentforge info x\n```\n\n```\nan output\n```\n",
                    encoding="utf-8")
    blocks = blocks_of(page)
    assert [(b.line, b.language, b.skip) for b in blocks] == [(3, "python", None), (8, "shell", "needs real data"),
                                                             (18, "shell", None), (24, "shell", None)]
    assert blocks[0].code == "x = 1\n"
    assert shell_commands(blocks[2].code) == "echo a \\\n  b\n"


def test_every_page_is_collected():
    pages = {block.path.name for block in BLOCKS}
    with_blocks = {path.name for path in doc_files(REPO) if "```python" in path.read_text(encoding="utf-8")
                   or "```bash" in path.read_text(encoding="utf-8")}
    assert with_blocks <= pages and "README.md" in pages
