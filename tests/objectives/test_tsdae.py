"""TSDAE: the decoder sees only the sentence vector, weights are tied, the padding-free batch computes
the padded batch's loss and gradients, the loss falls, training resumes exactly, and the trained
encoder loads in sentence-transformers with identical vectors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import sentforge
from sentforge import build_encoder
from sentforge.data.noise import WordNoise
from sentforge.support.errors import ConfigError
from sentforge.objectives.tsdae import TSDAE
from sentforge.training.trainer import Trainer, TrainingConfig

from conftest import CORPUS, training_losses

SENTENCES = ["the cat sat on the mat", "a dog runs in the park", "how do i reset my password", "the train"]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _objective(model_dir, pooling="cls", seed=0, **options) -> TSDAE:
    torch.manual_seed(seed)
    return TSDAE(build_encoder(model_dir, pooling=pooling), seed=seed, **options)


def _loss(objective: TSDAE, batch=SENTENCES) -> torch.Tensor:
    objective.reset_noise()  # the same noise every call
    return objective(batch)


@pytest.mark.parametrize("packed", [True, False])
def test_decoder_sees_only_the_pooled_vector(tiny_bert_dir, packed):
    objective = _objective(tiny_bert_dir, packed=packed).eval()
    reference = _loss(objective).item()
    pooling = objective.encoder[1]

    def perturb_tokens_after_first(module, args):
        features = args[0]
        tokens = features["token_embeddings"].clone()
        tokens[:, 1:] += 5.0 * torch.randn_like(tokens[:, 1:])
        features["token_embeddings"] = tokens

    handle = pooling.register_forward_pre_hook(perturb_tokens_after_first)
    try:
        assert _loss(objective).item() == pytest.approx(reference, abs=1e-7)
        pooling.modes = ("mean",)  # the same perturbation now reaches the vector, and the loss
        # a tiny random decoder uses the vector weakly: 100x the tolerance above, not a fixed effect size
        assert abs(_loss(objective).item() - reference) > 1e-5
    finally:
        handle.remove()
        pooling.modes = ("cls",)


@pytest.mark.parametrize("packed", [True, False])
def test_cross_attention_has_one_key_per_sentence(tiny_bert_dir, packed):
    """With one key the attention weights are all 1: only the value projection of the sentence vectors
    runs (one row per sentence), never the query and key projections."""
    objective = _objective(tiny_bert_dir, packed=packed).eval()
    seen = {}
    layer = objective.decoder.body.encoder.layer[0].crossattention.self
    handles = [getattr(layer, name).register_forward_hook(
        lambda module, args, out, name=name: seen.setdefault(name, []).append(tuple(args[0].shape)))
        for name in ("query", "key", "value")]
    try:
        _loss(objective)
    finally:
        for handle in handles:
            handle.remove()
    assert seen == {"value": [(len(SENTENCES), 32)]}


def test_one_key_cross_attention_is_transformers_cross_attention(tiny_bert_dir):
    """The one-key block computes what transformers' cross-attention computes, padded and packed."""
    from sentforge.objectives.packed_attention import SentenceSpans, one_key_cross_attention

    objective = _objective(tiny_bert_dir).eval()
    block = objective.decoder.body.encoder.layer[0].crossattention
    torch.manual_seed(0)
    lengths = [3, 1, 4]
    hidden, vectors = torch.randn(len(lengths), 4, 32), torch.randn(len(lengths), 1, 32)
    expected = block(hidden, None, vectors)[0]
    with one_key_cross_attention(objective.decoder.body):
        padded = block(hidden, None, vectors)[0]
        rows = torch.cat([hidden[i, :n] for i, n in enumerate(lengths)])[None]
        spans = SentenceSpans(lengths, torch.device("cpu"))
        packed = block(rows, None, vectors.transpose(0, 1), sentence_spans=spans)[0]
    torch.testing.assert_close(padded, expected, atol=1e-6, rtol=0)
    expected_packed = torch.cat([expected[i, :n] for i, n in enumerate(lengths)])
    torch.testing.assert_close(packed[0], expected_packed, atol=1e-6, rtol=0)
    assert "forward" not in vars(block)  # transformers' own forward is back after the block


def test_packed_cross_attention_mask_allows_only_the_own_sentence_vector(tiny_bert_dir):
    from sentforge.objectives.tsdae_packed import Packed

    packed = Packed([[5, 6, 7], [8], [9, 10]], torch.device("cpu"))
    config = build_encoder(tiny_bert_dir)[0].model.config
    mask = packed.cross_attention_mask(config, torch.float32)[0, 0]
    assert mask.dtype == torch.bool
    assert mask.sum(dim=1).tolist() == [1] * 6
    assert mask.float().argmax(dim=1).tolist() == [0, 0, 0, 1, 2, 2]
    causal = packed.self_attention_mask(config, True, torch.float32)[0, 0]
    assert causal[2].tolist() == [True, True, True, False, False, False]
    assert causal[4].tolist() == [False, False, False, False, True, False]


