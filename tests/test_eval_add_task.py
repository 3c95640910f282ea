"""Adding an evaluation task as ARCHITECTURE.md walks through it: one new module in the task package, found
without being listed anywhere, run by `sentforge.evaluate`; and the layering that makes this possible (task
modules import readers, scoring helpers and the contract, never each other)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

import sentforge
import sentforge.evaluation.task as task_contract
import sentforge.evaluation.tasks as task_package
from sentforge.errors import InputFileError
from sentforge.external import CallableEncoder

# The module of the walkthrough, verbatim: the only source file the new task needs.
TOY_TASK_MODULE = '''
"""Toy paraphrase retrieval: the nearest paraphrase of each sentence, by cosine similarity, should be its own."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from sentforge.data.files import read_lines
from sentforge.errors import InputFileError
from sentforge.evaluation.similarity import unit_embeddings
from sentforge.evaluation.task import Task, TaskMetadata, register_task


@register_task
class ToyParaphraseRetrievalTask(Task):
    metadata = TaskMetadata(
        name="ToyParaphraseRetrieval", family="sts", main_metric="accuracy",
        description="accuracy (x100) of finding each sentence's paraphrase as its nearest neighbour",
        files=("toy/pairs.tsv",))

    @cached_property
    def pairs(self) -> list[tuple[str, str]]:
        path = self.data_dir / self.metadata.files[0]
        pairs = []
        for line_no, line in enumerate(read_lines(path), 1):
            fields = line.split("\\t")
            if len(fields) != 2:
                raise InputFileError(f"{path}, line {line_no}: expected sentence<TAB>paraphrase")
            pairs.append((fields[0], fields[1]))
        return pairs

    def texts(self) -> list[str]:
        return [text for pair in self.pairs for text in pair]

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        rows, vectors = unit_embeddings(encoder, self.texts())
        sentences = vectors[[rows[a] for a, _ in self.pairs]]
        paraphrases = vectors[[rows[b] for _, b in self.pairs]]
        nearest = np.argmax(sentences @ paraphrases.T, axis=1)
        return {"accuracy": 100 * float(np.mean(nearest == np.arange(len(self.pairs)))), "n": len(self.pairs)}
'''
TOY_MODULE_NAME = "toy_paraphrase_retrieval"

# Unit-length 2-d vectors at the given angles (degrees): the cosine of two texts is cos(angle difference).
ANGLES = {"a cat sleeps": 0, "a kitten is asleep": 10, "dogs bark": 90, "the dog is barking": 75,
          "it rains": 45, "the sun is out": 130}
PAIRS = [("a cat sleeps", "a kitten is asleep"), ("dogs bark", "the dog is barking"), ("it rains", "the sun is out")]


@pytest.fixture()
def toy_task_package(tmp_path, monkeypatch):
    """The task package extended by a folder holding the toy module, and a registry that forgets it afterwards."""
    folder = tmp_path / "more_tasks"
    folder.mkdir()
    (folder / f"{TOY_MODULE_NAME}.py").write_text(TOY_TASK_MODULE, encoding="utf-8")
    task_contract.discover_tasks()  # the built-in tasks register in the real registry before it is copied
    monkeypatch.setattr(task_package, "__path__", [*task_package.__path__, str(folder)])
    monkeypatch.setattr(task_contract, "_TASKS", dict(task_contract._TASKS))
    yield folder
    sys.modules.pop(f"{task_package.__name__}.{TOY_MODULE_NAME}", None)


def angle_encoder() -> CallableEncoder:
    def encode(texts: list[str]) -> np.ndarray:
        radians = np.deg2rad([ANGLES[t] for t in texts])
        return np.stack([np.cos(radians), np.sin(radians)], axis=1).astype(np.float32)

    return CallableEncoder(encode, name="angles", dim=2)


def test_a_new_task_module_is_discovered_and_evaluated(toy_task_package, tmp_path):
    assert "toyparaphraseretrieval" in sentforge.evaluation.registered_tasks()
    data = tmp_path / "data"
    (data / "toy").mkdir(parents=True)
    (data / "toy/pairs.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in PAIRS), encoding="utf-8")
    report = sentforge.evaluate(angle_encoder(), "ToyParaphraseRetrieval", data_dir=data)
    # by hand: "a cat sleeps" (0°) is nearest "a kitten is asleep" (10°), "dogs bark" (90°) nearest "the dog is
    # barking" (75°); "it rains" (45°) is 30° from "the dog is barking" but 85° from "the sun is out": 2 of 3
    entry = report["tasks"]["ToyParaphraseRetrieval"]
    assert entry["main_score"] == pytest.approx(100 * 2 / 3) and entry["metrics"]["n"] == 3
    assert report["timing"]["distinct_texts_encoded"] == 6

    (data / "toy/pairs.tsv").write_text("no tab here\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"pairs.tsv, line 1: expected sentence<TAB>paraphrase"):
        sentforge.evaluate(angle_encoder(), "ToyParaphraseRetrieval", data_dir=data)


def test_task_modules_import_readers_and_helpers_never_each_other():
    evaluation = Path(task_contract.__file__).parent
    for folder in ("tasks", "readers"):
        for path in sorted((evaluation / folder).glob("*.py")):
            imported = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module:
                    imported |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
                elif isinstance(node, ast.Import):
                    imported |= {alias.name for alias in node.names}
            forbidden = {name for name in imported if name.startswith("sentforge.evaluation.tasks")
                         or name in ("sentforge.evaluation.runner", "sentforge.evaluation.evaluate")}
            assert not forbidden, f"{path.relative_to(evaluation)} imports {sorted(forbidden)}"
