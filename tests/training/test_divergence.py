"""A non-finite loss stops training with a clear error before the bad step is applied; the last
checkpoint stays whole and loadable; metrics.jsonl is strict JSON; absurd hyper-parameters are refused
before any training."""

from __future__ import annotations

import json
import math

import pytest
import torch

from sentforge import build_encoder
from sentforge.support.errors import ConfigError, TrainingDivergedError
from sentforge.training.checkpoint import latest_checkpoint, load_checkpoint
from sentforge.training.trainer import METRICS_FILE, Trainer, TrainingConfig

from conftest import CORPUS, PairRegression, assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")
PAIRS = [(CORPUS[i], CORPUS[i + 1], (i % 5) / 4) for i in range(12)]


class ExplodesAt(PairRegression):
    """The pair regression whose loss becomes `value` from optimizer step `step` on (1-based)."""

    def __init__(self, encoder, step: int, value: float) -> None:
        super().__init__(encoder)
        self.calls, self.step, self.value = 0, step, value

    def forward(self, batch):
        self.calls += 1
        loss = super().forward(batch)
        return loss * self.value if self.calls >= self.step else loss


def _strict_json(line: str):
    def refuse(constant):
        raise AssertionError(f"bare {constant} in metrics.jsonl: {line}")
    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_non_finite_loss_stops_and_keeps_the_last_checkpoint(tiny_bert_dir, tmp_path, value):
    torch.manual_seed(0)
    encoder = build_encoder(tiny_bert_dir)
    objective = ExplodesAt(encoder, step=5, value=value)
    config = TrainingConfig(output_dir=tmp_path, steps=8, batch_size=4, lr=1e-3, checkpoint_every=2,
                            log_every=1, show_progress=False)
    with pytest.raises(TrainingDivergedError, match=f"step 5: loss is {value}"):
        Trainer(encoder, objective, PAIRS, config).train()
    # The weights in memory are still those of step 4: the bad step was not applied.
    assert all(torch.isfinite(p).all() for p in objective.parameters())
    checkpoint = latest_checkpoint(tmp_path / "checkpoints")
    assert checkpoint is not None and checkpoint.name == "step-00000004"
    fresh = PairRegression(build_encoder(tiny_bert_dir))
    assert load_checkpoint(checkpoint, fresh, restore_rng=False)["state"]["step"] == 4
    for (name, a), b in zip(objective.state_dict().items(), fresh.state_dict().values()):
        torch.testing.assert_close(a, b, atol=0, rtol=0, msg=name)
    records = [_strict_json(line) for line in (tmp_path / METRICS_FILE).read_text().splitlines()]
    assert max(r["step"] for r in records) == 4


def test_non_finite_metrics_are_written_as_valid_json(tiny_bert_dir, tmp_path):
    encoder = build_encoder(tiny_bert_dir)
    config = TrainingConfig(output_dir=tmp_path, steps=1, batch_size=4, lr=1e-3, eval_every=1, show_progress=False)
    Trainer(encoder, PairRegression(encoder), PAIRS, config, evaluator=lambda _: {"score": math.nan}).train()
    records = [_strict_json(line) for line in (tmp_path / METRICS_FILE).read_text().splitlines()]
    assert {"step": 1, "eval": {"score": "nan"}} in records


@pytest.mark.parametrize("options, culprit", [
    ({"lr": math.nan}, "lr"), ({"lr": -1e-3}, "lr"), ({"lr": 0.0}, "lr"), ({"lr": math.inf}, "lr"),
    ({"lr": 1e10}, "lr"), ({"weight_decay": math.nan}, "weight_decay"), ({"weight_decay": -0.1}, "weight_decay"),
    ({"warmup_ratio": 1.5}, "warmup_ratio"), ({"max_grad_norm": math.inf}, "max_grad_norm"),
    ({"max_grad_norm": math.nan}, "max_grad_norm"), ({"warmup_steps": -1}, "warmup_steps"),
    ({"schedule_factors": (1.0, math.nan)}, "schedule_factors"),
])
def test_absurd_hyper_parameters_are_refused_up_front(options, culprit):
    with pytest.raises(ConfigError, match=culprit):
        TrainingConfig(steps=1, **options)


@pytest.mark.parametrize("lr", ["nan", "inf", "-1", "1e10"])
def test_cli_refuses_an_absurd_learning_rate(tiny_bert_dir, tmp_path, capsys, lr):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS) + "\n")
    code, _, err = run_cli(["train", "simcse", "--model", tiny_bert_dir, "--corpus", corpus,
                            "--output", tmp_path / "out", "--steps", "1", "--lr", lr], capsys)
    assert_one_line_error(code, err, "lr")
    assert not (tmp_path / "out").exists()


def test_accelerator_reads_catch_a_non_finite_loss_late_and_save_nothing_after_it(tiny_bert_dir, tmp_path,
                                                                                 monkeypatch):
    """On accelerators the loss is read only at logging/evaluation/checkpoint steps (forced here on the
    CPU): a NaN at step 5 is found at the checkpoint step 6, named by its own step, and nothing is saved."""
    monkeypatch.setattr(Trainer, "_reads_every_step", staticmethod(lambda device: False))
    torch.manual_seed(0)
    encoder = build_encoder(tiny_bert_dir)
    objective = ExplodesAt(encoder, step=5, value=math.nan)
    config = TrainingConfig(output_dir=tmp_path, steps=8, batch_size=4, lr=1e-3, checkpoint_every=3,
                            log_every=10, show_progress=False)
    with pytest.raises(TrainingDivergedError, match=r"step 5: loss is nan \(read at step 6\)"):
        Trainer(encoder, objective, PAIRS, config).train()
    checkpoint = latest_checkpoint(tmp_path / "checkpoints")
    assert checkpoint is not None and checkpoint.name == "step-00000003"
