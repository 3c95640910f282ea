"""Cross-encoders: built from a tiny random BERT, saved in sentence-transformers' CrossEncoder layout and scored
by `sentence_transformers.CrossEncoder` the same (the independent reference); length-sorted batching gives each
pair its own score; training learns a separable toy task; the run directory's output rules; re-ranking a first
stage's top K (hand-computed orders); and the command line's answers to a bi-encoder given as a cross-encoder
and the reverse."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sentforge
from sentforge.cross_encoder import CrossEncoder, is_cross_encoder_dir
from sentforge.evaluation.reranker import Reranked
from sentforge.support.errors import ConfigError, OutputExistsError

from conftest import CORPUS, assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")

PAIRS = [(CORPUS[i], CORPUS[(i * 5 + 1) % 12]) for i in range(12)]



def test_a_saved_cross_encoder_scores_as_sentence_transformers_reads_it(tiny_ce_dir):
    from sentence_transformers import CrossEncoder as Reference

    assert is_cross_encoder_dir(tiny_ce_dir)
    ours = sentforge.load_cross_encoder(tiny_ce_dir).predict(PAIRS, batch_size=5)
    reference = Reference(str(tiny_ce_dir), device="cpu").predict(PAIRS, batch_size=5)
    assert np.max(np.abs(ours - np.asarray(reference))) < 1e-5
    assert ours.std() > 0  # the pairs are told apart, not a constant head
    ranked = sentforge.load_cross_encoder(tiny_ce_dir).rank(CORPUS[0], CORPUS[:6], top_k=3, return_texts=True)
    expected = Reference(str(tiny_ce_dir), device="cpu").rank(CORPUS[0], CORPUS[:6], top_k=3, return_documents=True)
    assert [r["corpus_id"] for r in ranked] == [r["corpus_id"] for r in expected]
    assert [r["text"] for r in ranked] == [CORPUS[r["corpus_id"]] for r in ranked]


def test_batches_sorted_by_length_give_each_pair_its_own_score(tiny_ce_dir):
    model = sentforge.load_cross_encoder(tiny_ce_dir)
    one_by_one = np.array([model.predict([pair])[0] for pair in PAIRS])
    assert np.allclose(model.predict(PAIRS, batch_size=4), one_by_one, atol=1e-5)
    logits = model.predict(PAIRS, activation=False)
    assert np.allclose(1 / (1 + np.exp(-logits)), one_by_one, atol=1e-5)


def test_training_learns_a_separable_task_and_follows_the_output_rules(tiny_bert_dir, tmp_path):
    # Related: a text with itself; unrelated: with another topic's text.
    rows = [{"sentence1": t, "sentence2": t, "label": 1} for t in CORPUS[:12]]
    rows += [{"sentence1": t, "sentence2": CORPUS[(i + 6) % 12], "label": 0} for i, t in enumerate(CORPUS[:12])]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    output = tmp_path / "ce"
    model = sentforge.train_cross_encoder(str(tiny_bert_dir), data, output, steps=200, lr=3e-3, negatives=0,
                                          batch_size=8, warmup_ratio=0.0, show_progress=False)
    scores = sentforge.load_cross_encoder(output).predict([(r["sentence1"], r["sentence2"]) for r in rows])
    labels = np.array([r["label"] for r in rows])
    assert scores[labels == 1].min() > scores[labels == 0].max()
    assert np.allclose(model.predict([(r["sentence1"], r["sentence2"]) for r in rows]), scores, atol=1e-5)
    summary = json.loads((output / "train.json").read_text(encoding="utf-8"))
    assert summary["method"] == "cross-encoder" and summary["steps"] == 200
    with pytest.raises(OutputExistsError):
        sentforge.train_cross_encoder(str(tiny_bert_dir), data, output, steps=1)
    unlabelled = tmp_path / "unlabelled.jsonl"
    unlabelled.write_text(json.dumps({"sentence1": "a", "sentence2": "b", "label": None}) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="hold no label"):
        sentforge.train_cross_encoder(str(tiny_bert_dir), unlabelled, tmp_path / "other", steps=1)
    assert not (tmp_path / "other").exists()


class Lengths:
    """A stand-in cross-encoder whose score is the candidate's length: re-ranked orders are known by hand."""

    name = "lengths"

    def predict(self, pairs, batch_size=32):
        return np.array([len(b) for _, b in pairs], dtype=float)


