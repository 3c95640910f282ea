"""The distil recipe: a student learns a teacher's vectors by MSE (the loss falls and the vectors move towards
the teacher's), a Dense layer bridges a larger teacher (a meta-embedding), and the result loads in
sentence-transformers with identical vectors."""

from __future__ import annotations

import numpy as np
import pytest

import sentforge
from sentforge.support.errors import ConfigError
from sentforge.meta import MetaEncoder

from conftest import CORPUS

pytestmark = pytest.mark.usefixtures("one_torch_thread")
TEXTS = sorted(set(CORPUS))


def test_distilling_a_meta_embedding_gives_one_sentence_transformers_model(tiny_bert_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    start = sentforge.load(tiny_bert_dir)
    meta_dir = tmp_path / "meta"
    MetaEncoder([start, sentforge.load(tiny_bert_dir)], "concat").fit(TEXTS).save(meta_dir)
    teacher = sentforge.load(meta_dir).encode(TEXTS)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"{t}\n" for t in TEXTS), encoding="utf-8")
    before = start.dim
    student = sentforge.train("distil", str(tiny_bert_dir), corpus, tmp_path / "student", teacher=str(meta_dir),
                              steps=40, lr=1e-3, batch_size=6, warmup_ratio=0.0)
    assert before == 32 and student.dim == teacher.shape[1] == 64
    summary = (tmp_path / "student" / "train.json").read_text(encoding="utf-8")
    assert '"teacher_dim": 64' in summary
    distilled = student.encode(TEXTS)
    assert np.mean((distilled - teacher) ** 2) < 0.5 * np.mean(teacher ** 2)  # well below predicting zeros
    reference = SentenceTransformer(str(tmp_path / "student"), device="cpu").encode(TEXTS)
    np.testing.assert_allclose(reference, distilled, atol=1e-6)


def test_the_teacher_encodes_each_text_once_and_only_the_texts_the_run_trains_on(tiny_bert_dir, tmp_path,
                                                                                   monkeypatch):
    from sentforge.objectives import distillation

    encoded = []
    encode = sentforge.Encoder.encode

    def counting(self, texts, *args, **kwargs):
        encoded.extend(texts)
        return encode(self, texts, *args, **kwargs)

    teacher = sentforge.load(tiny_bert_dir)
    monkeypatch.setattr(teacher, "encode", counting.__get__(teacher))
    targets = distillation.TeacherVectors(teacher, batch_size=4)
    first = targets(TEXTS[:3])
    again = targets([TEXTS[1], TEXTS[3], TEXTS[1]])
    assert encoded == TEXTS[:4]  # a text asked for again is not encoded again
    np.testing.assert_allclose(again, np.stack([first[1], teacher.encode([TEXTS[3]])[0], first[1]]), atol=1e-6)

    # Two steps of 3 texts: the teacher encodes those 6 of the corpus's texts, not all of them.
    monkeypatch.setattr(sentforge.Encoder, "encode", counting)
    encoded.clear()
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"{t}\n" for t in TEXTS), encoding="utf-8")
    sentforge.train("distil", str(tiny_bert_dir), corpus, tmp_path / "student", teacher=str(tiny_bert_dir),
                    steps=2, batch_size=3, warmup_ratio=0.0)
    assert len(TEXTS) > 6 and len(encoded) == len(set(encoded)) == 6 and set(encoded) <= set(TEXTS)


def test_distil_without_a_teacher_is_refused(tiny_bert_dir, tmp_path):
    with pytest.raises(ConfigError, match="teacher"):
        sentforge.train("distil", str(tiny_bert_dir), TEXTS, tmp_path / "student", steps=1)


def test_distil_plan_takes_the_leading_meta_embedding_and_its_best_member():
    from sentforge.adaptation.candidates.distil import distil_plan
    from sentforge.adaptation.result import NotRun, finished

    results = {"m.start": finished("start", "start", None, dev=50.0),
               "m.tsdae": finished("train", "tsdae", None, dev=52.0),
               "m.mnrl": finished("train", "mnrl", None, dev=55.0),
               "m.ct": NotRun("train", "ct", "skipped"),
               "meta-concat": finished("meta", "meta-concat", None, dev=56.0, members=["m.tsdae", "m.mnrl"])}
    assert distil_plan(results) == ("meta-concat", "m.mnrl", "")
    results["m.mnrl"] = results["m.mnrl"].update(dev=57.0)
    meta, member, why = distil_plan(results)
    assert meta is None and member is None and why == "m.mnrl, not a meta-embedding, leads on dev"


def test_adapt_distils_a_leading_meta_embedding_into_one_model(tiny_bert_dir, tmp_path, monkeypatch):
    # The dev task adds 10 points to meta-embeddings, so that one leads and is distilled.
    import sentforge.evaluation as evaluation
    from sentence_transformers import SentenceTransformer

    import adapt_worker
    from adapt_domain import domain as make_domain

    data = make_domain.__wrapped__(tmp_path)
    load_dataset_ = evaluation.load_dataset

    def favouring_meta(*args, **kwargs):
        task = load_dataset_(*args, **kwargs)
        evaluate = task.evaluate
        task.evaluate = lambda model: {**evaluate(model), "map": evaluate(model)["map"] + 10 * isinstance(
            model, MetaEncoder)}
        return task

    monkeypatch.setattr(evaluation, "load_dataset", favouring_meta)
    report = sentforge.adapt(str(tiny_bert_dir), data / "unlabelled.txt", data / "dev.jsonl", tmp_path / "adapted",
                             **{**adapt_worker.FAST, "candidates": ["tsdae", "meta-concat", "distil"]},
                             members=[str(tiny_bert_dir)])
    distilled = report["candidates"]["distil"]
    assert distilled["status"] == "done", distilled
    assert distilled["teacher"] == "meta-concat" and distilled["member"] in report["candidates"]
    # Its cost to run, beside the meta-embedding's: one encoder against all the members, and its own encode speed.
    teacher = report["candidates"]["meta-concat"]
    assert distilled["speed"]["encoders"] == 1 and teacher["speed"]["encoders"] == len(teacher["members"]) == 3
    assert distilled["speed"]["texts_per_second"] > 0 and teacher["speed"]["texts_per_second"] > 0
    assert "--teacher" in distilled["commands"][-1]
    texts = sorted(set(CORPUS))
    np.testing.assert_allclose(SentenceTransformer(distilled["model_path"], device="cpu").encode(texts),
                               sentforge.load(distilled["model_path"]).encode(texts), atol=1e-6)
    assert sentforge.load(distilled["model_path"]).dim == sentforge.load(
        report["candidates"]["meta-concat"]["model_path"]).dim
