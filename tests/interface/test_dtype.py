"""Half-precision inference: `encode(dtype=...)`, `sentforge encode --dtype` and `sentforge.load(...,
model_kwargs={"torch_dtype": ...})`, against float32 vectors and sentence-transformers' own loading."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import sentforge
from sentforge import build_encoder
from sentforge.interface.dtypes import parse_dtype
from sentforge.support.errors import ConfigError

from conftest import CORPUS, DATA, MODELS, assert_one_line_error, needs, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.parametrize("value,expected", [
    ("float16", torch.float16), ("fp16", torch.float16), (torch.float16, torch.float16), ("half", torch.float16),
    ("bfloat16", torch.bfloat16), ("BF16", torch.bfloat16), (torch.bfloat16, torch.bfloat16),
    ("float32", torch.float32), ("torch.float32", torch.float32), (None, None)])
def test_dtype_names(value, expected):
    assert parse_dtype(value) is expected


@pytest.mark.parametrize("value", ["int8", "float64", torch.int8, 16, ""])
def test_other_dtypes_are_refused(value):
    with pytest.raises(ConfigError, match="float32, float16, bfloat16"):
        parse_dtype(value)


def test_bfloat16_encode_on_the_cpu_is_close_to_float32(tiny_bert_dir):
    encoder = build_encoder(tiny_bert_dir)
    reference = encoder.encode(CORPUS)
    weights = {name: p.detach().clone() for name, p in encoder.named_parameters()}
    for dtype in ("bfloat16", torch.bfloat16):
        vectors = encoder.encode(CORPUS, dtype=dtype)
        assert vectors.dtype == np.float32 and vectors.shape == reference.shape
        assert not np.array_equal(vectors, reference)  # the forward pass did run in bfloat16
        assert _cosine(vectors, reference).min() >= 0.999
    np.testing.assert_array_equal(encoder.encode(CORPUS, dtype="float32"), reference)
    for name, param in encoder.named_parameters():  # the float32 weights are back, untouched
        assert param.dtype == torch.float32 and torch.equal(param, weights[name]), name


def test_float16_encode_on_the_cpu_is_refused(tiny_bert_dir):
    with pytest.raises(ConfigError, match="float16 needs a GPU.*bfloat16"):
        build_encoder(tiny_bert_dir).encode(CORPUS[:2], dtype=torch.float16)


def test_load_takes_the_sentence_transformers_torch_dtype(tiny_bert_dir, tmp_path):
    st = pytest.importorskip("sentence_transformers")
    build_encoder(tiny_bert_dir).save(tmp_path / "model")
    path = str(tmp_path / "model")
    for key, value in (("torch_dtype", torch.bfloat16), ("dtype", "bfloat16")):
        encoder = sentforge.load(path, model_kwargs={key: value})
        assert {p.dtype for p in encoder.parameters()} == {torch.bfloat16}
        ours = encoder.encode(CORPUS)
        assert ours.dtype == np.float32
    theirs = st.SentenceTransformer(path, device="cpu", model_kwargs={"torch_dtype": torch.bfloat16}).encode(
        CORPUS, convert_to_numpy=True)
    assert _cosine(ours, theirs.astype(np.float32)).min() >= 0.9999
    per_call = sentforge.load(path).encode(CORPUS, dtype=torch.bfloat16)  # the same weights, cast for the call
    assert _cosine(per_call, theirs.astype(np.float32)).min() >= 0.9999
    auto = sentforge.load(path, model_kwargs={"torch_dtype": "auto"})  # the checkpoint's own: float32
    assert {p.dtype for p in auto.parameters()} == {torch.float32}
    with pytest.raises(ConfigError, match="attn_implementation.*torch_dtype"):
        sentforge.load(path, model_kwargs={"attn_implementation": "eager"})
    with pytest.raises(ConfigError, match="model_kwargs torch_dtype 'int4'"):
        sentforge.load(path, model_kwargs={"torch_dtype": "int4"})


def test_cli_encode_dtype(tiny_bert_dir, tmp_path, capsys):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(CORPUS) + "\n")
    build_encoder(tiny_bert_dir).save(tmp_path / "model")
    runs = {}
    for dtype in (None, "bfloat16"):
        out = tmp_path / f"{dtype}.npy"
        extra = ["--dtype", dtype] if dtype else []
        code, _, err = run_cli(["encode", texts, "-o", out, "-m", tmp_path / "model", *extra], capsys)
        assert code in (0, None), err
        runs[dtype] = np.load(out)
    assert not np.array_equal(runs[None], runs["bfloat16"])
    assert _cosine(runs[None], runs["bfloat16"]).min() >= 0.999
    code, _, err = run_cli(["encode", texts, "-o", tmp_path / "x.npy", "-m", tmp_path / "model", "--dtype", "int4"],
                           capsys)
    assert_one_line_error(code, err, "--dtype", "int4")
    assert not (tmp_path / "x.npy").exists()
    code, _, err = run_cli(["encode", texts, "-o", tmp_path / "y.npy", "-m", tmp_path / "model", "--dtype", "float16"],
                           capsys)
    assert_one_line_error(code, err, "float16", "GPU")


L3 = MODELS / "paraphrase-MiniLM-L3-v2"
STSB_TEST = DATA / "senteval/downstream/STS/STSBenchmark/stsbenchmark/sts-test.csv"


@pytest.mark.slow
@needs(L3)
@needs(STSB_TEST)
def test_bfloat16_on_a_real_model_and_real_texts():
    texts = [line.split("\t")[5] for line in STSB_TEST.read_text(encoding="utf-8").splitlines()[:400]]
    encoder = sentforge.load(str(L3))
    reference = encoder.encode(texts, batch_size=64)
    vectors = encoder.encode(texts, batch_size=64, dtype="bfloat16")
    cosine = _cosine(vectors, reference)
    assert cosine.min() >= 0.9999