def _loss_and_grads(objective: TSDAE, batch=SENTENCES) -> tuple[float, dict[str, torch.Tensor], dict[str, float]]:
    loss = _loss(objective, batch)
    loss.backward()
    grads = {name: p.grad.clone() for name, p in objective.named_parameters() if p.grad is not None}
    objective.zero_grad(set_to_none=True)
    return loss.item(), grads, dict(objective.last_stats)


@pytest.mark.parametrize("fixture,pooling", [("tiny_bert_dir", "cls"), ("tiny_t5_dir", "mean")])
@pytest.mark.parametrize("tie", [True, False])
def test_padding_free_batch_equals_padded_batch(request, fixture, pooling, tie):
    """The CPU's packed path and the padded path accelerators take (forced here on the CPU) give the
    same loss, gradients and token count in fp32."""
    objective = _objective(request.getfixturevalue(fixture), pooling, tie=tie).eval()
    batch = SENTENCES + ["", "a much longer sentence about the weather and the train that leaves at noon"]
    results = []
    for packed in (True, False):
        objective.packed = packed
        results.append(_loss_and_grads(objective, batch))
    (packed_loss, packed_grads, packed_stats), (padded_loss, padded_grads, padded_stats) = results
    assert packed_loss == pytest.approx(padded_loss, abs=1e-5)
    assert packed_grads.keys() == padded_grads.keys()
    for name, grad in packed_grads.items():
        torch.testing.assert_close(grad, padded_grads[name], atol=1e-5, rtol=0, msg=name)
        assert grad.layout == torch.strided  # the sparse lookups fold into ordinary dense gradients
    assert packed_stats == padded_stats


def test_token_count_is_the_padded_batch_real_positions(tiny_bert_dir):
    """`tokens` (counted on the host) = real encoder positions + real decoder targets of the padded batch."""
    objective = _objective(tiny_bert_dir)
    objective(SENTENCES)
    objective.reset_noise()
    rng = objective._rng()
    noisy = [objective.noise(text, rng) for text in SENTENCES]
    tokenizer = objective.encoder[0].tokenizer
    encoder_tokens = tokenizer(noisy, padding=True, return_tensors="pt")["attention_mask"].sum().item()
    decoder_targets = sum(len(tokenizer(text)["input_ids"]) - 1 for text in SENTENCES)  # [CLS] is never a target
    assert objective.last_stats["tokens"] == encoder_tokens + decoder_targets


def test_the_device_decides_the_attention_path(tiny_bert_dir, tiny_t5_dir, monkeypatch):
    from sentforge.objectives import tsdae_packed

    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    for model_dir, pooling in ((tiny_bert_dir, "cls"), (tiny_t5_dir, "mean")):
        objective = _objective(model_dir, pooling)
        assert objective.packed is None
        assert objective.packs(cpu) and not objective.packs(cuda)
        assert objective.packs(torch.device("mps")) is False
    assert _objective(tiny_bert_dir, packed=True).packs(cuda)
    assert not _objective(tiny_bert_dir, packed=False).packs(cpu)
    objective = _objective(tiny_bert_dir)
    objective.position_start = None  # a family packing does not support: padded everywhere
    assert not objective.packs(cpu)

    # On the CPU the default runs packed: BERT attends sentence by sentence (the spans of the encoder's
    # and the decoder's packed batch are built), T5 under block-diagonal masks.
    from sentforge.objectives import packed_attention

    built, spans = [], []
    original = tsdae_packed.Packed.self_attention_mask
    monkeypatch.setattr(tsdae_packed.Packed, "self_attention_mask",
                        lambda self, *args: built.append(args) or original(self, *args))
    original_spans = packed_attention.SentenceSpans.__init__
    monkeypatch.setattr(packed_attention.SentenceSpans, "__init__",
                        lambda self, *args: spans.append(args) or original_spans(self, *args))
    _objective(tiny_bert_dir)(SENTENCES)
    assert (len(spans), len(built)) == (2, 0)  # encoder and decoder
    _objective(tiny_t5_dir, "mean")(SENTENCES)
    assert (len(spans), len(built)) == (2, 2)
    spans.clear(), built.clear()
    _objective(tiny_bert_dir, packed=False)(SENTENCES)
    assert (len(spans), len(built)) == (0, 0)  # the padded path builds neither


