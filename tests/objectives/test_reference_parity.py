"""sentforge's objectives compute what sentence-transformers' reference losses compute.

For each pair (TSDAE / DenoisingAutoEncoderLoss, CT / ContrastiveTensionLoss, SimCSE and MNRL /
MultipleNegativesRankingLoss, cosine regression / CosineSimilarityLoss, MarginMSE / MarginMSELoss): both sides
start from the same weights (parts that each side initialises on its own, such as the decoder's cross-attention and
LM-head transform, are copied from sentforge to the reference), see the same batch and the same noise, and must
agree on the loss (1e-5), on every gradient (1e-4) and, after 5 optimizer steps, on every weight (1e-4).

Intended differences, shown equivalent here:
- TSDAE's padding-free (packed) batch computes the padded batch's loss: both modes are checked.
- On the CPU sentforge runs a training batch in length-sorted chunks (tests/objectives/test_length_chunks.py shows
  it computes the padded batch). Where dropout is on, the test keeps sentforge's batch padded, as the
  reference's is, so that the same seed draws the same dropout masks on both sides; with dropout off the
  chunked batch is compared with the reference directly.
- CT averages the binary cross-entropy over the batch, the reference sums it: the reference loss is
  B times sentforge's, and the optimizer steps compare sentforge's loss scaled by B.
- sentforge's CT is the paired loss of the paper (ContrastiveTensionLoss), not the reference's in-batch
  variant (ContrastiveTensionLossInBatchNegatives), which is a different objective.
"""

from __future__ import annotations

import pytest
import torch

from sentforge import build_encoder
from sentforge.objectives.contrastive import ContrastiveLoss
from sentforge.objectives.ct import ContrastiveTension
from sentforge.objectives.margin_mse import MarginMSE
from sentforge.objectives.regression import CosineRegression
from sentforge.objectives.tsdae import TSDAE

st = pytest.importorskip("sentence_transformers")
st_losses = pytest.importorskip("sentence_transformers.sentence_transformer.losses")
st_modules = pytest.importorskip("sentence_transformers.sentence_transformer.modules")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

LOSS_TOL, GRAD_TOL, WEIGHT_TOL = 1e-5, 1e-4, 1e-4
STEPS, LR = 5, 1e-3
SENTENCES = ["the cat sat on the mat", "a dog runs in the park", "how do i reset my password",
             "the weather is nice today", "my invoice shows a double charge", "the app crashes on start",
             "a man is playing a guitar", "two women are walking on the beach"]
# A fixed "noisy" version of each sentence: both sides decode the same corrupted input.
NOISY = {text: " ".join(text.split()[::2]) for text in SENTENCES}


def _pair(model_dir, pooling: str):
    """(sentforge encoder, sentence-transformers model) over the same checkpoint and pooling."""
    ours = build_encoder(model_dir, pooling=pooling)
    transformer = st_modules.Transformer(str(model_dir))
    theirs = st.SentenceTransformer(modules=[transformer, st_modules.Pooling(
        transformer.get_word_embedding_dimension(), pooling_mode=pooling)], device="cpu")
    _assert_same(ours[0].model.named_parameters(), theirs[0].auto_model.named_parameters(), 0, "initial weight")
    return ours, theirs


def _features(model, texts):
    return model.tokenize(list(texts))


def _assert_same(ours, theirs, tol, what):
    ours, theirs = dict(ours), dict(theirs)
    assert ours.keys() == theirs.keys()
    for name, value in ours.items():
        torch.testing.assert_close(value, theirs[name], atol=tol, rtol=0, msg=f"{what} {name}")


def _grads(module):
    return {name: param.grad if param.grad is not None else torch.zeros_like(param)
            for name, param in module.named_parameters()}


def _weights(module):
    return {name: param.detach() for name, param in module.named_parameters()}


