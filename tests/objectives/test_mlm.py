"""MLM's packed CPU batch (real tokens end to end, attention per sentence) computes the padded batch."""

from __future__ import annotations

import pytest
import torch

from sentforge import build_encoder
from sentforge.objectives import packed_attention
from sentforge.objectives.mlm import MaskedLanguageModeling
from sentforge.support.errors import ConfigError

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SENTENCES = ["the cat sat on the mat", "a dog runs in the park and barks at every single bird it sees",
             "hi", "how do i reset my password", "the weather is nice today"]


def _loss_and_grads(objective: MaskedLanguageModeling, seed: int) -> tuple[float, dict[str, torch.Tensor]]:
    torch.manual_seed(seed)  # the masking draws: the same positions on both paths
    loss = objective(SENTENCES)
    loss.backward()
    grads = {name: p.grad.clone() for name, p in objective.named_parameters() if p.grad is not None}
    objective.zero_grad(set_to_none=True)
    return loss.item(), grads


def test_packed_batch_equals_padded_batch(tiny_bert_dir):
    objective = MaskedLanguageModeling(build_encoder(tiny_bert_dir, pooling="mean"), mlm_probability=0.4).eval()
    assert objective.packs(torch.device("cpu")) and not objective.packs(torch.device("cuda"))
    for seed in range(3):
        objective.packed = True
        packed_loss, packed_grads = _loss_and_grads(objective, seed)
        objective.packed = False
        padded_loss, padded_grads = _loss_and_grads(objective, seed)
        assert packed_loss == pytest.approx(padded_loss, abs=1e-5)
        assert packed_grads.keys() == padded_grads.keys()
        for name, grad in packed_grads.items():
            torch.testing.assert_close(grad, padded_grads[name], atol=1e-5, rtol=0, msg=name)


def test_cpu_default_runs_packed(tiny_bert_dir, monkeypatch):
    objective = MaskedLanguageModeling(build_encoder(tiny_bert_dir, pooling="mean"))
    spans = []
    original = packed_attention.SentenceSpans.__init__
    monkeypatch.setattr(packed_attention.SentenceSpans, "__init__",
                        lambda self, lengths, device: spans.append(list(lengths)) or original(self, lengths, device))
    objective(SENTENCES)
    tokenizer = objective.encoder[0].tokenizer
    assert spans == [[len(ids) for ids in tokenizer(SENTENCES)["input_ids"]]]
    objective.packed = False
    objective(SENTENCES)
    assert len(spans) == 1  # the padded path builds none


def test_packing_is_refused_where_the_family_has_no_packed_path(tiny_bert_dir):
    encoder = build_encoder(tiny_bert_dir, pooling="mean")
    encoder[0].model.config.position_embedding_type = "relative_key"  # positions that packing cannot restart
    assert not MaskedLanguageModeling(encoder).packs(torch.device("cpu"))
    with pytest.raises(ConfigError, match="packed MLM"):
        MaskedLanguageModeling(encoder, packed=True)
