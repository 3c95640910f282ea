"""The training engine: schedules, optimisers, objectives, the loop, evaluation, early stopping."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import CORPUS, PairRegression
from torch import nn
from transformers import (
    BertForMaskedLM,
    get_constant_schedule_with_warmup,
    get_linear_schedule_with_warmup,
    get_polynomial_decay_schedule_with_warmup,
)

from sentforge import build_encoder
from sentforge.support.errors import ConfigError, OutputExistsError
from sentforge.objectives import ContrastiveLoss, MaskedLanguageModeling, SpanCorruption
from sentforge.objectives.masking import IGNORE_INDEX
from sentforge.objectives.mlm import mask_tokens
from sentforge.objectives.span_corruption import corrupt_spans, noise_spans
from sentforge.training.batch_order import BatchOrder, process_slice
from sentforge.training.optim import Schedule, build_optimizer, build_scheduler
from sentforge.training.trainer import Trainer, TrainingConfig


pytestmark = pytest.mark.usefixtures("one_torch_thread")

PAIRS = [(a, b) for a, b in zip(CORPUS[:12], CORPUS[1:13])]


# --- schedules ------------------------------------------------------------------------------------


def _lrs(scheduler, steps: int) -> list[float]:
    values = []
    for _ in range(steps):
        values.append(scheduler.get_last_lr()[0])
        scheduler.optimizer.step()
        scheduler.step()
    return values


def _optimizer(lr: float = 1.0):
    return torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=lr)


@pytest.mark.parametrize("kind, reference", [
    ("linear", lambda opt: get_linear_schedule_with_warmup(opt, 10, 100)),
    ("constant", lambda opt: get_constant_schedule_with_warmup(opt, 10)),
    ("polynomial", lambda opt: get_polynomial_decay_schedule_with_warmup(opt, 10, 100, lr_end=0.1, power=2.0)),
])
def test_schedules_match_transformers(kind, reference):
    ours = build_scheduler(_optimizer(), Schedule(kind, total_steps=100, warmup_steps=10, power=2.0, end_factor=0.1))
    assert _lrs(ours, 120) == pytest.approx(_lrs(reference(_optimizer()), 120), abs=1e-12)


def test_sentence_t5_and_piecewise_schedules_at_known_steps():
    t5 = Schedule("t5-constant-then-linear", total_steps=100)
    # Constant for the first 10% of the steps, then linear decay to 0 at the last step.
    assert [t5(s) for s in (0, 9, 10, 55, 99, 100, 150)] == pytest.approx([1, 1, 1, 0.5, 1 / 90, 0, 0])
    piecewise = Schedule("piecewise", total_steps=100, boundaries=(20, 50), factors=(1.0, 0.5, 0.1))
    assert [piecewise(s) for s in (0, 19, 20, 49, 50, 99)] == [1.0, 1.0, 0.5, 0.5, 0.1, 0.1]
    with pytest.raises(ConfigError, match="2 boundaries need 3 factors"):
        Schedule("piecewise", boundaries=(1, 2), factors=(1.0,))
    with pytest.raises(ConfigError, match="unknown schedule"):
        Schedule("cosine-ish")


@pytest.mark.parametrize("name", ["adamw", "adam", "adafactor", "rmsprop"])
def test_each_optimizer_minimises_a_quadratic(name):
    torch.manual_seed(0)
    target = torch.randn(4, 3)
    weight = nn.Parameter(torch.zeros(4, 3))
    optimizer = build_optimizer([weight], name, lr=0.05)
    start = F.mse_loss(weight, target).item()
    for _ in range(60):
        loss = F.mse_loss(weight, target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    assert F.mse_loss(weight, target).item() < 0.3 * start
    with pytest.raises(ConfigError, match="unknown optimizer"):
        build_optimizer([weight], "sgd-ish")


# --- data order -----------------------------------------------------------------------------------


def test_batch_order_is_seeded_complete_and_shared_between_processes():
    order = BatchOrder(10, 4, seed=3)
    epoch0 = [order.next_batch() for _ in range(2)]
    epoch1 = order.next_batch()
    assert order.state.epoch == 1 and order.state.batches_done == 1
    assert len(set(map(int, torch.from_numpy(np.concatenate(epoch0))))) == 8  # no repeats within an epoch
    again = BatchOrder(10, 4, seed=3)
    assert all((a == b).all() for a, b in zip(epoch0, [again.next_batch() for _ in range(2)]))
    assert not (again.next_batch() == epoch0[0]).all() or not (epoch1 == epoch0[0]).all()
    halves = [process_slice(epoch0[0], rank, 2) for rank in range(2)]
    assert (torch.tensor(list(halves[0]) + list(halves[1])) == torch.tensor(epoch0[0])).all()
    grouped = BatchOrder(200, 10, seed=0, lengths=list(range(200)))
    spreads = [int(b.max() - b.min()) for b in grouped.epoch_batches(0)]
    assert max(spreads) < 30  # similar lengths share a batch
    with pytest.raises(ConfigError, match="fewer than one global batch"):
        BatchOrder(3, 4, seed=0)


# --- objectives -----------------------------------------------------------------------------------


def test_mask_tokens_follows_80_10_10():
    torch.manual_seed(0)
    ids = torch.randint(5, 1000, (400, 100))
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = True
    corrupted, labels = mask_tokens(ids, special, mask_token_id=4, vocab_size=1000)
    chosen = labels != IGNORE_INDEX
    assert not chosen[:, 0].any()
    assert chosen.float().mean().item() == pytest.approx(0.15 * 99 / 100, abs=0.005)
    assert (labels[chosen] == ids[chosen]).all()
    assert (corrupted[~chosen] == ids[~chosen]).all()
    masked = (corrupted[chosen] == 4).float().mean().item()
    unchanged = (corrupted[chosen] == ids[chosen]).float().mean().item()
    assert masked == pytest.approx(0.8, abs=0.02)
    assert unchanged == pytest.approx(0.1, abs=0.015)  # (a random draw equal to the original is rare)


def test_mlm_head_on_masked_positions_equals_the_full_hf_loss(tiny_bert_dir):
    encoder = build_encoder(tiny_bert_dir)
    objective = MaskedLanguageModeling(encoder).eval()
    assert objective.lm.bert is encoder[0].model
    assert objective.lm.cls.predictions.decoder.weight is encoder[0].model.embeddings.word_embeddings.weight
    inputs = objective._corrupt(CORPUS[:8], torch.Generator().manual_seed(1))
    logits, labels = objective._logits_and_labels(inputs)
    ours = F.cross_entropy(logits, labels)
    reference = BertForMaskedLM.forward(objective.lm, **inputs).loss
    assert ours.item() == pytest.approx(reference.item(), rel=1e-5)


def test_noise_spans_and_corruption_follow_t5():
    generator = torch.Generator().manual_seed(0)
    for length in (2, 7, 20, 100):
        spans = noise_spans(length, generator=generator)
        noise = sum(end - start for start, end in spans)
        assert noise == min(max(round(length * 0.15), 1), length - 1)
        assert len(spans) == max(min(round(noise / 3), noise, length - noise), 1)
        assert spans[0][0] >= 1 and all(a[1] < b[0] for a, b in zip(spans, spans[1:])) and spans[-1][1] <= length
    ids = list(range(10, 30))
    spans = [(2, 5), (9, 10), (15, 18)]
    source, target = corrupt_spans(ids, spans, sentinel_ids=[900, 901, 902], eos_id=1)
    assert source == [10, 11, 900, 15, 16, 17, 18, 901, 20, 21, 22, 23, 24, 902, 28, 29, 1]
    assert target == [900, 12, 13, 14, 901, 19, 902, 25, 26, 27, 1]


def _train(objective, encoder, data, tmp_path=None, **overrides):
    options = {"steps": 30, "batch_size": 8, "lr": 3e-3, "log_every": 1, "show_progress": False, "seed": 0,
               "output_dir": tmp_path, **overrides}
    return Trainer(encoder, objective, data, TrainingConfig(**options)).train()


def test_mlm_loss_falls_on_fixed_masks(tiny_bert_dir):
    torch.manual_seed(0)
    encoder = build_encoder(tiny_bert_dir)
    objective = MaskedLanguageModeling(encoder)
    before = objective.evaluate(CORPUS)
    result = _train(objective, encoder, CORPUS, steps=80, lr=1e-2)
    after = objective.evaluate(CORPUS)
    assert after["mlm_loss"] < 0.8 * before["mlm_loss"] and after["mlm_accuracy"] > before["mlm_accuracy"]
    assert sum(result.losses[-10:]) < sum(result.losses[:10])


def test_contrastive_loss_falls(tiny_bert_dir):
    torch.manual_seed(0)
    encoder = build_encoder(tiny_bert_dir)
    losses = _train(ContrastiveLoss(encoder), encoder, PAIRS, steps=25).losses
    assert sum(losses[-5:]) / 5 < 0.8 * sum(losses[:5]) / 5


def test_span_corruption_loss_falls_and_encoder_is_shared(tiny_t5_dir):
    torch.manual_seed(0)
    encoder = build_encoder(tiny_t5_dir)
    objective = SpanCorruption(encoder)
    assert objective.lm.encoder is encoder[0].model.encoder and objective.lm.shared is encoder[0].model.shared
    before = objective.evaluate(CORPUS[:12])["span_loss"]
    _train(objective, encoder, CORPUS, steps=25)
    assert objective.evaluate(CORPUS[:12])["span_loss"] < 0.7 * before


def test_contrastive_candidates_targets_and_hard_negatives(tiny_bert_dir):
    encoder = build_encoder(tiny_bert_dir)
    objective = ContrastiveLoss(encoder, temperature=0.1, symmetric=True)
    logits, targets, reverse = objective.scores([(a, b, c) for a, b, c in zip(CORPUS[:4], CORPUS[4:8], CORPUS[8:12])])
    assert logits.shape == (4, 8) and reverse.shape == (4, 4) and targets.tolist() == [0, 1, 2, 3]
    encoder.eval()
    anchors, positives = encoder.embed(CORPUS[:4]), encoder.embed(CORPUS[4:8])
    negatives = encoder.embed(CORPUS[8:12])
    candidates = F.normalize(torch.cat([positives, negatives]), dim=1)
    expected = F.normalize(anchors, dim=1) @ candidates.T / 0.1
    objective.eval()
    logits, _, _ = objective.scores([(a, b, c) for a, b, c in zip(CORPUS[:4], CORPUS[4:8], CORPUS[8:12])])
    assert torch.allclose(logits, expected, atol=1e-5)
    with pytest.raises(ConfigError, match="arity"):
        objective([("a", "b"), ("a", "b", "c")])


# --- the loop -------------------------------------------------------------------------------------

SCORED = [(a, b, float(i % 3) / 2) for i, (a, b) in enumerate(PAIRS)]


def _no_dropout(encoder):
    for module in encoder.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0
    encoder[0].model.config.attention_probs_dropout_prob = 0.0
    return encoder


def test_gradient_accumulation_equals_the_larger_batch(tiny_bert_dir):
    runs = []
    for batch_size, accumulation in ((8, 1), (4, 2)):
        torch.manual_seed(0)
        encoder = _no_dropout(build_encoder(tiny_bert_dir))
        # Adam's step g/(|g|+eps) amplifies float noise in near-zero gradients; a larger eps keeps the
        # comparison about accumulation, not rounding.
        _train(PairRegression(encoder), encoder, SCORED, steps=4, batch_size=batch_size,
               gradient_accumulation=accumulation, schedule="constant", optimizer_options={"eps": 1e-6})
        runs.append(torch.cat([p.detach().flatten() for p in encoder.parameters()]))
    assert torch.allclose(runs[0], runs[1], atol=1e-5)


def test_metrics_evaluation_and_early_stopping(tiny_bert_dir, tmp_path):
    encoder = build_encoder(tiny_bert_dir)
    calls = []

    def evaluator(model):
        calls.append(model)
        return {"score": 1.0}  # never improves after the first evaluation

    config = TrainingConfig(steps=20, batch_size=4, eval_every=2, eval_at_start=True, early_stopping_patience=2,
                            early_stopping_metric="score", output_dir=tmp_path, log_every=1, show_progress=False)
    result = Trainer(encoder, MaskedLanguageModeling(encoder), CORPUS, config, evaluator=evaluator).train()
    assert calls and all(model is encoder for model in calls)
    # evaluations at steps 0, 2, 4: the second and third do not improve -> patience 2 stops at step 4
    assert result.stopped_early and result.steps == 4 and len(calls) == 3
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if "loss" in r]
    assert [r["step"] for r in steps] == list(range(1, 5))
    assert all(r["tokens"] > 0 and r["tokens_per_s"] > 0 and r["lr"] >= 0 for r in steps)
    assert [r["step"] for r in records if "eval" in r] == [0, 2, 4]
    # Off by default: the same evaluator without patience trains all steps.
    plain = Trainer(encoder, MaskedLanguageModeling(encoder), CORPUS, TrainingConfig(
        steps=8, batch_size=4, eval_every=2, show_progress=False), evaluator=evaluator).train()
    assert plain.steps == 8 and not plain.stopped_early and len(plain.evaluations) == 4
    # A schedule that is no multiple of the cadence is evaluated at its last step too.
    seven = Trainer(encoder, MaskedLanguageModeling(encoder), CORPUS, TrainingConfig(
        steps=7, batch_size=4, eval_every=3, show_progress=False), evaluator=evaluator).train()
    assert [e["step"] for e in seven.evaluations] == [3, 6, 7]


def test_output_and_config_are_checked(tiny_bert_dir, tmp_path):
    encoder = build_encoder(tiny_bert_dir)
    objective = MaskedLanguageModeling(encoder)
    (tmp_path / "metrics.jsonl").write_text("{}\n")
    with pytest.raises(OutputExistsError, match="resume=True \\(--resume\\) to continue it or overwrite=True"):
        Trainer(encoder, objective, CORPUS, TrainingConfig(steps=1, batch_size=4, output_dir=tmp_path)).train()
    with pytest.raises(ConfigError, match="exactly one of steps and epochs"):
        TrainingConfig()
    with pytest.raises(ConfigError, match="need an output_dir"):
        TrainingConfig(steps=1, checkpoint_every=1)
    with pytest.raises(ConfigError, match="must own the encoder"):
        Trainer(build_encoder(tiny_bert_dir), objective, CORPUS, TrainingConfig(steps=1))

    class NotScalar(nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, batch):
            return self.encoder.embed(batch).sum(dim=1)

    with pytest.raises(ConfigError, match="scalar loss"):
        Trainer(encoder, NotScalar(encoder), CORPUS, TrainingConfig(steps=1, batch_size=4, show_progress=False)).train()
    epochs = Trainer(encoder, objective, CORPUS, TrainingConfig(epochs=2, batch_size=16, show_progress=False)).train()
    assert epochs.steps == 2 * (len(CORPUS) // 16)


class _CountingStats(nn.Module):
    """Pair regression that reports a device-tensor statistic and a host float."""

    def __init__(self, encoder):
        super().__init__()
        self.inner = PairRegression(encoder)

    def forward(self, batch):
        loss = self.inner(batch)
        self.last_stats = {"doubled": loss.detach() * 2, "tokens": float(len(batch))}
        return loss


def test_reads_deferred_to_logging_steps_give_the_same_run(tiny_bert_dir, tmp_path, monkeypatch):
    """Accelerators read the per-step numbers only at logging steps (forced here on the CPU): the
    losses, the logged means and the weights equal those of a run that reads every step."""
    pairs = [(CORPUS[i], CORPUS[i + 1], (i % 5) / 4) for i in range(12)]

    def run(output, deferred):
        monkeypatch.setattr(Trainer, "_reads_every_step", staticmethod(lambda device: not deferred))
        torch.manual_seed(0)
        encoder = build_encoder(tiny_bert_dir)
        reads = []
        config = TrainingConfig(output_dir=output, steps=7, batch_size=4, lr=1e-3, log_every=3, show_progress=False)
        trainer = Trainer(encoder, _CountingStats(encoder), pairs, config,
                          callbacks=[lambda state: reads.append(state.loss)])
        result = trainer.train()
        records = [json.loads(line) for line in (output / "metrics.jsonl").read_text().splitlines()]
        logged = [{k: v for k, v in r.items() if k not in ("steps_per_s", "tokens_per_s", "examples_per_s")}
                  for r in records if "loss" in r]
        return result, logged, reads, encoder.state_dict()

    eager, eager_log, eager_reads, eager_weights = run(tmp_path / "a", deferred=False)
    deferred, deferred_log, deferred_reads, deferred_weights = run(tmp_path / "b", deferred=True)
    assert deferred.losses == eager.losses and len(eager.losses) == 7
    assert deferred_log == eager_log and [r["step"] for r in eager_log] == [3, 6, 7]
    for record in eager_log:
        assert record["doubled"] == pytest.approx(2 * record["loss"], rel=1e-6)
    assert eager_reads == eager.losses  # the CPU reads every step
    assert np.isnan(deferred_reads[:2]).all() and deferred_reads[2:5] == [eager.losses[2]] * 3  # stale between logs
    for name, value in eager_weights.items():
        torch.testing.assert_close(deferred_weights[name], value, atol=0, rtol=0, msg=name)
    assert deferred.tokens_per_second is not None


def test_adamw_on_cpu_parameters_is_not_fused():
    module = torch.nn.Linear(4, 4)
    assert not build_optimizer(module.parameters(), "adamw", lr=1e-3).defaults["fused"]
    assert build_optimizer(module.parameters(), "adamw", lr=1e-3, fused=True).defaults["fused"] is True
