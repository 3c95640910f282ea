"""Shared fixtures and helpers: tiny random BERT and T5 checkpoints built from scratch (no downloads),
fixtures that pin threads (opted into with `pytestmark = pytest.mark.usefixtures(...)`), and helpers
that several test files use."""

from __future__ import annotations

import os
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DATA = SHARED / "data"
MODELS = SHARED / "models"

CORPUS = [
    "the cat sat on the mat", "a dog runs in the park", "how do i reset my password",
    "the weather is nice today", "my invoice shows a double charge", "the app crashes on start",
    "a man is playing a guitar", "two women are walking on the beach", "the train leaves at noon",
    "please cancel my subscription", "where can i change the language", "a child eats an apple",
] * 4


def needs(path: Path):
    """Skip a test whose shared data or model is not on this machine."""
    return pytest.mark.skipif(not path.exists(), reason=f"{path} not available")


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    from transformers import BertConfig, BertModel

    from sentforge.recipes.tokenizer import wordpiece_from_vocabulary

    path = tmp_path_factory.mktemp("tiny-bert")
    # A fixed vocabulary (every word, character and continuation character of CORPUS): the WordPiece
    # trainer breaks ties in hash-map order, so a trained one differs from run to run, and with it
    # every test that trains the tiny model.
    words = sorted({word for text in CORPUS for word in text.split()})
    characters = sorted({c for word in words for c in word})
    tokenizer = wordpiece_from_vocabulary(words + characters + [f"##{c}" for c in characters])
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_ce_dir(tiny_bert_dir, tmp_path_factory) -> Path:
    """A cross-encoder from the tiny BERT's transformer and a new one-logit head (seed 3), saved."""
    from sentforge.cross_encoder import CrossEncoder

    path = tmp_path_factory.mktemp("tiny-cross-encoder") / "ce"
    CrossEncoder.from_encoder(str(tiny_bert_dir), seed=3).save(path)
    return path


@pytest.fixture(scope="session")
def tiny_t5_dir(tmp_path_factory) -> Path:
    from transformers import T5Config, T5Model

    from sentforge.recipes.tokenizer import train_unigram

    path = tmp_path_factory.mktemp("tiny-t5")
    tokenizer = train_unigram(CORPUS, vocab_size=250)
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                      num_heads=4, decoder_start_token_id=tokenizer.pad_token_id, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id)
    T5Model(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture()
def one_torch_thread():
    """Tiny models gain nothing from intra-op threads, and lose a lot when other jobs share the cores."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture()
def single_threaded_fits():
    """The brute-force references fit single-threaded too: many small multi-threaded fits on a busy
    2-core machine are an order of magnitude slower."""
    from sentforge.evaluation import classifier

    with classifier.single_threaded():
        yield


def bag_of_words(dim: int = 24):
    """Deterministic sentence vectors: the sum of a fixed pseudo-random vector per word."""
    from sentforge.specs.external import CallableEncoder

    def encode(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), dim), np.float32)
        for row, text in enumerate(texts):
            for word in text.split():
                out[row] += np.random.default_rng(zlib.crc32(word.encode())).standard_normal(dim)
        return out
    return CallableEncoder(encode, name="bag-of-words", dim=dim)


class PairRegression(nn.Module):
    """A deterministic, non-contrastive objective: the cosine of a pair regressed on a target score."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, batch):
        left = self.encoder.embed([a for a, _, _ in batch])
        right = self.encoder.embed([b for _, b, _ in batch])
        target = torch.tensor([score for _, _, score in batch], dtype=left.dtype)
        return F.mse_loss(F.cosine_similarity(left, right), target)


def training_losses(objective: nn.Module, optimizer: torch.optim.Optimizer, steps: int,
                    batch_size: int = 8) -> list[float]:
    """The loss of each of `steps` optimiser steps on batches that cycle through the 12 distinct CORPUS texts."""
    losses = []
    for step in range(steps):
        batch = [CORPUS[(step * batch_size + i) % 12] for i in range(batch_size)]
        loss = objective(batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses


def run_cli(args, capsys):
    """(exit code, stdout, stderr) of `sentforge ARGS`."""
    from sentforge.cli import main

    sys.argv = ["sentforge", *map(str, args)]
    with pytest.raises(SystemExit) as exit_info:
        main()
    out = capsys.readouterr()
    return exit_info.value.code, out.out, out.err


def assert_one_line_error(code, err, *fragments):
    """The CLI failed with exit code 2 and one `error:` line (no traceback) that holds every fragment."""
    assert code == 2 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def pytest_terminal_summary(terminalreporter):
    """How many documentation blocks ran, were skipped and failed (tests/test_docs_blocks.py)."""
    counts = {}
    for outcome in ("passed", "skipped", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if "test_docs_block_runs_as_written" in nodeid and getattr(report, "when", "call") in ("call", "setup"):
                counts[outcome] = counts.get(outcome, 0) + 1
    if counts:
        terminalreporter.write_line(f"docs blocks: {counts.get('passed', 0)} ran, {counts.get('skipped', 0)} "
                                    f"skipped, {counts.get('failed', 0) + counts.get('error', 0)} failed")
