"""sentence-transformers interoperability: the same keywords, the same vectors, the same directories.

Every comparison runs sentence-transformers itself as the reference.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import CORPUS, DATA, MODELS, needs

import sentforge
from sentforge import Encoder, build_encoder
from sentforge.support.errors import ConfigError, ModelFormatError
from sentforge.evaluation.readers.sts import STSB_RAW
from sentforge.evaluation.task import CachedEncoder
from sentforge.modules import Flow, Normalize, Pooling, Projection, WordVectors

st = pytest.importorskip("sentence_transformers")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

PROMPTS = {"query": "query: ", "passage": "passage: "}
# 500 distinct texts of varied length from the tiny tokenizer's vocabulary, plus unknown words.
TEXTS = [" ".join(CORPUS[(i * k) % 12] for k in range(1, 2 + i % 4)) + f" item {i}" for i in range(500)]
ST_KEYWORDS = dict(normalize_embeddings=True, convert_to_tensor=True, prompt_name="query", batch_size=16)


def _glove_encoder(tmp_path) -> Encoder:
    path = tmp_path / "vectors.txt"
    rng = np.random.default_rng(0)
    words = sorted({w for text in CORPUS for w in text.split()} | {",", "don't", "well-known", "a"})
    path.write_text("".join(f"{w} {' '.join(f'{x:.6f}' for x in rng.normal(size=8))}\n" for w in words),
                    encoding="utf-8")
    return sentforge.load(f"glove:{path}")


def _bert(tiny_bert_dir, dense_normalize: bool = False) -> Encoder:
    return build_encoder(tiny_bert_dir, pooling="mean", projection_dim=12 if dense_normalize else None,
                         normalize=dense_normalize)


def _st_saved(tiny_bert_dir, path) -> str:
    from sentence_transformers.models import Pooling as STPooling
    from sentence_transformers.models import Transformer as STTransformer

    transformer = STTransformer(str(tiny_bert_dir), max_seq_length=64)
    pooling = STPooling(transformer.get_word_embedding_dimension(), "mean")
    model = st.SentenceTransformer(modules=[transformer, pooling], device="cpu", prompts=PROMPTS)
    model.save(str(path))
    return str(path)


def test_same_500_texts_same_keywords_same_vectors_for_both_savers(tiny_bert_dir, tmp_path):
    ours = _bert(tiny_bert_dir)
    ours.prompts = dict(PROMPTS)
    ours.save(tmp_path / "by-sentforge")
    for directory in (str(tmp_path / "by-sentforge"), _st_saved(tiny_bert_dir, tmp_path / "by-st")):
        theirs = st.SentenceTransformer(directory, device="cpu").encode(TEXTS, **ST_KEYWORDS)
        mine = sentforge.load(directory).encode(TEXTS, **ST_KEYWORDS)
        assert isinstance(mine, torch.Tensor) and mine.shape == theirs.shape == (500, 32)
        torch.testing.assert_close(mine, theirs, atol=1e-6, rtol=0)
        # The prompt is really applied: without it the vectors differ.
        assert not torch.allclose(mine, sentforge.load(directory).encode(TEXTS, normalize_embeddings=True,
                                                                          convert_to_tensor=True), atol=1e-3)


@pytest.mark.parametrize("pipeline", ["bert-mean", "bert-dense-normalize", "glove-average", "bert-prompts"])
def test_round_trip_with_sentence_transformers(pipeline, tiny_bert_dir, tmp_path):
    if pipeline == "glove-average":
        ours = _glove_encoder(tmp_path)
        texts = CORPUS + ["The cat, well-known!", "unknown words only", "", "A DON'T x-a catx a,b"]
    else:
        ours = _bert(tiny_bert_dir, dense_normalize=pipeline == "bert-dense-normalize")
        texts = TEXTS[:60]
    if pipeline == "bert-prompts":
        ours.prompts, ours.default_prompt_name = dict(PROMPTS), "passage"
    ours.save(tmp_path / "ours")
    reference = st.SentenceTransformer(str(tmp_path / "ours"), device="cpu")
    expected = ours.encode(texts)
    np.testing.assert_allclose(reference.encode(texts), expected, atol=1e-6)
    np.testing.assert_allclose(sentforge.load(tmp_path / "ours").encode(texts), expected, atol=1e-6)
    # ... and back: the directory sentence-transformers re-saves loads in sentforge unchanged.
    reference.save(str(tmp_path / "theirs"))
    again = sentforge.load(tmp_path / "theirs")
    np.testing.assert_allclose(again.encode(texts), expected, atol=1e-6)
    # sentence-transformers adds empty "query"/"document" prompts of its own; ours must all survive.
    assert ours.prompts.items() <= again.prompts.items() and again.default_prompt_name == ours.default_prompt_name


def test_glove_average_skips_unknown_words_in_both_libraries(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text("the 1 0 0\ncat 0 2 0\nsat 0 0 3\n, 1 1 1\na 5 5 5\n", encoding="utf-8")
    ours = sentforge.load(f"glove:{path}")
    ours.save(tmp_path / "glove")
    modules = json.loads((tmp_path / "glove" / "modules.json").read_text())
    assert [m["type"] for m in modules] == ["sentence_transformers.models.StaticEmbedding"]
    texts = ["The cat, sat!", "unknown words only", "cat", "xa ax a"]
    expected = [[2 / 4, 3 / 4, 4 / 4], [0, 0, 0], [0, 2, 0], [5, 5, 5]]   # hand-computed means of known words
    np.testing.assert_allclose(ours.encode(texts), expected, atol=1e-6)
    np.testing.assert_allclose(st.SentenceTransformer(str(tmp_path / "glove"), device="cpu").encode(texts),
                               expected, atol=1e-6)


def test_repeated_words_keep_their_last_vector_and_save(tmp_path):
    ours = Encoder([WordVectors(["a", "b", "a"], np.diag([1.0, 2.0, 3.0]).astype(np.float32)), Pooling(3, "mean")])
    np.testing.assert_allclose(ours.encode(["a", "b"]), [[0, 0, 3], [0, 2, 0]])
    ours.save(tmp_path / "m")
    np.testing.assert_allclose(sentforge.load(tmp_path / "m").encode(["a", "b"]), [[0, 0, 3], [0, 2, 0]])


def test_prompts_survive_save_and_load_both_ways(tiny_bert_dir, tmp_path):
    directory = _st_saved(tiny_bert_dir, tmp_path / "st")
    written = json.loads((tmp_path / "st" / "config_sentence_transformers.json").read_text())["prompts"]
    loaded = sentforge.load(directory)
    assert loaded.prompts == written and PROMPTS.items() <= written.items()
    loaded.save(tmp_path / "again")
    settings = json.loads((tmp_path / "again" / "config_sentence_transformers.json").read_text())
    assert settings["prompts"] == written and settings["default_prompt_name"] is None
    with pytest.raises(ConfigError, match="prompt_name 'missing' is not one of this model's prompts"):
        loaded.encode(["a"], prompt_name="missing")
    np.testing.assert_allclose(loaded.encode(["the cat"], prompt_name="query"), loaded.encode(["query: the cat"]))


def test_encode_keywords_match_sentence_transformers(tiny_bert_dir, tmp_path):
    ours = _bert(tiny_bert_dir)
    ours.save(tmp_path / "m")
    reference = st.SentenceTransformer(str(tmp_path / "m"), device="cpu")
    texts = TEXTS[:150]
    for keywords in [dict(truncate_dim=8, normalize_embeddings=True), dict(precision="ubinary"),
                     dict(precision="binary", truncate_dim=16), dict(prompt="search: ", show_progress_bar=False)]:
        mine, theirs = ours.encode(texts, **keywords), reference.encode(texts, **keywords)
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, keywords
        np.testing.assert_allclose(mine, theirs, atol=1e-6)
    as_list = ours.encode(texts[:3], convert_to_numpy=False)
    assert isinstance(as_list, list) and len(as_list) == 3 and isinstance(as_list[0], torch.Tensor)
    assert ours.encode("one text", normalize_embeddings=True).shape == (32,)


def test_unknown_or_doubled_keywords_are_clear_errors(tiny_bert_dir):
    ours = _bert(tiny_bert_dir)
    with pytest.raises(ConfigError, match=r"unknown keyword 'normalise'; accepted: .*normalize_embeddings.*"
                                          r"show_progress_bar"):
        ours.encode(["a"], normalise=True)
    with pytest.raises(ConfigError, match="'normalize' twice"):
        ours.encode(["a"], normalize=True, normalize_embeddings=True)
    with pytest.raises(ConfigError, match="precision must be one of"):
        ours.encode(["a"], precision="int4")


def test_non_finite_vectors_are_refused(tiny_bert_dir):
    ours = _bert(tiny_bert_dir, dense_normalize=True)
    with torch.no_grad():
        ours[2].linear.weight[0, 0] = float("nan")
    with pytest.raises(ModelFormatError, match=r"non-finite \(NaN or inf\) vectors for 2 of 2 texts"):
        ours.encode(["the cat sat", "a dog"])


def test_evaluate_takes_a_sentence_transformer(tiny_bert_dir, tmp_path):
    directory = _st_saved(tiny_bert_dir, tmp_path / "st")
    reference = st.SentenceTransformer(directory, device="cpu")
    cache = CachedEncoder(reference, batch_size=8, show_progress=False)
    np.testing.assert_allclose(cache.encode(CORPUS[:5]), reference.encode(CORPUS[:5]), atol=1e-6)
    sts = tmp_path / "data" / STSB_RAW
    sts.parent.mkdir(parents=True)
    sts.write_text("".join(f"g\tf\t2012\t{i}\t{(i * 7) % 6}.0\t{CORPUS[i]}\t{CORPUS[(i * 5 + 1) % 12]}\n"
                           for i in range(12)), encoding="utf-8")
    theirs = sentforge.evaluate(reference, "STSBenchmark-raw", data_dir=tmp_path / "data")
    ours = sentforge.evaluate(directory, "STSBenchmark-raw", data_dir=tmp_path / "data")
    assert theirs["tasks"]["STSBenchmark-raw"]["main_score"] == pytest.approx(
        ours["tasks"]["STSBenchmark-raw"]["main_score"], abs=1e-9)


def test_module_load_takes_str_and_path(tmp_path):
    for module in (Pooling(4, "max"), Projection(4, 3), Normalize(), Flow(4, steps=2, hidden=8),
                   WordVectors(["a", "b"], np.eye(2, 4, dtype=np.float32))):
        module.save(tmp_path / type(module).__name__)
        from_str = type(module).load(str(tmp_path / type(module).__name__))
        from_path = type(module).load(tmp_path / type(module).__name__)
        assert type(from_str) is type(module)
        for (key, a), (_, b) in zip(from_str.state_dict().items(), from_path.state_dict().items()):
            torch.testing.assert_close(a, b, msg=key)


@pytest.mark.parametrize("kind", ["flow", "t5-encoder-decoder"])
def test_sentforge_only_modules_need_sentforge_and_trust_remote_code(kind, tiny_bert_dir, tiny_t5_dir, tmp_path):
    if kind == "flow":
        ours = Encoder([*_bert(tiny_bert_dir), Flow(32, steps=2, hidden=8)])
    else:
        ours = build_encoder(tiny_t5_dir, backbone="t5-encdec", pooling="first")
    ours.save(tmp_path / "m")
    refusal = r"(?s)references the module class .sentforge\.modules\..*trust_remote_code=True"
    with pytest.raises(ValueError, match=refusal):
        st.SentenceTransformer(str(tmp_path / "m"), device="cpu")
    # With sentforge installed, sentence-transformers imports the module class from it.
    reference = st.SentenceTransformer(str(tmp_path / "m"), device="cpu", trust_remote_code=True)
    np.testing.assert_allclose(reference.encode(CORPUS), ours.encode(CORPUS), atol=1e-6)


@pytest.mark.slow
@needs(MODELS / "paraphrase-MiniLM-L3-v2")
@needs(DATA / "senteval")
def test_real_model_same_500_texts_for_both_savers(tmp_path):
    from sentforge.evaluation.readers.sts import read_stsbenchmark

    pairs = read_stsbenchmark(DATA / STSB_RAW)
    texts = list(dict.fromkeys(pairs.sentences1 + pairs.sentences2))[:500]
    original = str(MODELS / "paraphrase-MiniLM-L3-v2")   # saved by sentence-transformers
    ours = sentforge.load(original)
    ours.prompts = {"query": "query: "}
    ours.save(tmp_path / "by-sentforge")
    # The original directory defines no prompts: there the prompt is given as text.
    by_text = {k: v for k, v in ST_KEYWORDS.items() if k != "prompt_name"} | {"prompt": "query: "}
    for directory, keywords in ((original, by_text), (str(tmp_path / "by-sentforge"), ST_KEYWORDS)):
        theirs = st.SentenceTransformer(directory, device="cpu").encode(texts, **keywords)
        torch.testing.assert_close(sentforge.load(directory).encode(texts, **keywords), theirs, atol=1e-6, rtol=0)
