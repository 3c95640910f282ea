"""`sentforge export`: the ONNX fp32 directory encodes like the source model, the int8 one close to it,
both load through `sentforge.load` and say what they are in their model card."""

from __future__ import annotations

import numpy as np
import pytest

import sentforge
from sentforge.support.errors import ConfigError
from sentforge.modules.onnx_backbone import OnnxTransformer

from conftest import CORPUS, assert_one_line_error, run_cli

pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def cosines(a, b):
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.parametrize(("fmt", "min_cosine"), [("onnx", 1 - 1e-6), ("int8", 0.95)])
def test_export_loads_and_encodes_like_the_source(tiny_bert_dir, tmp_path, capsys, fmt, min_cosine):
    code, _, err = run_cli(["export", tiny_bert_dir, "--format", fmt, "-o", tmp_path / "exported"], capsys)
    assert code == 0, err
    exported = sentforge.load(tmp_path / "exported")
    assert isinstance(exported[0], OnnxTransformer)
    source = sentforge.load(tiny_bert_dir)
    texts = CORPUS[:12] + ["a much longer sentence than the others so that batches pad differently"]
    ours, reference = exported.encode(texts, batch_size=4), source.encode(texts, batch_size=4)
    assert cosines(ours, reference).min() > min_cosine
    if fmt == "onnx":
        np.testing.assert_allclose(ours, reference, atol=1e-5)
    card = (tmp_path / "exported" / "README.md").read_text(encoding="utf-8")
    assert f"ONNX {'int8' if fmt == 'int8' else 'fp32'} export of {tiny_bert_dir}" in card


def test_export_encoder_of_a_model_spec_writes_the_export_of_the_cli(tiny_bert_dir, tmp_path, capsys):
    from sentforge.scale.export import export_encoder

    assert run_cli(["export", tiny_bert_dir, "--format", "onnx", "-o", tmp_path / "cli"], capsys)[0] == 0
    assert export_encoder(str(tiny_bert_dir), tmp_path / "python", "onnx") == tmp_path / "python"
    texts = CORPUS[:6]
    np.testing.assert_array_equal(sentforge.load(tmp_path / "python").encode(texts),
                                  sentforge.load(tmp_path / "cli").encode(texts))
    card = (tmp_path / "python" / "README.md").read_text(encoding="utf-8")
    assert f"ONNX fp32 export of {tiny_bert_dir}" in card
    # the output is checked before the model loads: never inside the model directory
    with pytest.raises(ConfigError, match="lies inside"):
        export_encoder(str(tiny_bert_dir), tiny_bert_dir / "onnx")


def test_exported_directory_saves_and_reloads_identically(tiny_bert_dir, tmp_path, capsys):
    assert run_cli(["export", tiny_bert_dir, "-o", tmp_path / "a"], capsys)[0] == 0
    first = sentforge.load(tmp_path / "a")
    first.save(tmp_path / "b")
    np.testing.assert_array_equal(sentforge.load(tmp_path / "b").encode(CORPUS[:5]), first.encode(CORPUS[:5]))


def test_export_refuses_a_model_without_transformer_and_existing_output(tmp_path, tiny_bert_dir, capsys):
    (tmp_path / "glove.txt").write_text("a 0.1 0.2\nb 0.3 0.4\n", encoding="utf-8")
    code, _, err = run_cli(["export", f"glove:{tmp_path / 'glove.txt'}", "-o", tmp_path / "out"], capsys)
    assert_one_line_error(code, err, "Hugging Face Transformer", "WordVectors")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("x", encoding="utf-8")
    code, _, err = run_cli(["export", tiny_bert_dir, "-o", tmp_path / "taken"], capsys)
    assert_one_line_error(code, err, "not empty", "--overwrite")
    code, _, err = run_cli(["export", tiny_bert_dir, "--format", "fp8", "-o", tmp_path / "x"], capsys)
    assert_one_line_error(code, err, "--format", "fp8")
