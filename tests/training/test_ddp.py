"""Distributed data parallel on 2 CPU processes (gloo): the same trajectory as one process with the
whole batch, and in-batch negatives gathered from every process."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from conftest import CORPUS, PairRegression
from torch import nn

from sentforge import build_encoder
from sentforge.support import distributed
from sentforge.objectives import ContrastiveLoss
from sentforge.training.trainer import Trainer, TrainingConfig

PAIRS = [(a, b) for a, b in zip(CORPUS[:12], CORPUS[1:13])]
SCORED = [(a, b, float(i % 3) / 2) for i, (a, b) in enumerate(PAIRS)]
TRIPLES = [(a, b, c) for a, b, c in zip(CORPUS[:12], CORPUS[1:13], CORPUS[5:17])]
STEPS = 5

pytestmark = pytest.mark.usefixtures("one_torch_thread")

OBJECTIVES = {
    "regression": (PairRegression, SCORED),
    "contrastive": (lambda encoder: ContrastiveLoss(encoder, temperature=0.05, symmetric=True), PAIRS),
    "hard-negatives": (lambda encoder: ContrastiveLoss(encoder, temperature=0.05), TRIPLES),
}


def _train(model_dir: str, name: str, batch_size: int, output: Path) -> list[dict]:
    torch.manual_seed(0)
    encoder = build_encoder(model_dir)
    for module in encoder.modules():  # dropout would draw different masks on 1 and 2 processes
        if isinstance(module, nn.Dropout):
            module.p = 0.0
    make, data = OBJECTIVES[name]
    config = TrainingConfig(steps=STEPS, batch_size=batch_size, lr=1e-3, schedule="constant", log_every=1, seed=0,
                            output_dir=output, show_progress=False)
    Trainer(encoder, make(encoder), data, config).train()
    return [json.loads(line) for line in (output / "metrics.jsonl").read_text().splitlines()]


def _worker(rank: int, world: int, port: int, model_dir: str, name: str, batch_size: int, output: str) -> None:
    torch.set_num_threads(1)
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
                       "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank)})
    try:
        _train(model_dir, name, batch_size, Path(output))
        if name == "contrastive":
            # Every process scores its own queries against the positives of both processes.
            encoder = build_encoder(model_dir)
            logits, targets, _ = ContrastiveLoss(encoder).scores(PAIRS[rank * batch_size:(rank + 1) * batch_size])
            shape = {"rank": rank, "queries": logits.shape[0], "candidates": logits.shape[1],
                     "targets": targets.tolist()}
            Path(output, f"scores-{rank}.json").write_text(json.dumps(shape))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _losses(records: list[dict]) -> list[float]:
    return [r["loss"] for r in records if "loss" in r]


@pytest.mark.parametrize("name", list(OBJECTIVES))
def test_two_processes_follow_the_single_process_trajectory(tiny_bert_dir, tmp_path, name):
    b = 2
    single = _train(str(tiny_bert_dir), name, 2 * b, tmp_path / "single")
    assert not distributed.is_distributed()
    # fork: the workers share this process's imports (no second start-up); they only write files.
    mp.start_processes(_worker, args=(2, _free_port(), str(tiny_bert_dir), name, b, str(tmp_path / "ddp")),
                       nprocs=2, join=True, start_method="fork")
    ddp = [json.loads(line) for line in (tmp_path / "ddp" / "metrics.jsonl").read_text().splitlines()]
    assert ddp[0]["world_size"] == 2 and single[0]["world_size"] == 1
    assert len(_losses(ddp)) == STEPS
    assert _losses(ddp) == pytest.approx(_losses(single), abs=1e-4)
    if name != "regression":
        candidates = [r["candidates"] for r in ddp if "loss" in r]
        per_query = 2 * b if name == "contrastive" else 4 * b  # positives (+ hard negatives) of both processes
        assert candidates == [per_query] * STEPS
    if name == "contrastive":
        for rank in range(2):
            scores = json.loads((tmp_path / "ddp" / f"scores-{rank}.json").read_text())
            assert scores == {"rank": rank, "queries": b, "candidates": 2 * b,
                              "targets": [rank * b + i for i in range(b)]}