class Fixed:
    """A lexical first stage whose scores are given."""

    def __init__(self, scores):
        self.scores = scores

    def score(self, queries, candidate_lists):
        return [np.asarray(self.scores, dtype=float) for _ in queries]


class Pairwise:
    """A lexical first stage that scores every pair 10."""

    def score(self, queries, candidate_lists):
        return [np.full(len(c), 10.0) for c in candidate_lists]

    def pair_scores(self, texts_a, texts_b):
        return np.full(len(texts_a), 10.0)


def test_reranking_orders_the_first_stage_top_k_by_the_cross_encoder_above_the_rest():
    candidates = ["aaaa", "a", "aaa", "aa", "aaaaa"]
    first = [0.9, 0.8, 0.7, 0.2, 0.1]  # first stage order: 0, 1, 2, 3, 4
    (scores,) = Reranked(Fixed(first), Lengths(), top_k=3).score(["q"], [candidates])
    assert list(np.argsort(-scores, kind="stable")) == [0, 2, 1, 3, 4]  # top 3 by length, then the rest
    (alone,) = Reranked(None, Lengths(), top_k=None).score(["q"], [candidates])
    assert list(np.argsort(-alone, kind="stable")) == [4, 0, 2, 3, 1]
    (kept,) = Reranked(Fixed(first), Lengths(), top_k=3, weight=0.0).score(["q"], [candidates])
    assert list(np.argsort(-kept, kind="stable")) == [0, 1, 2, 3, 4]  # weight 0: the first stage's order
    # Interpolated: 0.9 * first + 0.1 * length -> 1.21, 0.82, 0.93 for the top 3: 0, 2, 1.
    (mixed,) = Reranked(Fixed(first), Lengths(), top_k=3, weight=0.1).score(["q"], [candidates])
    assert np.allclose(mixed[:3], [1.21, 0.82, 0.93]) and list(np.argsort(-mixed, kind="stable")) == [0, 2, 1, 3, 4]
    with pytest.raises(ConfigError, match="weight"):
        Reranked(Fixed(first), Lengths(), weight=1.5)
    reranked = Reranked(Fixed(first), Lengths(), top_k=2)
    assert np.array_equal(reranked.pair_scores(["x", "y"], ["abc", "a"]), [3.0, 1.0])
    both = Reranked(Pairwise(), Lengths(), weight=0.25).pair_scores(["x", "y"], ["abc", "a"])
    assert np.allclose(both, [0.25 * 3 + 0.75 * 10, 0.25 * 1 + 0.75 * 10])
    assert reranked.pairs_scored == 2


def test_eval_with_a_reranker_and_the_errors_for_models_in_each_others_place(tiny_bert_dir, tiny_ce_dir, tmp_path,
                                                                             capsys):
    data = tmp_path / "rerank.jsonl"
    data.write_text("".join(json.dumps({"query": CORPUS[i], "positive": [CORPUS[i + 1]],
                                        "negative": [CORPUS[i + 2], CORPUS[i + 3]]}) + "\n" for i in range(6)),
                    encoding="utf-8")
    out = tmp_path / "r.json"
    code, printed, err = run_cli(["eval", "--model", tiny_bert_dir, "--reranker", tiny_ce_dir, "--rerank-top", "2",
                                  "--dataset", data, "--output", out], capsys)
    assert code == 0, err
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["reranker"]["top_k"] == 2 and report["timing"]["reranked_pairs"] == 12
    assert "pairs/s" in printed
    code, _, err = run_cli(["eval", "--model", tiny_bert_dir, "--reranker", tiny_bert_dir, "--dataset", data,
                            "--output", tmp_path / "r2.json"], capsys)
    assert_one_line_error(code, err, "--reranker", "not a cross-encoder")
    code, _, err = run_cli(["eval", "--model", tiny_ce_dir, "--dataset", data, "--output", tmp_path / "r3.json"],
                           capsys)
    assert code == 2 and "error:" in err and "Traceback" not in err
    code, _, err = run_cli(["train", "cross-encoder", "--model", tiny_ce_dir, "--labelled", data, "--output",
                            tmp_path / "ce2", "--steps", "1"], capsys)
    assert_one_line_error(code, err, "rerank.jsonl:1", "sentence1")
    assert not (tmp_path / "ce2").exists()


