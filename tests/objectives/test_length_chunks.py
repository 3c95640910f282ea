"""Training batches in length-sorted chunks (`Encoder.embed`, `length_chunks`) compute the padded batch.

Every objective whose texts are encoded independently gets the same loss and the same gradient of every
parameter (1e-5) whether its batch runs padded or in length-homogeneous chunks, on tiny random models of
the BERT and T5 families. Dropout is off in these comparisons (eval mode): the chunks draw their dropout
masks in other shapes and another order than the padded batch. With dropout on, the same seed and the
same batch give the same chunks and so the same draws: the run repeats exactly.
"""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
import torch

from sentforge import build_encoder
from sentforge.encoder import length_chunks
from sentforge.objectives.contrastive import ContrastiveLoss
from sentforge.objectives.ct import ContrastiveTension
from sentforge.objectives.distillation import MSEDistillation
from sentforge.objectives.pause import PAUSE
from sentforge.objectives.regression import CosineRegression

from conftest import CORPUS

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TOL = 1e-5  # absolute and relative (float32 rounding of losses far from 1)
# Lengths that differ a lot, so that the batch is cut into several chunks.
TEXTS = ["hi", "the cat sat on the mat and the dog runs in the park where a man is playing a guitar",
         "a dog runs", "how do i reset my password", "the weather is nice today my invoice shows a double charge",
         "the app crashes", "a man is playing a guitar", "two women are walking on the beach the train leaves at noon",
         "please cancel", "where can i change the language a child eats an apple"]
# Small enough a chunk cost that these texts run in several chunks.
CHUNK_COST = 4


def _cost(widths: np.ndarray, cuts: tuple[int, ...], chunk_cost: float) -> float:
    bounds = [0, *cuts, len(widths)]
    return sum((end - start) * widths[start] + chunk_cost for start, end in zip(bounds, bounds[1:]))


@pytest.mark.parametrize("chunk_cost", [0, 3, 20, 1000])
def test_length_chunks_find_the_cheapest_cut(chunk_cost):
    rng = np.random.default_rng(chunk_cost)
    for _ in range(20):
        lengths = rng.integers(1, 40, size=int(rng.integers(1, 9)))
        chunks = length_chunks(lengths, chunk_cost)
        order = np.concatenate(chunks)
        assert sorted(order.tolist()) == list(range(len(lengths)))  # every row once
        assert list(lengths[order]) == sorted(lengths, reverse=True)  # longest first
        # Every way to cut the sorted texts, tried one by one.
        widths = np.sort(lengths)[::-1]
        least = min(_cost(widths, cuts, chunk_cost) for k in range(len(widths))
                    for cuts in itertools.combinations(range(1, len(widths)), k))
        found = np.cumsum([len(c) for c in chunks])[:-1]
        assert _cost(widths, tuple(found), chunk_cost) == pytest.approx(least)


def test_length_chunks_extremes_and_ties():
    assert [c.tolist() for c in length_chunks([5, 5, 5], 0)] == [[0, 1, 2]]  # a cut that saves nothing is not made
    assert [c.tolist() for c in length_chunks([3, 9, 3, 9], 10**6)] == [[1, 3, 0, 2]]  # one chunk, ties in order
    assert [len(c) for c in length_chunks([40, 2, 2, 2, 2], 5)] == [1, 4]


def _encoders(family, tiny_bert_dir, tiny_t5_dir):
    """(padded, chunked) copies of one encoder of the family."""
    builds = {"bert-mean": dict(model=tiny_bert_dir, pooling="mean", normalize=True),
              "bert-cls": dict(model=tiny_bert_dir, pooling="cls", projection_dim=16),
              "t5-mean": dict(model=tiny_t5_dir, pooling="mean", projection_dim=16, normalize=True),
              "t5-encdec": dict(model=tiny_t5_dir, backbone="t5-encdec", pooling="first")}
    padded = build_encoder(**builds[family])
    chunked = copy.deepcopy(padded)
    padded.length_chunked, chunked.length_chunked = False, True
    chunked.chunk_cost_tokens = CHUNK_COST
    return padded, chunked


def _grads(module):
    return {name: p.grad for name, p in module.named_parameters() if p.grad is not None}


