"""Shared fixtures: tiny random BERT and T5 checkpoints built from scratch (no downloads)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

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

    from sentforge.training.tokenizer import train_wordpiece

    path = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = train_wordpiece(CORPUS, vocab_size=200, min_frequency=1)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_t5_dir(tmp_path_factory) -> Path:
    from transformers import T5Config, T5Model

    from sentforge.training.tokenizer import train_unigram

    path = tmp_path_factory.mktemp("tiny-t5")
    tokenizer = train_unigram(CORPUS, vocab_size=250)
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                      num_heads=4, decoder_start_token_id=tokenizer.pad_token_id, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id)
    T5Model(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