def _parity(ours_loss, theirs_loss, pairs, scale=1.0):
    """Run `STEPS` AdamW steps on both sides; the first step checks loss and gradients.

    ours_loss / theirs_loss: callables that compute each side's loss; pairs: callables returning the
    (sentforge module, reference module) whose parameters are compared by name.
    """
    ours_params = {id(p): p for ours, _ in pairs for p in ours().parameters()}
    theirs_params = {id(p): p for _, theirs in pairs for p in theirs().parameters()}
    ours_opt = torch.optim.AdamW(ours_params.values(), lr=LR, weight_decay=0.0)
    theirs_opt = torch.optim.AdamW(theirs_params.values(), lr=LR, weight_decay=0.0)
    for step in range(STEPS):
        torch.manual_seed(step)
        ours = ours_loss() * scale
        torch.manual_seed(step)
        theirs = theirs_loss()
        if step == 0:
            assert abs(ours.item() - theirs.item()) <= LOSS_TOL * max(1.0, scale), (ours.item(), theirs.item())
        ours.backward()
        theirs.backward()
        if step == 0:
            for a, b in pairs:
                _assert_same(_grads(a()), _grads(b()), GRAD_TOL, "gradient")
        ours_opt.step(), theirs_opt.step()
        ours_opt.zero_grad(), theirs_opt.zero_grad()
    for a, b in pairs:
        _assert_same(_weights(a()), _weights(b()), WEIGHT_TOL, f"weight after {STEPS} steps")


@pytest.mark.parametrize("packed", [True, False])
def test_tsdae_equals_denoising_auto_encoder_loss(tiny_bert_dir, packed):
    ours_encoder, theirs_model = _pair(tiny_bert_dir, "cls")
    ours = TSDAE(ours_encoder, noise=lambda text, rng: NOISY[text], packed=packed).eval()
    theirs = st_losses.DenoisingAutoEncoderLoss(theirs_model, tie_encoder_decoder=True).eval()
    # Newly initialised on each side: cross-attention and the LM head's transform. Copy ours over.
    with torch.no_grad():
        _copy_into(theirs.decoder.bert, ours.decoder.body)
        _copy_into(theirs.decoder.cls, ours.decoder.head)
    _assert_same(_weights(ours.decoder.body), _weights(theirs.decoder.bert), 0, "initial decoder weight")
    batch = SENTENCES[:6]

    def theirs_loss():
        source = _features(theirs_model, [NOISY[t] for t in batch])
        return theirs([source, _features(theirs_model, batch)], None)

    _parity(lambda: ours(batch), theirs_loss, [
        (lambda: ours.encoder[0].model, lambda: theirs_model[0].auto_model),
        (lambda: ours.decoder.body, lambda: theirs.decoder.bert),
        (lambda: ours.decoder.head, lambda: theirs.decoder.cls)])


def _copy_into(target: torch.nn.Module, source: torch.nn.Module) -> None:
    sources = dict(source.named_parameters())
    for name, param in target.named_parameters():
        param.copy_(sources[name])


def test_ct_equals_contrastive_tension_loss(tiny_bert_dir):
    ours_encoder, theirs_model = _pair(tiny_bert_dir, "mean")
    ours_encoder.length_chunked = False  # dropout on: see the module docstring
    ours = ContrastiveTension(ours_encoder, negatives=3, seed=0).train()
    theirs = st_losses.ContrastiveTensionLoss(theirs_model).train()
    batch = SENTENCES

    def ours_loss():
        draw = int(ours.pair_draws)
        first, second, labels = ours.pairs(batch)
        ours.reset_pairs(draw)  # forward draws the same pairs again
        ours_loss.pairs = first, second, labels
        return ours(batch)

    def theirs_loss():
        first, second, labels = ours_loss.pairs
        assert 0 < labels.sum() < len(batch)  # both positives and negatives
        return theirs([_features(theirs_model, first), _features(theirs_model, second)], None)

    # Dropout is on: both sides run the same modules on the same shapes in the same order.
    _parity(ours_loss, theirs_loss, [
        (lambda: ours.first[0].model, lambda: theirs.model1[0].auto_model),
        (lambda: ours.encoder[0].model, lambda: theirs.model2[0].auto_model)], scale=len(batch))


