"""ARCHITECTURE.md stays true to the tree: every source file and folder it names exists, and its layer table
holds the rows of the layers contract in pyproject.toml, in the same order; that contract names every package
and module at the root of src/sentforge, and only a layer of one module lies loose there. Every `src/sentforge/`
and `tests/` path that README.md and docs/ name exists too.

A file is named in backticks (`run.py`, `recipes/command.py`, `adaptation/`). A bare name is looked for in
the folders named in the same bullet or table row, in a folder the section says everything lives in
(`src/sentforge/evaluation/`; for `benchmarks/`, its folders of each kind too), in src/, src/sentforge and at the
top of the repository, so that a bullet about
one package cannot name a file that moved to another. Code blocks and the walkthroughs (which name files
that the reader is to create) are not read.
"""

from __future__ import annotations

import ast
import re
import tomllib

from conftest import REPO

PACKAGE = REPO / "src" / "sentforge"
DOC = REPO / "ARCHITECTURE.md"
PATH_TOKEN = re.compile(r"`([\w./-]+(?:\.py|/))`")
REPO_PATH = re.compile(r"\b(?:src/sentforge|tests)/[\w./-]*[\w/]")


def sections(text: str) -> list[tuple[str, list[str]]]:
    """(title, lines) of each `## ` section (the text before the first under ""), code blocks left out."""
    found, title, lines, in_code = [], "", [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        if line.startswith("## "):
            found.append((title, lines))
            title, lines = line[3:].strip(), []
        else:
            lines.append(line)
    return [*found, (title, lines)]


def units(lines: list[str]) -> list[str]:
    """Each bullet with its continuation lines, each table row, each other line."""
    grouped: list[str] = []
    for line in lines:
        if grouped and line.startswith("  ") and not line.lstrip().startswith("|"):
            grouped[-1] += " " + line.strip()
        else:
            grouped.append(line)
    return grouped


def missing_paths(text: str) -> list[str]:
    missing = []
    for title, lines in sections(text):
        if title.startswith("Walkthrough"):
            continue
        section_roots = [REPO / token for token in PATH_TOKEN.findall("\n".join(lines))
                         if token.startswith("src/sentforge/") and token.endswith("/")]
        for unit in units(lines):
            tokens = PATH_TOKEN.findall(unit)
            roots = [REPO, REPO / "src", PACKAGE, *section_roots]
            folders = [path if token.endswith("/") else path.parent for token in tokens if "/" in token
                       for path in (root / token.rstrip("/") for root in roots) if path.exists()]
            # benchmarks/ keeps its scripts one folder per kind: a script is named by its name alone.
            folders += [kind for folder in folders if folder == REPO / "benchmarks"
                        for kind in folder.iterdir() if kind.is_dir()]
            for token in tokens:
                places = roots if "/" in token.rstrip("/") else roots + folders
                if not any((place / token.rstrip("/")).exists() for place in places):
                    missing.append(f"{title or 'introduction'}: `{token}` in: {unit.strip()[:100]}")
    return missing


def test_every_source_file_and_folder_that_the_architecture_names_exists():
    missing = missing_paths(DOC.read_text(encoding="utf-8"))
    assert not missing, "ARCHITECTURE.md names paths that do not exist:\n" + "\n".join(missing)


def test_a_file_named_in_another_package_bullet_is_found_missing():
    text = "## File map\n\n- `adaptation/` — `run.py`, and `budget.py` (the time left).\n"
    assert [m.split(" in: ")[0] for m in missing_paths(text)] == ["File map: `budget.py`"]


def contract_rows() -> list[set[str]]:
    """The members of each row of the layers contract in pyproject.toml, highest row first."""
    contract = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contract["contracts"] if c["type"] == "layers")["layers"]
    return [set(re.split(r"\s*[:|]\s*", row.strip())) for row in layers]


def test_the_layer_table_holds_the_rows_of_the_layers_contract():
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| layer | modules |"):].split("\n\n")[0].splitlines()[2:]
    documented = [{token.rstrip("/").removesuffix(".py") for token in PATH_TOKEN.findall(row.split("|")[2])}
                  for row in table]
    assert documented == contract_rows()


def test_every_package_and_root_module_is_in_the_layer_table():
    entries = {path.stem for path in PACKAGE.iterdir()
               if (path / "__init__.py").is_file() or (path.suffix == ".py" and path.name != "__init__.py")}
    assert entries == set().union(*contract_rows())


def test_a_layer_of_several_modules_is_a_package():
    """A module lies loose at the package root only as a layer of its own (or as `__main__.py`, the command
    line's entry point beside `cli/`): a layer of several modules is a package."""
    shared = [row for row in contract_rows() if len(row) > 1
              and any((PACKAGE / f"{name}.py").is_file() for name in row - {"__main__"})]
    assert not shared, f"root modules that share a layer, to be gathered into a package: {shared}"


def test_every_source_and_test_path_that_the_docs_name_exists():
    """README.md and docs/ name source files and tests by their path from the top of the repository."""
    docs = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    missing = [f"{doc.relative_to(REPO)}: {path}" for doc in docs
               for path in sorted(set(REPO_PATH.findall(doc.read_text(encoding="utf-8"))))
               if not (REPO / path).exists()]
    assert not missing, "the docs name paths that do not exist:\n" + "\n".join(missing)


def test_the_adaptation_bullet_names_the_rows_of_its_layers_contract_in_order():
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c.get("containers") == ["sentforge.adaptation"])["layers"]
    text = DOC.read_text(encoding="utf-8")
    bullet = " ".join(text[text.index("- `adaptation/`"):].split("\n- ")[0].split())
    rows = re.search(r"its rows, from the top: (.*?), then what they all read", bullet).group(1)
    named = [adaptation_module(token) for token in PATH_TOKEN.findall(rows)]
    assert len(named) >= 5 and named == layers[:len(named)]


