"""`import sentforge` and the command line's --help do not load torch, transformers or numpy."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

HEAVY = ("torch", "transformers", "numpy")


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint('loaded:', *(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(REPO / "src"), "PATH": ""})
    return result.stdout.splitlines()[-1].split()[1:]


def test_import_sentforge_is_light():
    assert loaded_after("import sentforge") == []
    assert loaded_after("import sentforge, sentforge.recipes; sentforge.recipes.recipes()") == []


def test_help_is_light():
    code = ("import sys\nfrom sentforge.cli import main\nsys.argv = ['sentforge', 'train', 'tsdae', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass")
    assert loaded_after(code) == []


def test_public_names_load_on_first_use():
    assert "torch" in loaded_after("import sentforge; sentforge.Encoder")


def test_dir_lists_the_public_names_and_none_of_the_modules_helpers():
    import sentforge

    assert set(sentforge.__all__) <= set(dir(sentforge))
    assert not {"Any", "importlib", "annotations", "_EXPORTS"} & set(dir(sentforge))