def test_simcse_equals_mnrl_on_identical_pairs(tiny_bert_dir):
    ours_encoder, theirs_model = _pair(tiny_bert_dir, "cls")
    ours_encoder.length_chunked = False  # dropout on: see the module docstring
    ours = ContrastiveLoss(ours_encoder, temperature=0.05, similarity="cosine").train()
    theirs = st_losses.MultipleNegativesRankingLoss(theirs_model, scale=20.0).train()
    batch = SENTENCES
    features = _features(theirs_model, batch + batch)

    def theirs_loss():
        # Dropout is on. sentforge encodes both views in one pass (the reference's forward runs its
        # first column separately), so the reference's loss gets the views of one pass of its model:
        # the same seed then gives the same dropout masks, and the two views still differ.
        views = theirs_model(dict(features))["sentence_embedding"].chunk(2)
        assert (views[0] - views[1]).abs().max() > 1e-3
        return theirs.compute_loss_from_embeddings(list(views), None)

    _parity(lambda: ours(batch), theirs_loss, [
        (lambda: ours.encoder[0].model, lambda: theirs_model[0].auto_model)])


def test_mnrl_with_hard_negatives_equals_multiple_negatives_ranking_loss(tiny_bert_dir):
    ours_encoder, theirs_model = _pair(tiny_bert_dir, "mean")
    # Dropout off: the reference embeds its anchor column in a pass of its own.
    ours = ContrastiveLoss(ours_encoder, temperature=1 / 20.0, similarity="cosine").eval()
    theirs = st_losses.MultipleNegativesRankingLoss(theirs_model, scale=20.0).eval()
    batch = [(SENTENCES[i], SENTENCES[(i + 1) % 8], SENTENCES[(i + 4) % 8]) for i in range(6)]
    columns = [_features(theirs_model, column) for column in zip(*batch)]
    _parity(lambda: ours(batch), lambda: theirs(columns, None), [
        (lambda: ours.encoder[0].model, lambda: theirs_model[0].auto_model)])


def test_cosine_regression_equals_cosine_similarity_loss(tiny_bert_dir):
    ours_encoder, theirs_model = _pair(tiny_bert_dir, "mean")
    # Dropout off: the reference embeds each column in a pass of its own.
    ours = CosineRegression(ours_encoder, score_max=5.0).eval()
    theirs = st_losses.CosineSimilarityLoss(theirs_model).eval()
    batch = [(SENTENCES[i], SENTENCES[7 - i], float(i % 6)) for i in range(6)]
    columns = [_features(theirs_model, [a for a, _, _ in batch]), _features(theirs_model, [b for _, b, _ in batch])]
    labels = torch.tensor([score / 5.0 for _, _, score in batch])
    _parity(lambda: ours(batch), lambda: theirs(columns, labels), [
        (lambda: ours.encoder[0].model, lambda: theirs_model[0].auto_model)])


def test_margin_mse_equals_margin_mse_loss(tiny_bert_dir):
    ours_encoder, theirs_model = _pair(tiny_bert_dir, "mean")
    # Dropout off: the reference embeds each column in a pass of its own.
    ours = MarginMSE(ours_encoder).eval()
    theirs = st_losses.MarginMSELoss(theirs_model).eval()
    # Margins of both signs and sizes, none the student's own: the loss and its gradients are far from zero.
    batch = [(SENTENCES[i], SENTENCES[(i + 1) % 8], SENTENCES[(i + 4) % 8], 3.0 * i - 7.5) for i in range(6)]
    columns = [_features(theirs_model, column) for column in list(zip(*batch))[:3]]
    margins = torch.tensor([margin for *_, margin in batch])
    assert ours(batch).item() > 1.0
    _parity(lambda: ours(batch), lambda: theirs(columns, margins), [
        (lambda: ours.encoder[0].model, lambda: theirs_model[0].auto_model)])
