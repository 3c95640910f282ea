"""CUDA-only code paths: the padded TSDAE batch with fused attention kernels, accelerator reads of the
per-step numbers, pinned host-to-device copies, half-precision encode. Skipped without a CUDA device
(CI is CPU-only); the CPU halves of these paths are tested in test_tsdae.py, test_trainer.py and
test_dtype.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sentforge import build_encoder
from sentforge.objectives.tsdae import TSDAE
from sentforge.training.trainer import Trainer, TrainingConfig

from conftest import CORPUS

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]
CUDA = torch.device("cuda")
SENTENCES = ["the cat sat on the mat", "a dog runs in the park", "how do i reset my password", "the train"]


def _tsdae(model_dir, **options) -> TSDAE:
    torch.manual_seed(0)
    return TSDAE(build_encoder(model_dir, pooling="cls"), **options).to(CUDA)


def test_tsdae_runs_padded_on_cuda_with_fused_kernels_only(tiny_bert_dir):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from sentforge.objectives import tsdae

    objective = _tsdae(tiny_bert_dir).eval()
    assert not objective.packs(objective.encoder.device)
    built = []
    original = tsdae._Packed.self_attention_mask
    tsdae._Packed.self_attention_mask = lambda self, *args: built.append(args) or original(self, *args)
    try:
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):  # no math kernel
            objective.noise_draws.zero_()
            padded = objective(SENTENCES)
            padded.backward()
    finally:
        tsdae._Packed.self_attention_mask = original
    assert not built  # no block-diagonal masks on the GPU
    objective.zero_grad(set_to_none=True)
    objective.packed = True
    objective.noise_draws.zero_()
    assert objective(SENTENCES).item() == pytest.approx(padded.item(), abs=1e-4)


def test_tsdae_trains_on_cuda_under_bf16_autocast(tiny_bert_dir):
    objective = _tsdae(tiny_bert_dir)
    config = TrainingConfig(steps=12, batch_size=4, lr=1e-3, log_every=5, device="cuda", show_progress=False)
    result = Trainer(objective.encoder, objective, CORPUS, config).train()
    assert len(result.losses) == 12 and all(np.isfinite(result.losses))
    assert np.mean(result.losses[-3:]) < np.mean(result.losses[:3])


def test_pinned_copies_arrive_intact():
    from sentforge.device import to_device, to_device_all

    host = torch.arange(1000)
    assert torch.equal(to_device(host, CUDA).cpu(), host)
    features = to_device_all({"input_ids": host[None], "attention_mask": torch.ones(1, 1000, dtype=torch.long)}, CUDA)
    assert all(value.device.type == "cuda" for value in features.values())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_encode_on_cuda(tiny_bert_dir, dtype):
    encoder = build_encoder(tiny_bert_dir).to(CUDA)
    reference = encoder.encode(CORPUS)
    vectors = encoder.encode(CORPUS, dtype=dtype)
    cosine = (vectors * reference).sum(1) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1))
    assert vectors.dtype == np.float32 and cosine.min() >= 0.999
    assert {p.dtype for p in encoder.parameters()} == {torch.float32}


def test_adamw_is_fused_when_every_parameter_is_on_cuda():
    from sentforge.training.optim import build_optimizer, parameter_groups

    module = torch.nn.Linear(4, 4).cuda()
    assert build_optimizer(parameter_groups(module, 0.01), "adamw", lr=1e-3).defaults["fused"] is True
    assert not build_optimizer(module.parameters(), "adamw", lr=1e-3, foreach=True).defaults["fused"]
