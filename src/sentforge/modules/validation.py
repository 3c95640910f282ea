"""Reading a sentence-transformers directory safely: modules.json entries are checked (types, paths
that stay inside the directory), each module loads or fails with the file named, and the vector size
that one module gives is the size that the next one reads."""

from __future__ import annotations

from pathlib import Path

from sentforge.support.errors import ModelFormatError
from sentforge.modules import Module, module_class
from sentforge.modules.base import read_json

MODULES_FILE = "modules.json"


def _entry_path(root: Path, index: int, entry: object) -> tuple[str, Path]:
    file = root / MODULES_FILE
    if not isinstance(entry, dict):
        raise ModelFormatError(f"{file}: entry {index} is {type(entry).__name__}, expected an object")
    for key in ("type", "path"):
        if not isinstance(entry.get(key), str):
            raise ModelFormatError(f"{file}: entry {index} needs a string {key!r}, got {entry.get(key)!r}")
    if not isinstance(entry.get("idx", index), int):
        raise ModelFormatError(f"{file}: entry {index} has a non-integer idx {entry['idx']!r}")
    sub = Path(entry["path"])
    target = (root / sub).resolve()
    if sub.is_absolute() or not target.is_relative_to(root.resolve()):
        raise ModelFormatError(f"{file}: module path {entry['path']!r} leaves the model directory; refusing it")
    # A module without files (Normalize) may have no directory at all, as sentence-transformers writes it;
    # a module that needs files names the missing one when it loads.
    if target.exists() and not target.is_dir():
        raise ModelFormatError(f"{file}: module path {entry['path']!r} is not a directory of {root}")
    return entry["type"], root / sub


def load_modules(root: Path) -> list[Module]:
    """The modules listed in `root`/modules.json, loaded in `idx` order and checked to fit together."""
    entries = read_json(root / MODULES_FILE, expected=list)
    if not entries:
        raise ModelFormatError(f"{root / MODULES_FILE}: expected a non-empty list of modules")
    parts = [_entry_path(root, i, entry) for i, entry in enumerate(entries)]
    order = sorted(range(len(entries)), key=lambda i: entries[i].get("idx", i))
    modules, dim = [], None
    for i in order:
        type_name, path = parts[i]
        module = module_class(type_name).load(path)
        if module.input_dim is not None and dim is not None and module.input_dim != dim:
            raise ModelFormatError(f"{path}: {type(module).__name__} reads vectors of size {module.input_dim}, "
                                   f"but the module before it gives {dim}")
        dim = module.output_dim or dim
        modules.append(module)
    return modules
