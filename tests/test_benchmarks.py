"""The benchmark scripts stay runnable and findable: every script under benchmarks/ imports and prints its
`--help` from the repository root (as `python benchmarks/KIND/SCRIPT.py --help`, in two interpreters that
share the heavy imports: tests/helpers/benchmark_help.py), every `benchmarks/...py` path that README.md,
ARCHITECTURE.md, docs/ and benchmarks/README.md cite exists, and benchmarks/README.md lists every
script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import REPO

SCRIPTS = sorted(path.relative_to(REPO).as_posix() for path in (REPO / "benchmarks").glob("*/*.py")
                 if path.parent.name != "benchlib" and not path.name.startswith("_"))
CITED = re.compile(r"benchmarks/(?:[a-z0-9_]+/)*[a-z0-9_]+\.py\b")  # not a placeholder: KIND/SCRIPT.py, ...py
PAGES = [REPO / "README.md", REPO / "ARCHITECTURE.md", REPO / "benchmarks" / "README.md",
         *sorted((REPO / "docs").rglob("*.md"))]
INTERPRETERS = 2


@pytest.fixture(scope="module")
def helps() -> dict[str, dict]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, str(REPO / "tests" / "helpers" / "benchmark_help.py")]

    def run(scripts: list[str]) -> dict[str, dict]:
        done = subprocess.run(command + scripts, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    with ThreadPoolExecutor(INTERPRETERS) as pool:
        parts = pool.map(run, [SCRIPTS[i::INTERPRETERS] for i in range(INTERPRETERS)])
    return {script: result for part in parts for script, result in part.items()}


def test_the_scripts_are_found():
    kinds = {script.split("/")[1] for script in SCRIPTS}
    assert {"speed", "experiments", "data", "adapt", "reports"} <= kinds and len(SCRIPTS) >= 25


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_prints_its_help(helps, script):
    result = helps[script]
    assert result["code"] == 0 and "usage:" in result["output"], result["output"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_cited_benchmark_paths_exist(page):
    missing = sorted({path for path in CITED.findall(page.read_text(encoding="utf-8")) if not (REPO / path).is_file()})
    assert not missing, f"{page.name} cites missing scripts: {missing}"


def test_the_readme_lists_every_script():
    readme = (REPO / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert not [script for script in SCRIPTS if script not in readme]
