"""Adding an evaluation task as ARCHITECTURE.md walks through it: one new module that declares its task in a
`TASKS` tuple, registered and run by `sentforge.evaluate`; the collector that takes every module of the task
package; and the layering that makes this possible (task modules import readers, scoring helpers and the
contract, never each other or the registry)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import sentforge
import sentforge.evaluation.registry as registry
import sentforge.evaluation.task as task_contract
import sentforge.evaluation.tasks as task_package
from sentforge.support.errors import InputFileError
from sentforge.specs.external import CallableEncoder

# The module of the walkthrough, verbatim: the only source file the new task needs.
TOY_TASK_MODULE = '''
"""Toy paraphrase retrieval: the nearest paraphrase of each sentence, by cosine similarity, should be its own."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from sentforge.data.files import read_lines
from sentforge.support.errors import InputFileError
from sentforge.evaluation.similarity import unit_embeddings
from sentforge.evaluation.task import Task, TaskMetadata


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


TASKS = (ToyParaphraseRetrievalTask,)
'''
TOY_MODULE_NAME = "toy_paraphrase_retrieval"

# Unit-length 2-d vectors at the given angles (degrees): the cosine of two texts is cos(angle difference).
ANGLES = {"a cat sleeps": 0, "a kitten is asleep": 10, "dogs bark": 90, "the dog is barking": 75,
          "it rains": 45, "the sun is out": 130}
PAIRS = [("a cat sleeps", "a kitten is asleep"), ("dogs bark", "the dog is barking"), ("it rains", "the sun is out")]


@pytest.fixture()
def toy_task_module(tmp_path, monkeypatch):
    """The toy module, imported from a file, and a registry that forgets what the test registers."""
    path = tmp_path / f"{TOY_MODULE_NAME}.py"
    path.write_text(TOY_TASK_MODULE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(TOY_MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(registry, "TASKS", dict(registry.TASKS))
    return module


def angle_encoder() -> CallableEncoder:
    def encode(texts: list[str]) -> np.ndarray:
        radians = np.deg2rad([ANGLES[t] for t in texts])
        return np.stack([np.cos(radians), np.sin(radians)], axis=1).astype(np.float32)

    return CallableEncoder(encode, name="angles", dim=2)


def test_a_new_task_module_is_registered_and_evaluated(toy_task_module, tmp_path):
    assert "toyparaphraseretrieval" not in sentforge.evaluation.registered_tasks()  # importing registers nothing
    for task in toy_task_module.TASKS:
        sentforge.evaluation.register_task(task)
    assert sentforge.evaluation.registered_tasks()["toyparaphraseretrieval"] is toy_task_module.TASKS[0]
    assert sentforge.evaluation.resolve_tasks("sts")[-1] is toy_task_module.TASKS[0]  # after the built-in ones
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


def test_the_registry_collects_every_task_module_in_name_order():
    modules = [importlib.import_module(info.name)
               for info in pkgutil.iter_modules(task_package.__path__, f"{task_package.__name__}.")]
    declared = [task for module in modules for task in module.TASKS]
    assert list(registry.registered_tasks().values()) == declared
    assert list(registry.registered_tasks()) == [task.metadata.name.lower() for task in declared]


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
                         or name in ("sentforge.evaluation.runner", "sentforge.evaluation.evaluate",
                                     "sentforge.evaluation.registry", "sentforge.evaluation.register_task")}
            assert not forbidden, f"{path.relative_to(evaluation)} imports {sorted(forbidden)}"