def adaptation_module(token: str) -> str:
    """The module or package of adaptation/ that a path token names: `run.py` run, `adaptation/candidates/`
    candidates."""
    return token.rstrip("/").removesuffix(".py").removeprefix("adaptation/")


def adaptation_imports(module: str) -> set[str]:
    """The sentforge modules that adaptation's `module` imports (every file of it when it is a package)."""
    path = PACKAGE / "adaptation" / module
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
    return set().union(*(sentforge_imports(file) for file in files))


def flat_doc() -> str:
    """ARCHITECTURE.md with its line breaks and indents made single spaces, so that a sentence reads as one line."""
    return " ".join(DOC.read_text(encoding="utf-8").split())


def named_files(pattern: str) -> list[str]:
    """The file names in backticks in what `pattern`'s one group matches in ARCHITECTURE.md."""
    found = re.search(pattern, flat_doc())
    assert found, f"ARCHITECTURE.md no longer says: {pattern}"
    return PATH_TOKEN.findall(found.group(1))


def sentforge_imports(path, module_level_only: bool = False) -> set[str]:
    """The sentforge modules that the module at `path` imports (`from sentforge.x import y` names sentforge.x)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if module_level_only else ast.walk(tree)
    return {node.module for node in nodes if isinstance(node, ast.ImportFrom) and node.module
            and node.module.startswith("sentforge.")}


def test_the_recipe_declarations_import_what_the_architecture_says():
    allowed = {"sentforge." + ("recipes/" + token if "/" not in token else token).removesuffix(".py").replace("/", ".")
               for token in named_files(r"at module level they import only (.*?), and each build function")}
    declarations = sorted(path for path in (PACKAGE / "recipes").glob("*.py")
                          if path.stem not in ("registry", "__init__")
                          and re.search(r"^RECIPES\b", path.read_text(encoding="utf-8"), re.MULTILINE))
    named = named_files(r"(`recipes/methods.py`.*?) — the declarations")
    assert [f"recipes/{path.name}" for path in declarations] == sorted(named)
    extra = {f"{path.name}: {module}" for path in declarations
             for module in sentforge_imports(path, module_level_only=True) - allowed}
    assert not extra, f"recipe declarations import more than ARCHITECTURE.md says: {sorted(extra)}"


def test_the_objectives_that_embed_through_encoder_embed_are_those_the_architecture_names():
    through_embed = set(named_files(r"`Encoder.embed` is the training path of the objectives that embed texts, "
                                    r"(.*?): on the CPU"))
    own_path = set(named_files(r"TSDAE embeds without it, (.*?): it tokenises"))
    no_sentence = set(named_files(r"\); (`\w+\.py` and `\w+\.py`) train the backbone under a language-model head"))
    no_sentence |= set(named_files(r"embed no sentence; (`\w+\.py`) trains a\s+cross-encoder"))
    modules = {path.name: path.read_text(encoding="utf-8") for path in (PACKAGE / "objectives").glob("*.py")}
    assert {name for name, source in modules.items() if ".embed(" in source} == through_embed
    losses = {name for name, source in modules.items() if re.search(r"^    def forward\(", source, re.MULTILINE)}
    assert losses <= through_embed | own_path | no_sentence, "an objective the architecture does not place"
    assert not (own_path | no_sentence) - set(modules)


def test_no_adapt_step_imports_a_later_one_but_where_the_architecture_says():
    text = DOC.read_text(encoding="utf-8")
    bullet = text[text.index("- `adaptation/`"):].split("\n- ")[0]
    pieces = re.split(r"\n  (\d)\. ", bullet)
    modules = {path.stem for path in (PACKAGE / "adaptation").glob("*.py")} | {
        path.parent.name for path in (PACKAGE / "adaptation").glob("*/__init__.py")}
    step = {}
    for number, part in zip(pieces[1::2], pieces[2::2]):
        for token in PATH_TOKEN.findall(part):
            if "/" not in adaptation_module(token) and adaptation_module(token) in modules:
                step.setdefault(adaptation_module(token), int(number))
    shared = {token.removesuffix(".py") for token in named_files(r"every step may read (.*?); and the plan reads")}
    plan_reads = {token.removesuffix(".py") for token in named_files(
        r"the plan reads (.*?), which the contract therefore ranks below `planning.py`")}
    later = {(module, imported.split(".")[2]) for module in step
             for imported in adaptation_imports(module)
             if imported.startswith("sentforge.adaptation.") and imported.split(".")[2] not in shared
             and step.get(imported.split(".")[2], 0) > step[module]}
    assert later == {("planning", module) for module in plan_reads}
    assert {"inputs", "hygiene", "planning", "candidates", "select", "report"} <= set(step), \
        "the steps are no longer read"


def test_what_the_architecture_says_is_not_typed_is_a_mapping():
    doc = flat_doc()
    assert "report.md is rendered from the report's mapping" in doc
    assert "Its results are not typed" in doc
    assert "the report that `sentforge.labels` returns (report.json's layout) are dicts" in doc
    report = ast.parse((PACKAGE / "adaptation" / "report.py").read_text(encoding="utf-8"))
    markdown = next(node for node in report.body if isinstance(node, ast.FunctionDef) and node.name == "markdown")
    assert ast.unparse(markdown.args.args[0].annotation).startswith("dict")
    run = ast.parse((PACKAGE / "learning_curve" / "run.py").read_text(encoding="utf-8"))
    labels = next(node for node in run.body if isinstance(node, ast.FunctionDef) and node.name == "labels")
    assert ast.unparse(labels.returns).startswith("dict")
