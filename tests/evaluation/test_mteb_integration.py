"""The MTEB adapter: correct model metadata, and an MTEB task run on local data scores what
`sentforge eval` scores on the same data."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import CORPUS, DATA, bag_of_words, needs

import sentforge
from sentforge import build_encoder
from sentforge.evaluation.readers.sts import (
    STSB_RAW,
    STSPairs,
    keep_text,
    read_stsbenchmark,
)
from sentforge.evaluation.scoring import sts_scores
from sentforge.integrations.task_names import TASK_ALIASES, mteb_names, sentforge_names

mteb = pytest.importorskip("mteb")
from sentforge.integrations.mteb import MTEBEncoder, with_local_data  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _mteb_spearman(model, pairs: STSPairs) -> float:
    task = with_local_data(mteb.get_task("STSBenchmark"), {"test": {
        "sentence1": pairs.sentences1, "sentence2": pairs.sentences2, "score": pairs.scores.tolist()}})
    result = mteb.evaluate(model, task, cache=None, show_progress_bar=False,
                           encode_kwargs={"batch_size": 32, "show_progress_bar": False})
    return 100 * result.task_results[0].get_score()


def test_model_metadata(tiny_bert_dir, tmp_path):
    encoder = build_encoder(tiny_bert_dir, projection_dim=16, normalize=True)
    encoder.save(tmp_path / "my-model")
    loaded = sentforge.load(tmp_path / "my-model")
    meta = MTEBEncoder(loaded).mteb_model_meta
    assert meta.name == "local/my-model" and meta.embed_dim == 16 and meta.max_tokens == 64
    assert meta.n_parameters == sum(p.numel() for p in loaded.parameters())
    # The revision follows the weights: equal weights, equal revision; changed weights, new revision.
    assert meta.revision == MTEBEncoder(encoder).mteb_model_meta.revision
    with torch.no_grad():
        loaded[2].linear.weight[0, 0] += 1
    assert MTEBEncoder(loaded).mteb_model_meta.revision != meta.revision
    assert MTEBEncoder(encoder, name="org/model", revision="v1").mteb_model_meta.name == "org/model"


def test_mteb_sts_task_on_local_data_matches_sentforge(tiny_bert_dir):
    encoder = build_encoder(tiny_bert_dir)
    rng = np.random.default_rng(0)
    first, second = CORPUS[:12], [CORPUS[(i * 5 + 3) % 12] for i in range(12)]
    pairs = STSPairs("local", first, second, rng.uniform(0, 5, size=12).round(1))
    expected = sts_scores(encoder, [pairs])["spearman"]
    assert _mteb_spearman(MTEBEncoder(encoder), pairs) == pytest.approx(expected, abs=1e-9)


@pytest.mark.slow
@needs(DATA / "senteval")
def test_mteb_stsbenchmark_on_the_shared_file_matches_sentforge_eval():
    # Bag-of-words vectors do not depend on how texts are batched (a random tiny BERT's do, at float32
    # rounding, and its near-equal cosines turn that into rank changes).
    encoder = bag_of_words()
    report = sentforge.evaluate(encoder, "STSBenchmark-raw", data_dir=DATA)
    pairs = read_stsbenchmark(DATA / STSB_RAW, keep_text)
    assert len(pairs) == 1379
    assert _mteb_spearman(MTEBEncoder(encoder), pairs) == pytest.approx(
        report["tasks"]["STSBenchmark-raw"]["main_score"], abs=1e-6)


def test_alias_table_names_exist_on_both_sides():
    from sentforge.evaluation.registry import registered_tasks

    ours = {name.lower() for name in registered_tasks()}
    for alias in TASK_ALIASES:
        assert alias.sentforge.lower() in ours, alias.sentforge
        for name in alias.mteb:
            assert mteb.get_task(name).metadata.name == name
    assert mteb_names("sts12") == ("STS12",) and "SICKRelatedness" in sentforge_names("SICK-R")