OBJECTIVES = {
    "mnrl-hard-negatives": (lambda e: ContrastiveLoss(e, temperature=0.05),
                            [(TEXTS[i], TEXTS[(i + 3) % 10], TEXTS[(i + 6) % 10]) for i in range(8)]),
    "simcse": (lambda e: ContrastiveLoss(e, temperature=0.05), TEXTS),
    "symmetric-dot": (lambda e: ContrastiveLoss(e, similarity="dot", symmetric=True),
                      [(TEXTS[i], TEXTS[9 - i]) for i in range(8)]),
    "ct": (lambda e: ContrastiveTension(e, negatives=3, seed=1), TEXTS),
    "sts": (lambda e: CosineRegression(e), [(TEXTS[i], TEXTS[9 - i], float(i % 6)) for i in range(8)]),
    "pause": (lambda e: PAUSE(e, ["yes", "no"], total_steps=10),
              [(TEXTS[i], TEXTS[9 - i], ("yes", "no", None)[i % 3]) for i in range(9)]),
}


def _loss_and_grads(objective, batch):
    objective.eval()  # dropout off: see the module docstring
    torch.manual_seed(0)  # PAUSE's head and the like: the same initial weights on both sides
    loss = objective(batch)
    loss.backward()
    return loss.detach(), _grads(objective)


@pytest.mark.parametrize("family", ["bert-mean", "bert-cls", "t5-mean", "t5-encdec"])
@pytest.mark.parametrize("name", list(OBJECTIVES))
def test_chunked_batch_has_the_padded_loss_and_gradients(name, family, tiny_bert_dir, tiny_t5_dir):
    if family.startswith("t5") and name in ("ct", "pause"):
        pytest.skip("one family is enough for these objectives")
    build, batch = OBJECTIVES[name]
    padded, chunked = _encoders(family, tiny_bert_dir, tiny_t5_dir)
    ids = chunked.input_module.token_ids(TEXTS)[0]
    assert len(length_chunks([len(x) for x in ids], CHUNK_COST)) >= 3
    torch.manual_seed(0)
    ours = build(chunked)
    torch.manual_seed(0)
    reference = build(padded)
    loss, grads = _loss_and_grads(ours, batch)
    reference_loss, reference_grads = _loss_and_grads(reference, batch)
    torch.testing.assert_close(loss, reference_loss, atol=TOL, rtol=TOL)
    assert grads.keys() == reference_grads.keys() and grads
    for key, grad in grads.items():
        torch.testing.assert_close(grad, reference_grads[key], atol=TOL, rtol=TOL, msg=key)


def test_distillation_and_vectors_in_batch_order(tiny_bert_dir, tiny_t5_dir):
    padded, chunked = _encoders("t5-mean", tiny_bert_dir, tiny_t5_dir)
    padded.eval(), chunked.eval()
    with torch.no_grad():
        vectors = chunked.embed(TEXTS)
    torch.testing.assert_close(vectors, padded.embed(TEXTS).detach(), atol=TOL, rtol=TOL)
    vectors = dict(zip(TEXTS, np.random.default_rng(0).normal(size=(len(TEXTS), 16)).astype(np.float32)))

    def targets(texts):
        return np.stack([vectors[text] for text in texts])

    loss, grads = _loss_and_grads(MSEDistillation(chunked, targets), TEXTS)
    reference_loss, reference_grads = _loss_and_grads(MSEDistillation(padded, targets), TEXTS)
    torch.testing.assert_close(loss, reference_loss, atol=TOL, rtol=TOL)
    for key, grad in grads.items():
        torch.testing.assert_close(grad, reference_grads[key], atol=TOL, rtol=TOL, msg=key)


def test_dropout_draws_repeat_with_the_seed(tiny_bert_dir):
    encoder = build_encoder(tiny_bert_dir, pooling="mean")
    encoder.chunk_cost_tokens = CHUNK_COST
    objective = ContrastiveLoss(encoder).train()
    losses = []
    for _ in range(2):
        torch.manual_seed(7)
        losses.append(objective(TEXTS).item())
    torch.manual_seed(8)
    assert losses[0] == losses[1] != objective(TEXTS).item()


def test_the_device_decides(tiny_bert_dir):
    encoder = build_encoder(tiny_bert_dir, pooling="mean")
    assert encoder.splits_by_length(torch.device("cpu"))
    assert not encoder.splits_by_length(torch.device("cuda"))  # fused attention prefers the padded batch
    encoder.length_chunked = False
    assert not encoder.splits_by_length(torch.device("cpu"))
    encoder.length_chunked = True
    assert encoder.splits_by_length(torch.device("cuda"))


def test_word_vectors_stay_padded():
    from sentforge.encoder import Encoder
    from sentforge.modules import Pooling, WordVectors

    words = sorted({word for text in CORPUS for word in text.split()})
    vectors = np.random.default_rng(0).normal(size=(len(words), 8)).astype(np.float32)
    encoder = Encoder([WordVectors(words, vectors), Pooling(8)])
    assert not encoder.splits_by_length(torch.device("cpu"))  # a lookup: padding costs next to nothing
