"""`sentforge train METHOD --seed 0` twice gives bit-identical weights on CPU, for every method
(through the command line, whose options stay stable while the internals change)."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from conftest import CORPUS, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")

PAIRS = [(CORPUS[i], CORPUS[i + 1]) for i in range(12)]
LABELS = ["entailment", "contradiction"]


def _data(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS[:12]) + "\n", encoding="utf-8")
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("sentence1\tsentence2\n" + "".join(f"{a}\t{b}\n" for a, b in PAIRS), encoding="utf-8")
    scored = tmp_path / "scored.tsv"
    scored.write_text("sentence1\tsentence2\tscore\n" + "".join(f"{a}\t{b}\t{i % 6}\n" for i, (a, b) in
                                                                 enumerate(PAIRS)), encoding="utf-8")
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text("".join(json.dumps({"sentence1": a, "sentence2": b, "label": LABELS[i % 2]}) + "\n"
                                for i, (a, b) in enumerate(PAIRS)), encoding="utf-8")
    return {"corpus": corpus, "pairs": pairs, "scored": scored, "labelled": labelled}


METHODS = {
    "tsdae": ["--corpus", "corpus"], "mlm": ["--corpus", "corpus"], "simcse": ["--corpus", "corpus"],
    "ct": ["--corpus", "corpus"], "bertflow": ["--corpus", "corpus"], "mnrl": ["--corpus", "pairs"],
    "sts": ["--corpus", "scored"], "pause": ["--pairs", "labelled", "--label-fraction", "0.5"],
    "st5": ["--stage", "qa", "--qa-data", "pairs", "--stage-steps", "2"],
}


def _weights(directory):
    files = sorted(p for p in directory.rglob("*.safetensors") if "checkpoints" not in p.parts)
    assert files
    return {str(p.relative_to(directory)): load_file(p) for p in files}


@pytest.mark.parametrize("method", list(METHODS))
def test_same_seed_gives_bit_identical_weights(method, tiny_bert_dir, tiny_t5_dir, tmp_path, capsys):
    data = _data(tmp_path)
    options = [data.get(value, value) for value in METHODS[method]]
    model = tiny_t5_dir if method == "st5" else tiny_bert_dir
    steps = [] if method == "st5" else ["--steps", 2]
    runs = []
    for name in ("a", "b"):
        output = tmp_path / name
        code, _, err = run_cli(["train", method, "--model", model, "--output", output, "--batch-size", 4,
                                "--seed", 0, *steps, *options], capsys)
        assert code == 0, err
        runs.append(_weights(output))
    first, second = runs
    assert first.keys() == second.keys()
    for file, tensors in first.items():
        assert tensors.keys() == second[file].keys()
        for key, value in tensors.items():
            assert torch.equal(value, second[file][key]), f"{file}:{key}"
