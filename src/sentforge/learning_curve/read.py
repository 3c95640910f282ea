"""`read_label_data`: the --labelled file as the labels it holds, class-labelled texts (classes.py) or pairs
(data.py), its method decided by the file or checked against it."""

from __future__ import annotations

from pathlib import Path

from sentforge.data.classes import is_classes_file
from sentforge.learning_curve.classes import read_class_data
from sentforge.learning_curve.data import METHODS, LabelData, read_pair_data
from sentforge.support.errors import ConfigError, InputFileError


def read_label_data(path: str | Path, method: str | None = None) -> LabelData:
    """Rows of one text and a `label` mean classes; otherwise pairs (data.read_pair_data). Class-labelled data
    is read before the pairs' reader, which loads the model stack, so that its checks come first."""
    path = Path(path)
    if method is not None and method not in METHODS:
        raise ConfigError(f"--method {method!r}: choose from {', '.join(METHODS)}")
    if not path.is_file():
        raise InputFileError(f"--labelled {path}: file not found")
    classes = is_classes_file(path)
    if method == "classes" or (method is None and classes):
        return read_class_data(path)
    if classes:
        raise ConfigError(f"--method {method}: {path} holds class-labelled texts (text, label), which train with "
                          "--method classes")
    return read_pair_data(path, method)