def test_tied_weights_share_storage(tiny_bert_dir):
    tied = _objective(tiny_bert_dir)
    encoder_model, body = tied.encoder[0].model, tied.decoder.body
    query = encoder_model.encoder.layer[1].attention.self.query.weight
    assert body.encoder.layer[1].attention.self.query.weight is query
    embedding = encoder_model.get_input_embeddings().weight
    assert tied.decoder.projection_weight is embedding
    assert tied.decoder.head.predictions.decoder.weight.data_ptr() == embedding.data_ptr()
    shared = {p.data_ptr() for p in encoder_model.parameters()}
    own = [name for name, p in body.named_parameters() if p.data_ptr() not in shared]
    assert own and all("crossattention" in name for name in own)

    untied = _objective(tiny_bert_dir, tie=False)
    encoder_params = {p.data_ptr() for p in untied.encoder.parameters()}
    assert not encoder_params & {p.data_ptr() for p in untied.decoder.parameters()}
    assert untied.decoder.head.predictions.decoder.weight is untied.decoder.body.get_input_embeddings().weight
    torch.testing.assert_close(untied.decoder.body.encoder.layer[0].output.dense.weight,
                               untied.encoder[0].model.encoder.layer[0].output.dense.weight)


def test_t5_decoder_ties_self_attention_and_feed_forward(tiny_t5_dir):
    objective = _objective(tiny_t5_dir, "mean")
    encoder_blocks, decoder_blocks = objective.encoder[0].model.encoder.block, objective.decoder.body.block
    assert decoder_blocks[1].layer[0].SelfAttention.q.weight is encoder_blocks[1].layer[0].SelfAttention.q.weight
    assert decoder_blocks[0].layer[2].DenseReluDense.wi.weight is encoder_blocks[0].layer[1].DenseReluDense.wi.weight
    assert decoder_blocks[0].layer[1].EncDecAttention.q.weight is not encoder_blocks[0].layer[0].SelfAttention.q.weight
    assert objective.decoder.projection_weight is objective.encoder[0].model.shared.weight


@pytest.mark.parametrize("fixture,pooling", [("tiny_bert_dir", "cls"), ("tiny_t5_dir", "mean")])
def test_loss_falls_on_a_tiny_corpus(request, fixture, pooling):
    objective = _objective(request.getfixturevalue(fixture), pooling).train()
    losses = training_losses(objective, torch.optim.AdamW(objective.parameters(), lr=1e-2), steps=30)
    assert np.mean(losses[-4:]) < 0.75 * np.mean(losses[:4])


def test_noise_is_applied_fresh_and_reproducibly(tiny_bert_dir):
    seen = []

    def recording_noise(text, rng):
        noisy = WordNoise("delete", 0.6)(text, rng)
        seen.append(noisy)
        return noisy

    objective = _objective(tiny_bert_dir, noise=recording_noise)
    objective(SENTENCES)
    objective(SENTENCES)
    first, second = seen[:4], seen[4:]
    assert first != second  # a new draw every batch
    objective.reset_noise()
    objective(SENTENCES)
    assert seen[8:] == first  # the draw counter (saved with the objective) fixes the noise
    assert "noise_draws" in objective.state_dict()


def test_bad_configurations_are_refused(tiny_bert_dir):
    with pytest.raises(ConfigError, match="hidden size"):
        TSDAE(build_encoder(tiny_bert_dir, pooling=["cls", "mean"]))
    with pytest.raises(ConfigError, match="unknown noise type"):
        TSDAE(build_encoder(tiny_bert_dir), noise="scramble")
    with pytest.raises(ConfigError, match="sentences"):
        TSDAE(build_encoder(tiny_bert_dir))([1, 2])


def _train(model_dir, output, steps, resume=False, checkpoint_every=None):
    objective = _objective(model_dir)
    config = TrainingConfig(output_dir=output, steps=steps, batch_size=4, lr=1e-3, optimizer="adamw",
                            schedule="constant", checkpoint_every=checkpoint_every, resume=resume, seed=3,
                            show_progress=False)
    Trainer(objective.encoder, objective, CORPUS, config).train()
    return objective.encoder


def test_resumed_training_ends_with_the_same_weights(tiny_bert_dir, tmp_path):
    straight = _train(tiny_bert_dir, tmp_path / "a", steps=4)
    _train(tiny_bert_dir, tmp_path / "b", steps=2, checkpoint_every=2)
    resumed = _train(tiny_bert_dir, tmp_path / "b", steps=4, resume=True, checkpoint_every=2)
    for (name, a), b in zip(straight.state_dict().items(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, atol=0, rtol=0, msg=name)


def test_trained_model_loads_in_sentence_transformers_with_identical_vectors(tiny_bert_dir, tmp_path):
    st = pytest.importorskip("sentence_transformers")
    encoder = _train(tiny_bert_dir, None, steps=3)
    before = build_encoder(tiny_bert_dir, pooling="cls").encode(CORPUS)
    encoder.save(tmp_path / "tsdae")
    ours = sentforge.load(tmp_path / "tsdae").encode(CORPUS)
    assert not np.allclose(ours, before, atol=1e-4)  # training changed the encoder
    theirs = st.SentenceTransformer(str(tmp_path / "tsdae"), device="cpu").encode(CORPUS, convert_to_numpy=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
