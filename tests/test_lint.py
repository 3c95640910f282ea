"""`ruff check` passes on the package, the tests and the benchmarks, with the rules of pyproject.toml's
[tool.ruff] (the `dev` extra installs ruff beside this interpreter)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_ruff_check_is_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff is not None, f"no ruff beside {sys.executable}: pip install -e '.[dev]'"
    checked = subprocess.run([ruff, "check", "--no-cache", "src", "tests", "benchmarks"], cwd=REPO,
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
