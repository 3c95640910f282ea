"""Broken model directories end in one `error:` line naming the file, exit code 2 and no vectors:
never a traceback, never a silent [UNK]-only tokenizer or randomly initialised layers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from safetensors.torch import load_file, save_file

from sentforge import build_encoder

from conftest import assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _truncate(path: Path) -> None:
    data = (path / "model.safetensors").read_bytes()
    (path / "model.safetensors").write_bytes(data[:len(data) // 2])


def _drop_layer(path: Path) -> None:
    tensors = load_file(path / "model.safetensors")
    save_file({k: v for k, v in tensors.items() if "layer.1." not in k}, path / "model.safetensors")


def _no_tokenizer(path: Path) -> None:
    for file in path.iterdir():
        if file.name.startswith(("tokenizer", "vocab", "special_tokens")):
            file.unlink()


def _edit_json(name: str, change):
    def edit(path: Path) -> None:
        file = path / name
        file.write_text(json.dumps(change(json.loads(file.read_text()))))
    return edit


def _entry(index: int, **values):
    return _edit_json("modules.json", lambda entries: [
        {**entry, **values} if i == index else entry for i, entry in enumerate(entries)])


# (name, plain Hugging Face directory or sentence-transformers directory, how to break it, words of the error)
BROKEN = [
    ("truncated weights", "hf", _truncate, ["model.safetensors", "safetensors"]),
    ("garbage weights", "hf", lambda p: (p / "model.safetensors").write_bytes(b"not a model" * 50),
     ["model.safetensors"]),
    ("no weights", "hf", lambda p: (p / "model.safetensors").unlink(), ["no weights file"]),
    ("pickle only", "hf", lambda p: (p / "model.safetensors").rename(p / "pytorch_model.bin"),
     ["pytorch_model.bin", "pickle"]),
    ("config not JSON", "hf", lambda p: (p / "config.json").write_text("{bad"), ["config.json", "invalid JSON"]),
    ("config a list", "hf", lambda p: (p / "config.json").write_text("[1]"), ["config.json"]),
    ("unknown model type", "hf", lambda p: (p / "config.json").write_text('{"model_type": "nonsense"}'),
     ["config.json"]),
    ("broken tokenizer", "hf", lambda p: (p / "tokenizer.json").write_text('{"bad": 1}'), ["tokenizer"]),
    ("no tokenizer", "hf", _no_tokenizer, ["no tokenizer", "tokenizer.json"]),
    ("missing tensors", "hf", _drop_layer, ["model.safetensors", "lacks", "encoder.layer.1."]),
    ("pooling dimension", "st", _edit_json("1_Pooling/config.json", lambda c: {**c, "word_embedding_dimension": 99}),
     ["1_Pooling", "99", "32"]),
    ("modules.json an object", "st", lambda p: (p / "modules.json").write_text('{"a": 1}'), ["modules.json"]),
    ("modules.json type not a string", "st", _entry(0, type=5), ["modules.json", "'type'"]),
    ("modules.json path not a string", "st", _entry(1, path=[]), ["modules.json", "'path'"]),
    ("modules.json path leaves the directory", "st", _entry(1, path="../elsewhere/1_Pooling"),
     ["modules.json", "../elsewhere/1_Pooling", "leaves"]),
    ("modules.json absolute path", "st", _entry(1, path="/tmp"), ["modules.json", "/tmp", "leaves"]),
    ("sentence_bert_config max_seq_length", "st",
     _edit_json("sentence_bert_config.json", lambda c: {**c, "max_seq_length": "x"}), ["sentence_bert_config.json"]),
    ("max_seq_length beyond positions", "st",
     _edit_json("sentence_bert_config.json", lambda c: {**c, "max_seq_length": 1000}),
     ["sentence_bert_config.json", "1000", "64"]),
]


@pytest.fixture(scope="module")
def st_dir(tiny_bert_dir, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("st") / "model"
    build_encoder(tiny_bert_dir).save(path)
    return path


@pytest.mark.parametrize("name, kind, breaks, words", BROKEN, ids=[case[0] for case in BROKEN])
def test_broken_model_directory_is_one_error_line(tiny_bert_dir, st_dir, tmp_path, capsys, name, kind, breaks, words):
    model = tmp_path / "model"
    shutil.copytree(tiny_bert_dir if kind == "hf" else st_dir, model)
    breaks(model)
    texts = tmp_path / "texts.txt"
    texts.write_text("the cat sat\nhello world\n")
    code, _, err = run_cli(["encode", texts, "--output", tmp_path / "out.npy", "--model", model], capsys)
    assert_one_line_error(code, err, *words)
    assert not (tmp_path / "out.npy").exists()


def test_max_seq_length_beyond_the_position_table_is_refused(tiny_bert_dir, tmp_path, capsys):
    texts = tmp_path / "texts.txt"
    texts.write_text("the cat sat\n")
    code, _, err = run_cli(["encode", texts, "--output", tmp_path / "out.npy", "--model", tiny_bert_dir,
                            "--max-seq-length", "65"], capsys)
    assert_one_line_error(code, err, "max_seq_length 65", "64 positions")
    code, _, err = run_cli(["encode", texts, "--output", tmp_path / "out.npy", "--model", tiny_bert_dir,
                            "--max-seq-length", "64"], capsys)
    assert code == 0, err


def test_a_module_without_files_may_have_no_directory(tiny_bert_dir, tmp_path):
    """sentence-transformers lists `2_Normalize` in modules.json without writing the empty folder (the
    all-MiniLM-L6-v2 package ships it so): such a directory loads, and gives unit vectors."""
    import numpy as np

    import sentforge

    build_encoder(tiny_bert_dir, normalize=True).save(tmp_path / "m")
    normalize_dir = next(p for p in (tmp_path / "m").iterdir() if p.name.endswith("_Normalize"))
    shutil.rmtree(normalize_dir)
    vectors = sentforge.load(tmp_path / "m").encode(["a cat sat on the mat", "the app crashes"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
