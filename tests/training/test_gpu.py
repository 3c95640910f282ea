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

    from sentforge.objectives import tsdae_packed

    objective = _tsdae(tiny_bert_dir).eval()
    assert not objective.packs(objective.encoder.device)
    built = []
    original = tsdae_packed.Packed.self_attention_mask
    tsdae_packed.Packed.self_attention_mask = lambda self, *args: built.append(args) or original(self, *args)
    try:
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):  # no math kernel
            objective.reset_noise()
            padded = objective(SENTENCES)
            padded.backward()
    finally:
        tsdae_packed.Packed.self_attention_mask = original
    assert not built  # no block-diagonal masks on the GPU
    objective.zero_grad(set_to_none=True)
    objective.packed = True
    objective.reset_noise()
    assert objective(SENTENCES).item() == pytest.approx(padded.item(), abs=1e-4)


def test_tsdae_trains_on_cuda_under_bf16_autocast(tiny_bert_dir):
    objective = _tsdae(tiny_bert_dir)
    config = TrainingConfig(steps=12, batch_size=4, lr=1e-3, log_every=5, device="cuda", show_progress=False)
    result = Trainer(objective.encoder, objective, CORPUS, config).train()
    assert len(result.losses) == 12 and all(np.isfinite(result.losses))
    assert np.mean(result.losses[-3:]) < np.mean(result.losses[:3])


def test_pinned_copies_arrive_intact():
    from sentforge.support.device import to_device, to_device_all

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


# Steps whose whole work runs under the sync watch: not the first (set-up), not the last (the final read).
SYNC_WATCHED = range(2, 5)


def _sync_warnings_during_steps(train) -> list:
    """The synchronising-CUDA-operation warnings raised while steps SYNC_WATCHED run (the callback after
    step s switches the watch on for step s + 1), with a control sync that must be caught."""
    import warnings

    def watch(state) -> None:
        torch.cuda.set_sync_debug_mode("warn" if state.step + 1 in SYNC_WATCHED else "default")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            train(watch)
            torch.cuda.set_sync_debug_mode("warn")
            int(torch.ones((), device=CUDA))  # the control: a read here must be reported, from this file
        finally:
            torch.cuda.set_sync_debug_mode("default")
    syncs = [w for w in caught if "synchroniz" in str(w.message)]
    assert any(w.filename == __file__ for w in syncs), "the sync watch caught nothing: cannot tell"
    return [w for w in syncs if w.filename != __file__]


@pytest.mark.parametrize("method", ["tsdae", "ct", "mlm", "mnrl", "simcse", "sts", "pause"])
def test_training_steps_read_nothing_back_from_the_gpu(tiny_bert_dir, tmp_path, method):
    """No per-step host synchronisation in sentforge's code: a step's numbers stay on the device
    until a logging step (the transformers model itself may still read its padding mask)."""
    import sentforge
    from sentforge.objectives.pause import PAUSE

    steps = max(SYNC_WATCHED) + 2
    settings = {"steps": steps, "batch_size": 4, "device": "cuda", "log_every": 1000, "show_progress": False}

    def train(watch) -> None:
        if method == "pause":
            torch.manual_seed(0)
            objective = PAUSE(build_encoder(tiny_bert_dir), ["duplicate"], total_steps=steps)
            data = [(a, b, "duplicate" if i % 2 else None) for i, (a, b) in enumerate(zip(CORPUS, CORPUS[1:]))]
            Trainer(objective.encoder, objective, data, TrainingConfig(**settings), callbacks=[watch]).train()
            return
        pairs = list(zip(CORPUS, CORPUS[1:]))
        scored = [(a, b, float(i % 6)) for i, (a, b) in enumerate(pairs)]
        data = {"mnrl": pairs, "sts": scored}.get(method, list(CORPUS))
        sentforge.train(method, tiny_bert_dir, data, tmp_path / method, callbacks=[watch], **settings)

    ours = [f"{w.filename}:{w.lineno}" for w in _sync_warnings_during_steps(train) if "/sentforge/" in w.filename]
    assert not ours
