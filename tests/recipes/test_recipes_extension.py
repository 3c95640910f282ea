"""ARCHITECTURE.md's walkthrough "add a training objective", followed in this one file: a toy objective
and its recipe declaration, then trained from Python and from the command line, which build on the
registry alone (no other source file is touched)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch
from torch import nn

import sentforge
from sentforge.recipes import Plan, Recipe, register
from sentforge.recipes.options import option
from sentforge.recipes.registry import RECIPES

from conftest import CORPUS, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class CenterLoss(nn.Module):
    """Toy objective: pull every sentence vector towards the batch mean (a scaled spread)."""

    def __init__(self, encoder, weight: float = 1.0) -> None:
        super().__init__()
        self.encoder, self.weight = encoder, weight

    def forward(self, batch: list[str]) -> torch.Tensor:
        vectors = self.encoder.embed(batch)
        return self.weight * (vectors - vectors.mean(0)).pow(2).sum(1).mean()


@dataclass
class CenterOptions:
    """A toy method: no paper."""

    weight: float = option(1.0, "Scale of the spread penalty.", min=0.0)


def _center(encoder, examples, options, context):
    return Plan(CenterLoss(encoder, weight=options.weight), examples)


@pytest.fixture()
def toy_recipe():
    from sentforge.cli import train as train_cli

    recipe = register(Recipe("toy-center", "Toy: pull sentence vectors together.", data="sentences",
                             pooling="mean", options=CenterOptions, build=_center,
                             training={"optimizer": "adamw", "lr": 1e-3, "batch_size": 8, "schedule": "constant"}))
    train_cli.register_command(recipe)
    yield recipe
    del RECIPES[recipe.name]
    train_cli.train_app.registered_commands.pop()


def spread(vectors: np.ndarray) -> float:
    return float(((vectors - vectors.mean(0)) ** 2).sum(1).mean())


def test_a_new_objective_trains_from_python_and_the_cli(toy_recipe, tiny_bert_dir, tmp_path, capsys):
    start = spread(sentforge.build_encoder(tiny_bert_dir, pooling="mean").encode(CORPUS))
    encoder = sentforge.train("toy-center", tiny_bert_dir, CORPUS, tmp_path / "py", steps=20, weight=2.0,
                              show_progress=False)
    assert spread(encoder.encode(CORPUS)) < 0.5 * start

    code, out, _ = run_cli(["train", "toy-center", "--help"], capsys)
    assert code == 0 and "--weight" in out and "--noise" not in out and "--corpus" in out
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"{line}\n" for line in CORPUS), encoding="utf-8")
    code, _, err = run_cli(["train", "toy-center", "--model", tiny_bert_dir, "--corpus", corpus, "--output",
                            tmp_path / "cli", "--steps", 20, "--weight", 2.0], capsys)
    assert code == 0, err
    assert spread(sentforge.load(tmp_path / "cli").encode(CORPUS)) < 0.5 * start