def test_search_with_a_reranker_gives_the_cross_encoders_order(tiny_bert_dir, tiny_ce_dir, tmp_path, capsys):
    from sentence_transformers import CrossEncoder as Reference

    corpus = tmp_path / "corpus.txt"
    texts = list(dict.fromkeys(CORPUS))
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    code, printed, err = run_cli(["search", CORPUS[2], "--corpus", corpus, "-m", tiny_bert_dir, "--reranker",
                                  tiny_ce_dir, "--rerank-top", len(texts), "-k", 3], capsys)
    assert code == 0, err
    shown = [line.split("  ", 2)[-1] for line in printed.splitlines()[1:]]
    expected = Reference(str(tiny_ce_dir), device="cpu").rank(CORPUS[2], texts, top_k=3)
    assert shown == [texts[r["corpus_id"]] for r in expected]


class Topics:
    """A stand-in bi-encoder: a text's vector is its topic (the word before the first space) as a one-hot."""

    topics = ["cat", "dog", "car"]

    def encode(self, texts, **_):
        return np.array([[float(t.split()[0] == topic) + 0.01 * i for i, topic in enumerate(self.topics)]
                         for t in texts])


def test_silver_pairs_pair_each_anchor_with_its_neighbours_once_and_leave_the_gold_pairs_out():
    from sentforge.recipes.silver import candidate_pairs, silver_pairs

    texts = ["cat one", "cat two", "dog one", "dog two", "car one", "car two"]
    pairs = candidate_pairs(["cat one", "dog one", "cat two"], texts, Topics(), k=1, bm25=False)
    assert pairs == [("cat one", "cat two"), ("dog one", "dog two")]  # (cat two, cat one) is the same pair
    gold = [("cat one", "cat two", 1)]
    silver = silver_pairs(Lengths(), Topics(), gold, ["dog one", "dog two", "car one"], k=1, anchors=3, bm25=False)
    unordered = [frozenset((a, b)) for a, b, _ in silver]
    assert len(unordered) == len(set(unordered)) == 2  # the dogs once; car one with its nearest other text
    assert frozenset(("dog one", "dog two")) in unordered and frozenset(("cat one", "cat two")) not in unordered
    assert any("car one" in pair for pair in unordered)
    assert all(score == len(b) for _, b, score in silver)


def test_reranking_with_weight_zero_scores_as_the_bi_encoder_alone(tiny_bert_dir, tiny_ce_dir, tmp_path):
    from sentforge.evaluation import load_dataset

    data = tmp_path / "rerank.jsonl"
    data.write_text("".join(json.dumps({"query": CORPUS[i], "positive": [CORPUS[i + 1]],
                                        "negative": [CORPUS[i + 2], CORPUS[i + 3], CORPUS[i + 4]]}) + "\n"
                            for i in range(8)), encoding="utf-8")
    task, bi = load_dataset(data), sentforge.load(str(tiny_bert_dir))
    alone = task.item_scores(bi).values
    kept = task.item_scores(Reranked(bi, sentforge.load_cross_encoder(tiny_ce_dir), top_k=3, weight=0.0)).values
    assert np.array_equal(alone, kept)


def test_an_encoder_whose_classifier_has_no_pooler_starts_a_cross_encoder(tmp_path):
    """MPNet (all-mpnet-base-v2's architecture): the sentence encoder carries pooler weights that
    MPNetForSequenceClassification has no place for; the transformer's own weights all carry over."""
    import torch
    from transformers import BertTokenizerFast, MPNetConfig, MPNetModel

    from sentforge.recipes.tokenizer import wordpiece_from_vocabulary

    words = sorted({word for text in CORPUS for word in text.split()})
    tokenizer: BertTokenizerFast = wordpiece_from_vocabulary(words)
    torch.manual_seed(0)
    config = MPNetConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=66)
    encoder = MPNetModel(config)
    assert any(key.startswith("pooler.") for key in encoder.state_dict())
    encoder.save_pretrained(tmp_path / "mpnet")
    tokenizer.save_pretrained(tmp_path / "mpnet")
    model = CrossEncoder.from_encoder(str(tmp_path / "mpnet"), seed=0)
    carried = model.model.mpnet.state_dict()
    for key, value in encoder.state_dict().items():
        if not key.startswith("pooler."):
            assert torch.equal(carried[key], value), key
    assert model.predict(PAIRS[:3]).shape == (3,)
