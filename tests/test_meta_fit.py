"""The `sentforge meta fit` line that `meta_fit.meta_fit_command` spells (adapt records it for its
meta-embedding candidates) is read back by the command line as the same fit: the same members, corpus,
output and seed, and the same constructor arguments of every method."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest
import typer.main

from sentforge.cli import app
from sentforge.cli.meta import FitOptions
from sentforge.meta import method_names
from sentforge.meta_fit import meta_fit_command

# Every option away from its default, so that an option the line drops shows.
OPTIONS = {"dim": 7, "tau": 0.3, "ae_loss": "cos2", "ae_hidden": 1, "ae_epochs": 3, "ae_batch_size": 16,
           "device": "cpu", "seed": 5}


def parsed_fit(command: str) -> dict:
    """The values that `sentforge meta fit` reads from `command`, by option name."""
    args = shlex.split(command)
    assert args[:3] == ["sentforge", "meta", "fit"]
    fit = typer.main.get_command(app).commands["meta"].commands["fit"]
    return fit.make_context("fit", args[3:]).params


@pytest.mark.parametrize("method", method_names())
def test_the_recorded_command_line_reads_back_as_the_same_fit(method):
    options = FitOptions(method=method, **OPTIONS)
    params = options.method_params()
    command = meta_fit_command(["m1", "dir/m 2"], method, ["a.txt", Path("b.jsonl")], Path("out dir"), params=params,
                               embed_members=True, seed=options.seed)
    values = parsed_fit(command)
    shared = {field.name for field in dataclasses.fields(FitOptions)}
    read = FitOptions(**{name: value for name, value in values.items() if name in shared})
    assert read.method_params() == params
    assert values["member"] == ["m1", "dir/m 2"] and values["corpus"] == [Path("a.txt"), Path("b.jsonl")]
    assert values["output"] == Path("out dir") and values["embed_members"] and read.seed == options.seed
