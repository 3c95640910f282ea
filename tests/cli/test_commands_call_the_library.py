"""Every command parses its options, calls one library function and prints what it returns
(ARCHITECTURE.md, `cli/`): whatever a command does is available from Python. So no module of the command
line takes an output's lock, checks or writes an output, reads an input file, loads a model or encodes
texts itself; the helpers that do are listed here, and the commands reach them only through the library.
"""

from __future__ import annotations

import ast

from conftest import REPO

CLI = REPO / "src" / "sentforge" / "cli"
# module -> the work its helpers do, which belongs in the library
WORK_MODULES = {
    "sentforge.support.output_guard": "the output's lock and checks",
    "sentforge.support.io": "writing files",
    "sentforge.data": "reading input files",
    "sentforge.evaluation.own": "reading datasets",
    "sentforge.recipes.run_dir": "checking a run directory",
    "numpy": "computing results",
    "torch": "computing results",
}
# (module, name) -> the work it does
WORK_NAMES = {
    ("sentforge.loading", "load"): "loading a model",
    ("sentforge", "load"): "loading a model",
    ("sentforge.evaluation", "load_dataset"): "reading a dataset",
    ("sentforge.meta_fit", "read_fit_corpus"): "reading a corpus",
    ("sentforge.meta_fit", "load_members"): "loading models",
}
WORK_METHODS = {"encode": "encoding texts", "save": "writing a model", "fit": "fitting a model"}


def work_done_in(path) -> list[str]:
    """What the module at `path` does itself, one line each, named by line number."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
            names: list[tuple[str, str]] = []
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
            names = [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WORK_METHODS:
            found.append(f"{path.name}:{node.lineno}: .{node.func.attr}(): {WORK_METHODS[node.func.attr]}")
            continue
        else:
            continue
        for module in modules:
            for work_module, work in WORK_MODULES.items():
                if module == work_module or module.startswith(work_module + "."):
                    found.append(f"{path.name}:{node.lineno}: imports {module}: {work}")
        found += [f"{path.name}:{node.lineno}: imports {name} from {module}: {WORK_NAMES[module, name]}"
                  for module, name in names if (module, name) in WORK_NAMES]
    return sorted(found, key=lambda line: int(line.split(":")[1]))


def test_no_command_does_the_work_of_the_library_itself():
    found = [line for path in sorted(CLI.glob("*.py")) for line in work_done_in(path)]
    assert not found, "move this work into the library function that the command calls:\n" + "\n".join(found)


def test_the_check_finds_work_done_in_a_command(tmp_path):
    module = tmp_path / "command.py"
    module.write_text("import numpy as np\n"
                      "def command(path):\n"
                      "    from sentforge.support.output_guard import output_lock\n"
                      "    from sentforge.data.texts import read_texts\n"
                      "    from sentforge.loading import load, model_info\n"
                      "    load('m').encode(read_texts(path))\n", encoding="utf-8")
    assert work_done_in(module) == [
        "command.py:1: imports numpy: computing results",
        "command.py:3: imports sentforge.support.output_guard: the output's lock and checks",
        "command.py:4: imports sentforge.data.texts: reading input files",
        "command.py:5: imports load from sentforge.loading: loading a model",
        "command.py:6: .encode(): encoding texts",
    ]
