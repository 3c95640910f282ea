"""MarginMSE end to end: the teacher's margin rows (recipes/margins.py) are its own scores' differences, their
negatives are the start model's near texts and never a positive, and a seed gives the same rows; the rows read
the same from every shape (files, a Dataset made for sentence-transformers' MarginMSELoss, dicts, tuples); the
`marginmse` recipe moves the student's margins towards the teacher's, from Python and from the command line,
whose bad rows are one `error:` line."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sentforge
from sentforge.cross_encoder import CrossEncoder
from sentforge.recipes.data import read_examples
from sentforge.recipes.margins import margin_triples
from sentforge.support.errors import ConfigError

from conftest import CORPUS, assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TEXTS = list(dict.fromkeys(CORPUS))
POSITIVES = [(TEXTS[0], TEXTS[6]), (TEXTS[2], TEXTS[10]), (TEXTS[2], TEXTS[5]), (TEXTS[4], TEXTS[9])]
ROWS = [(TEXTS[0], TEXTS[6], TEXTS[1], 0.25), (TEXTS[2], TEXTS[10], TEXTS[3], -0.5),
        (TEXTS[4], TEXTS[9], TEXTS[7], 1.5)]


@pytest.fixture(scope="module")
def teacher(tiny_bert_dir):
    return CrossEncoder.from_encoder(str(tiny_bert_dir), seed=3)


@pytest.fixture(scope="module")
def student(tiny_bert_dir):
    return sentforge.load(str(tiny_bert_dir))


def test_each_margin_is_the_teachers_score_of_the_positive_minus_that_of_the_negative(teacher, student):
    rows = margin_triples(teacher, student, POSITIVES, TEXTS, negatives=2, depth=4, seed=0)
    assert len(rows) == 2 * len(POSITIVES)
    for query, positive, negative, margin in rows:
        one_by_one = teacher.predict([(query, positive)])[0] - teacher.predict([(query, negative)])[0]
        assert margin == pytest.approx(float(one_by_one), abs=1e-5)
    assert np.std([margin for *_, margin in rows]) > 0  # the random teacher tells the pairs apart
    logit_rows = margin_triples(teacher, student, POSITIVES, TEXTS, negatives=2, depth=4, seed=0, logits=True)
    query, positive, negative, margin = logit_rows[0]
    logits = teacher.predict([(query, positive), (query, negative)], activation=False)
    assert margin == pytest.approx(float(logits[0] - logits[1]), abs=1e-5)


def test_negatives_are_near_texts_that_are_no_positive_and_a_seed_gives_the_same_rows(teacher, student):
    vectors = student.encode(TEXTS, normalize=True)
    cosine = {(a, b): float(vectors[i] @ vectors[j]) for i, a in enumerate(TEXTS) for j, b in enumerate(TEXTS)}
    depth = 4
    rows = margin_triples(teacher, student, POSITIVES, TEXTS, negatives=2, depth=depth, seed=0)
    positives_of = {query: {p for q, p in POSITIVES if q == query} for query, _ in POSITIVES}
    for query, _, negative, _ in rows:
        assert negative != query and negative not in positives_of[query]
        allowed = sorted((t for t in TEXTS if t != query and t not in positives_of[query]),
                         key=lambda t: -cosine[query, t])[:depth]
        assert negative in allowed
    assert margin_triples(teacher, student, POSITIVES, TEXTS, negatives=2, depth=depth, seed=0) == rows
    drawn = {seed: [row[:3] for row in margin_triples(teacher, student, POSITIVES, TEXTS, negatives=1,
                                                      depth=depth, seed=seed)] for seed in range(4)}
    assert len({tuple(rows) for rows in drawn.values()}) > 1  # the draw among the depth nearest follows the seed


def test_labelled_negatives_are_drawn_first_and_mined_ones_fill_the_rest(teacher, student):
    wrong = {TEXTS[0]: [TEXTS[11], TEXTS[8], TEXTS[6]], TEXTS[4]: [TEXTS[7]]}  # TEXTS[6] is a positive of TEXTS[0]
    rows = margin_triples(teacher, student, POSITIVES, TEXTS, negatives=2, depth=4, seed=0, labelled_negatives=wrong)
    negatives_of = {}
    for query, positive, negative, _ in rows:
        negatives_of.setdefault((query, positive), []).append(negative)
    assert sorted(negatives_of[TEXTS[0], TEXTS[6]]) == sorted([TEXTS[11], TEXTS[8]])
    assert negatives_of[TEXTS[4], TEXTS[9]][0] == TEXTS[7]  # one labelled negative, then one mined
    assert negatives_of[TEXTS[4], TEXTS[9]][1] not in (TEXTS[4], TEXTS[9], TEXTS[7])


def test_drawn_anchors_take_their_nearest_text_as_the_positive(teacher, student):
    vectors = student.encode(TEXTS, normalize=True)
    rows = margin_triples(teacher, student, POSITIVES[:1], TEXTS, negatives=1, depth=3, anchors=3, seed=1)
    anchors = [row for row in rows if row[0] != POSITIVES[0][0]]
    assert len({row[0] for row in anchors}) == 3
    for query, positive, negative, _ in anchors:
        i = TEXTS.index(query)
        nearest = max((t for t in TEXTS if t != query), key=lambda t: vectors[i] @ vectors[TEXTS.index(t)])
        assert positive == nearest and negative not in (query, positive)
    with pytest.raises(ConfigError, match="at most the mining depth"):
        margin_triples(teacher, student, POSITIVES, TEXTS, negatives=5, depth=3)


def test_margin_rows_read_the_same_from_files_datasets_dicts_and_tuples(tmp_path):
    datasets = pytest.importorskip("datasets")
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps(dict(zip(("query", "positive", "negative", "margin"), row))) + "\n"
                             for row in ROWS), encoding="utf-8")
    tsv = tmp_path / "rows.tsv"
    tsv.write_text("anchor\tpositive\tnegative\tlabel\n" + "".join("\t".join(map(str, row)) + "\n" for row in ROWS),
                   encoding="utf-8")
    # sentence-transformers' MarginMSELoss data: three text columns by position and the margin as `label`.
    st_dataset = datasets.Dataset.from_dict({"q": [r[0] for r in ROWS], "p1": [r[1] for r in ROWS],
                                             "p2": [r[2] for r in ROWS], "label": [r[3] for r in ROWS]})
    dicts = [{"query": q, "positive": p, "negative": n, "score": m} for q, p, n, m in ROWS]
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text("".join(json.dumps({"q": q, "p": p, "n": n, "m": m}) + "\n" for q, p, n, m in ROWS),
                       encoding="utf-8")
    for data in (jsonl, tsv, st_dataset, dicts, ROWS):
        assert read_examples("margin triples", data) == ROWS, data
    columns = {"q": "sentence1", "p": "sentence2", "n": "negative", "m": "score"}
    assert read_examples("margin triples", renamed, columns=columns) == ROWS
    with pytest.raises(ConfigError, match=r"data\[1\]: margin 'x' is not a number"):
        read_examples("margin triples", [ROWS[0], (*ROWS[1][:3], "x")])


def test_training_moves_the_students_margins_towards_the_teachers(tiny_bert_dir, tmp_path):
    def error(encoder):
        vectors = {t: v for t, v in zip(TEXTS, encoder.encode(TEXTS))}
        student = np.array([vectors[q] @ vectors[p] - vectors[q] @ vectors[n] for q, p, n, _ in ROWS])
        return float(np.mean((student - np.array([m for *_, m in ROWS])) ** 2))

    before = error(sentforge.load(str(tiny_bert_dir)))
    trained = sentforge.train("marginmse", tiny_bert_dir, ROWS, tmp_path / "out", steps=30, lr=1e-3, batch_size=3,
                              warmup_ratio=0.0, show_progress=False)
    assert error(trained) < before / 2
    summary = json.loads((tmp_path / "out" / "train.json").read_text(encoding="utf-8"))
    assert summary["method"] == "marginmse" and summary["examples"] == len(ROWS)


def test_the_command_trains_on_a_rows_file_and_names_a_bad_row(tiny_bert_dir, tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"query": q, "positive": p, "negative": n, "margin": m}) + "\n"
                            for q, p, n, m in ROWS), encoding="utf-8")
    code, out, err = run_cli(["train", "marginmse", "--model", tiny_bert_dir, "--corpus", rows, "--output",
                              tmp_path / "out", "--steps", 1, "--batch-size", 2], capsys)
    assert code == 0, err
    assert "marginmse, 1 steps" in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query": "a b", "positive": "c d", "negative": "e f", "margin": 0.5}) + "\n"
                   + json.dumps({"query": "a b", "positive": "c d", "negative": "e f"}) + "\n", encoding="utf-8")
    code, _, err = run_cli(["train", "marginmse", "--model", tiny_bert_dir, "--corpus", bad, "--output",
                            tmp_path / "bad-out", "--steps", 1], capsys)
    assert_one_line_error(code, err, f"{bad}:2", "'margin'", "found: query, positive, negative)")
    assert not (tmp_path / "bad-out").exists()
