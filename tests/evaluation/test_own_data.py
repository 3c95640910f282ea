"""A user's own evaluation data: each format read from written files (good and malformed), kind detection,
metrics against independent references (scipy, sklearn, sentence-transformers' thresholds, pytrec_eval),
exact search = faiss, and the `eval --dataset` command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from conftest import assert_one_line_error, bag_of_words, run_cli
from scipy.stats import pearsonr, spearmanr
from sentence_transformers.evaluation import BinaryClassificationEvaluator
from sklearn.metrics import average_precision_score

from sentforge.support.errors import ConfigError, InputFileError
from sentforge.evaluation import evaluate, evaluate_datasets, load_dataset
from sentforge.evaluation.own import detect_kind, load_own_datasets, parse_dataset_spec
from sentforge.evaluation.own.pairs import (
    accuracy_f1_at,
    best_accuracy_threshold,
    best_f1_threshold,
)
from sentforge.evaluation.own.reranking import read_reranking, reranking_metrics
from sentforge.evaluation.own.retrieval import BeirRetrievalTask, trec_metrics
from sentforge.evaluation.ranking import RankingQuery

WORDS = "cat dog park rain sun tea cup bank loan card visa job car road sea fish".split()


def sentence(rng: np.random.Generator) -> str:
    return " ".join(rng.choice(WORDS, size=int(rng.integers(2, 6))))


def write_table(path: Path, rows: list[dict]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        sep = "\t" if path.suffix == ".tsv" else ","
        header = list(rows[0])
        path.write_text("\n".join([sep.join(header), *(sep.join(str(r[h]) for h in header) for r in rows)]) + "\n",
                        encoding="utf-8")
    return path


def pair_rows(n: int, seed: int, target: str) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [{"sentence1": sentence(rng), "sentence2": sentence(rng),
             target: round(float(rng.uniform(0, 5)), 2) if target == "score" else int(rng.random() < 0.4)}
            for _ in range(n)]


def cosines(encoder, first, second) -> np.ndarray:
    a, b = encoder.encode(first).astype(np.float64), encoder.encode(second).astype(np.float64)
    return np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


# ---------------------------------------------------------------------------------------------------------
# Scored and labelled pairs
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".jsonl"])
def test_scored_pairs_correlations_match_scipy(tmp_path, suffix):
    rows = pair_rows(40, 0, "score")
    task = load_dataset(write_table(tmp_path / f"sts{suffix}", rows))
    assert task.metadata.main_metric == "spearman" and task.metadata.family == "own"
    encoder = bag_of_words()
    system = cosines(encoder, [r["sentence1"] for r in rows], [r["sentence2"] for r in rows])
    gold = [r["score"] for r in rows]
    metrics = task.evaluate(encoder)
    assert metrics["spearman"] == pytest.approx(100 * spearmanr(system, gold)[0], abs=1e-9)
    assert metrics["pearson"] == pytest.approx(100 * pearsonr(system, gold)[0], abs=1e-9)
    assert metrics["n"] == 40


def test_thresholds_match_sentence_transformers():
    rng = np.random.default_rng(1)
    for trial in range(30):
        n = int(rng.integers(5, 60))
        scores = np.round(rng.uniform(-1, 1, n), 1 if trial % 2 else 6)  # odd trials: many ties
        labels = (rng.random(n) < 0.4).astype(int)
        labels[0], labels[1] = 1, 0
        accuracy, threshold = best_accuracy_threshold(scores, labels)
        ref_accuracy, ref_threshold = BinaryClassificationEvaluator.find_best_acc_and_threshold(scores, labels, True)
        assert accuracy == pytest.approx(ref_accuracy, abs=1e-12)
        assert accuracy_f1_at(scores, labels, threshold)[0] == pytest.approx(accuracy, abs=1e-12)
        assert accuracy_f1_at(scores, labels, ref_threshold)[0] == pytest.approx(accuracy, abs=1e-12)
        f1, f1_threshold = best_f1_threshold(scores, labels)
        ref_f1, _, _, ref_f1_threshold = BinaryClassificationEvaluator.find_best_f1_and_threshold(scores, labels, True)
        assert f1 == pytest.approx(ref_f1, abs=1e-12)
        assert f1_threshold == pytest.approx(ref_f1_threshold, abs=1e-12)
        assert accuracy_f1_at(scores, labels, f1_threshold)[1] == pytest.approx(f1, abs=1e-12)


def test_labelled_pairs_threshold_from_dev_versus_test_optimal(tmp_path):
    test_rows, dev_rows = pair_rows(60, 2, "label"), pair_rows(50, 3, "label")
    test_path, dev_path = write_table(tmp_path / "test.tsv", test_rows), write_table(tmp_path / "dev.jsonl", dev_rows)
    encoder = bag_of_words()
    scores = cosines(encoder, [r["sentence1"] for r in test_rows], [r["sentence2"] for r in test_rows])
    labels = np.array([r["label"] for r in test_rows])
    dev_scores = cosines(encoder, [r["sentence1"] for r in dev_rows], [r["sentence2"] for r in dev_rows])
    dev_labels = np.array([r["label"] for r in dev_rows])

    own = load_dataset(test_path).evaluate(encoder)
    assert own["threshold_source"] == "self"  # the evaluated file itself: a dev file scored during training too
    assert own["ap"] == pytest.approx(100 * average_precision_score(labels, scores), abs=1e-9)
    assert own["accuracy"] == pytest.approx(
        100 * BinaryClassificationEvaluator.find_best_acc_and_threshold(scores, labels, True)[0], abs=1e-9)

    with_dev = load_dataset(test_path, dev=dev_path).evaluate(encoder)
    assert with_dev["threshold_source"] == "dev" and with_dev["ap"] == own["ap"]
    _, dev_threshold = BinaryClassificationEvaluator.find_best_acc_and_threshold(dev_scores, dev_labels, True)
    assert with_dev["accuracy_threshold"] == pytest.approx(dev_threshold, abs=1e-6)  # float32 vectors
    assert with_dev["accuracy"] == pytest.approx(100 * np.mean((scores >= dev_threshold) == labels), abs=1e-9)
    assert with_dev["accuracy_test_optimal"] == pytest.approx(own["accuracy"], abs=1e-12)
    assert with_dev["accuracy"] <= with_dev["accuracy_test_optimal"]
    assert with_dev["f1"] <= with_dev["f1_test_optimal"]
    assert with_dev["accuracy_threshold"] != own["accuracy_threshold"]  # the dev file did choose


def swapped(row: dict) -> dict:
    return row | ({"sentence1": row["sentence2"], "sentence2": row["sentence1"]} if "sentence1" in row else {})


@pytest.mark.parametrize("target", ["score", "label", "query"])
def test_repeated_rows_are_counted_once_with_a_warning_naming_the_file(tmp_path, caplog, target):
    """Every row twice (the second copy of a pair in the other order): the same metrics, units and per-unit
    scores as the file once; a unit counted twice would narrow every paired interval by about √2."""
    rows = (pair_rows(30, 4, target) if target != "query" else
            [{"query": f"q {w}", "positive": [f"{w} cat"], "negative": ["sea fish", f"{w} dog"]} for w in WORDS])
    once = write_table(tmp_path / "once.jsonl", rows)
    twice = write_table(tmp_path / "twice.jsonl", rows + [swapped(r) for r in rows])
    encoder = bag_of_words()
    single, doubled = load_dataset(once), load_dataset(twice)
    assert [(r.levelname, r.getMessage()) for r in caplog.records if "repeat" in r.getMessage()] == [
        ("WARNING", f"{twice}: {len(rows)} of its {2 * len(rows)} rows repeat an earlier row (row {len(rows) + 1} "
                    f"repeats row 1); each distinct {'query' if target == 'query' else 'pair'} is counted once: "
                    f"{len(rows)} units")]
    assert doubled.evaluate(encoder) == single.evaluate(encoder)
    units, units_twice = single.item_scores(encoder), doubled.item_scores(encoder)
    assert len(units.values) == len(units_twice.values) == len(rows)
    np.testing.assert_array_equal(units_twice.values, units.values)


@pytest.mark.parametrize("content, fragments", [
    ('{"sentence1": "a", "sentence2": "b", "label": 1}\n{"sentence1": "a", oops\n', ["bad.jsonl:2", "JSON"]),
    ('{"sentence1": "a", "sentence2": "b", "label": 1}\n{"sentence1": "a", "label": 0}\n',
     ["bad.jsonl:2", "'sentence2'", "present: sentence1, label"]),
    ('{"sentence1": "a", "sentence2": "b", "label": 1}\n{"sentence1": "a", "sentence2": "c", "label": 2}\n',
     ["bad.jsonl:2", "label must be 0 or 1"]),
    ('{"sentence1": "a", "sentence2": "b", "label": 1}\n{"sentence1": "a", "sentence2": "c", "label": ""}\n',
     ["bad.jsonl:2", "label must be 0 or 1"]),
    ('{"sentence1": "a", "sentence2": "", "label": 1}\n', ["bad.jsonl:1", "sentence2 must be a non-empty"]),
])
def test_malformed_labelled_pairs_name_file_and_line(tmp_path, content, fragments):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        load_dataset(path, kind="labelled-pairs")
    for fragment in fragments:
        assert fragment in str(err.value)


def test_malformed_scored_table_names_line(tmp_path):
    path = tmp_path / "sts.tsv"
    path.write_text("sentence1\tsentence2\tscore\na b\tc d\t3.5\ne f\tg h\thigh\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"sts\.tsv:3: score 'high' is not a number"):
        load_dataset(path)
    path.write_text("sentence1\tsentence2\tscore\na b\tc d\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"sts\.tsv:2: 2 fields, the header has 3"):
        load_dataset(path)


# ---------------------------------------------------------------------------------------------------------
# Kind detection
# ---------------------------------------------------------------------------------------------------------

def test_kind_detection_and_explicit_kinds(tmp_path):
    scored = write_table(tmp_path / "a.csv", pair_rows(3, 0, "score"))
    labelled = write_table(tmp_path / "b.tsv", pair_rows(3, 0, "label"))
    reranking = write_table(tmp_path / "c.jsonl", [{"query": "q", "positive": ["p"], "negative": ["n"]}])
    beir = write_beir(tmp_path / "beir", np.random.default_rng(0), n_docs=5, n_queries=2)
    assert [detect_kind(p) for p in (scored, labelled, reranking, beir, beir / "qrels" / "test.tsv")] == [
        "scored-pairs", "labelled-pairs", "reranking", "retrieval", "retrieval"]
    assert parse_dataset_spec(f"reranking:{reranking}") == ("reranking", reranking)
    assert parse_dataset_spec("c:/odd:name.jsonl") == (None, Path("c:/odd:name.jsonl"))
    both = write_table(tmp_path / "d.jsonl", [{"sentence1": "a", "sentence2": "b", "score": 1, "label": 1}])
    with pytest.raises(InputFileError, match="both 'score' and 'label'; give the kind"):
        detect_kind(both)
    assert load_dataset(both, kind="scored-pairs").metadata.main_metric == "spearman"
    odd = write_table(tmp_path / "e.tsv", [{"text": "a", "other": "b"}])
    with pytest.raises(InputFileError,
                       match=r"e\.tsv:2: cannot tell the kind of data from the columns \(text, other\)"):
        detect_kind(odd)
    with pytest.raises(InputFileError, match="lacks corpus.jsonl or queries.jsonl"):
        detect_kind(tmp_path)
    with pytest.raises(ConfigError, match="unknown dataset kind"):
        load_dataset(scored, kind="sts")
    with pytest.raises(ConfigError, match="a dev file sets the thresholds of labelled-pairs data"):
        load_dataset(scored, dev=labelled)


# ---------------------------------------------------------------------------------------------------------
# Re-ranking
# ---------------------------------------------------------------------------------------------------------

def test_reranking_metrics_match_pytrec_eval_on_random_rankings():
    rng = np.random.default_rng(4)
    queries, scores, qrels, run, run_top10 = [], [], {}, {}, {}
    for q in range(40):
        n_pos, n_neg = int(rng.integers(1, 5)), int(rng.integers(0, 25))
        relevant = (False,) * n_neg + (True,) * n_pos
        queries.append(RankingQuery(f"q{q}", "query", tuple(f"d{i}" for i in range(len(relevant))), relevant))
        scores.append(rng.normal(size=len(relevant)))
        qrels[f"q{q}"] = {f"d{i}": int(r) for i, r in enumerate(relevant)}
        run[f"q{q}"] = {f"d{i}": float(s) for i, s in enumerate(scores[-1])}
        top10 = np.argsort(-scores[-1])[:10]
        run_top10[f"q{q}"] = {f"d{i}": float(scores[-1][i]) for i in top10}
    ours = reranking_metrics(queries, scores)
    full = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10"}).evaluate(run)
    cut = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run_top10)
    assert ours["map"] == pytest.approx(100 * np.mean([r["map"] for r in full.values()]), abs=1e-9)
    assert ours["ndcg@10"] == pytest.approx(100 * np.mean([r["ndcg_cut_10"] for r in full.values()]), abs=1e-9)
    assert ours["mrr@10"] == pytest.approx(100 * np.mean([r["recip_rank"] for r in cut.values()]), abs=1e-9)


def test_reranking_file_reading_and_errors(tmp_path):
    path = write_table(tmp_path / "r.jsonl", [
        {"query": "cat", "positive": ["cat dog"], "negative": ["sea fish", "car road"]},
        {"query": "tea", "positive": [], "negative": ["cup"]}])
    task = load_dataset(path)
    assert len(task.queries) == 1 and task.queries[0].candidates == ("sea fish", "car road", "cat dog")
    metrics = task.evaluate(bag_of_words())
    assert metrics["n_dropped_without_positive"] == 1 and metrics["n_queries"] == 1
    path.write_text('{"query": "cat", "positive": ["a"], "negative": ["b"]}\n{"query": "x", "positives": ["a"]}\n')
    with pytest.raises(InputFileError, match=r"r\.jsonl:2: no column 'positive' \(present: query, positives\)"):
        read_reranking(path)
    path.write_text('{"query": "cat", "positive": "a", "negative": ["b"]}\n')
    with pytest.raises(InputFileError, match=r"r\.jsonl:1: positive must be a list of non-empty strings"):
        read_reranking(path)


# ---------------------------------------------------------------------------------------------------------
# Retrieval (BEIR layout)
# ---------------------------------------------------------------------------------------------------------

def write_beir(folder: Path, rng: np.random.Generator, n_docs: int, n_queries: int) -> Path:
    (folder / "qrels").mkdir(parents=True)
    write_table(folder / "corpus.jsonl", [{"_id": f"d{i}", "title": sentence(rng) if i % 2 else "",
                                           "text": sentence(rng)} for i in range(n_docs)])
    write_table(folder / "queries.jsonl", [{"_id": f"q{i}", "text": sentence(rng)} for i in range(n_queries)])
    rows = [{"query-id": f"q{q}", "corpus-id": f"d{d}", "score": int(rng.integers(1, 3))}
            for q in range(n_queries) for d in rng.choice(n_docs, size=int(rng.integers(1, 4)), replace=False)]
    write_table(folder / "qrels" / "test.tsv", rows)
    return folder


def test_retrieval_metrics_match_pytrec_eval_on_random_rankings():
    rng = np.random.default_rng(5)
    qrels, run, ranked, judged = {}, {}, [], []
    for q in range(50):
        docs = [f"d{i}" for i in range(300)]
        chosen = rng.choice(300, size=int(rng.integers(1, 30)), replace=False)
        qrels[f"q{q}"] = {docs[i]: int(rng.integers(0, 4)) for i in chosen}
        qrels[f"q{q}"][docs[chosen[0]]] = int(rng.integers(1, 4))  # at least one relevant
        scores = rng.normal(size=300)
        top = np.argsort(-scores)[:100]
        run[f"q{q}"] = {docs[i]: float(scores[i]) for i in top}
        ranked.append([docs[i] for i in top])
        judged.append(qrels[f"q{q}"])
    ours = trec_metrics(ranked, judged)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map_cut_100", "recall_100"}).evaluate(run)
    for ours_key, trec_key in (("ndcg@10", "ndcg_cut_10"), ("map@100", "map_cut_100"), ("recall@100", "recall_100")):
        assert ours[ours_key] == pytest.approx(100 * np.mean([r[trec_key] for r in reference.values()]), abs=1e-9)


def test_exact_and_faiss_retrieval_agree_and_skip_the_query_itself(tmp_path):
    folder = write_beir(tmp_path / "beir", np.random.default_rng(6), n_docs=400, n_queries=30)
    with open(folder / "corpus.jsonl", "a", encoding="utf-8") as handle:  # a document sharing a query's id
        handle.write(json.dumps({"_id": "q0", "text": "identical"}) + "\n")
    with open(folder / "queries.jsonl", encoding="utf-8") as handle:
        first_query = json.loads(handle.readline())["text"]
    (folder / "corpus.jsonl").write_text((folder / "corpus.jsonl").read_text().replace(
        '"identical"', json.dumps(first_query)), encoding="utf-8")
    encoder = bag_of_words()
    exact = BeirRetrievalTask(folder, "beir", faiss_min_pool=10**9)
    faiss = BeirRetrievalTask(folder, "beir", faiss_min_pool=1)
    exact_ids, faiss_ids = exact.ranked_ids(encoder), faiss.ranked_ids(encoder)
    assert exact_ids == faiss_ids and all(len(ids) == 100 for ids in exact_ids)
    assert "q0" not in exact_ids[0]
    assert exact.evaluate(encoder) == faiss.evaluate(encoder)


def test_beir_errors_name_file_and_line(tmp_path):
    folder = write_beir(tmp_path / "beir", np.random.default_rng(7), n_docs=5, n_queries=2)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td1\tx\n")
    with pytest.raises(InputFileError, match=r"test\.tsv:2: score 'x' is not an integer"):
        load_dataset(folder)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq9\td1\t1\n")
    with pytest.raises(InputFileError, match="query-id 'q9' is not in"):
        load_dataset(folder)
    (folder / "queries.jsonl").write_text('{"id": "q0", "text": "a"}\n')
    with pytest.raises(InputFileError, match=r"queries\.jsonl:1: no column '_id' \(present: id, text\)"):
        load_dataset(folder)


# ---------------------------------------------------------------------------------------------------------
# Runner and command line
# ---------------------------------------------------------------------------------------------------------

def test_evaluate_accepts_task_instances_without_a_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("SENTFORGE_DATA", raising=False)
    task = load_dataset(write_table(tmp_path / "sts.jsonl", pair_rows(20, 8, "score")))
    report = evaluate(bag_of_words(), [task])
    assert report["tasks"][task.name]["main_score"] == task.evaluate(bag_of_words())["spearman"]
    assert report["config"]["data_dir"] is None
    with pytest.raises(ConfigError, match="no data directory"):
        evaluate(bag_of_words(), ["STS12", task])


def test_cli_eval_dataset(tiny_bert_dir, tmp_path, capsys):
    scored = write_table(tmp_path / "sts.tsv", pair_rows(12, 9, "score"))
    labelled = write_table(tmp_path / "para.jsonl", pair_rows(12, 10, "label"))
    dev = write_table(tmp_path / "dev.jsonl", pair_rows(12, 11, "label"))
    rerank = write_table(tmp_path / "rerank.jsonl", [{"query": "cat", "positive": ["cat dog"], "negative": ["sea"]}])
    output = tmp_path / "out.json"
    code, out, _ = run_cli(["eval", "--model", tiny_bert_dir, "--dataset", scored, "--dataset", labelled,
                            "--dataset", f"reranking:{rerank}", "--dev", dev, "--output", output], capsys)
    assert code in (0, None), out
    report = json.loads(output.read_text())
    assert list(report["tasks"]) == [str(scored), str(labelled), f"reranking:{rerank}"]
    assert report["tasks"][str(labelled)]["metrics"]["threshold_source"] == "dev"
    assert f"reranking:{rerank}" in out and output.with_suffix(".md").exists()

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sentence1": "a", "sentence2": "b", "score": 1}\n{"sentence1": "a", "score": 2}\n')
    code, _, err = run_cli(["eval", "--model", tiny_bert_dir, "--dataset", bad, "--output", tmp_path / "b.json"],
                           capsys)
    assert_one_line_error(code, err, "bad.jsonl:2", "'sentence2'", "found: sentence1, score")
    code, _, err = run_cli(["eval", "--model", tiny_bert_dir, "--dataset", scored, "--dev", dev,
                            "--output", tmp_path / "c.json"], capsys)
    assert_one_line_error(code, err, "--dev", "no --dataset is labelled-pairs")
    assert load_own_datasets([str(scored)])[0].name == str(scored)


def test_evaluate_datasets_writes_the_report_of_the_eval_command(tiny_bert_dir, tmp_path, capsys):
    scored = write_table(tmp_path / "sts.tsv", pair_rows(12, 9, "score"))
    labelled = write_table(tmp_path / "para.jsonl", pair_rows(12, 10, "label"))
    dev = write_table(tmp_path / "dev.jsonl", pair_rows(12, 11, "label"))
    code, _, err = run_cli(["eval", "--model", tiny_bert_dir, "--dataset", scored, "--dataset", labelled, "--dev", dev,
                            "--output", tmp_path / "cli.json"], capsys)
    assert code in (0, None), err
    report = evaluate_datasets(str(tiny_bert_dir), tmp_path / "python.json", datasets=[str(scored), str(labelled)],
                               dev=dev)
    written = {name: json.loads((tmp_path / name).read_text())["tasks"] for name in ("cli.json", "python.json")}
    assert list(report["tasks"]) == list(written["cli.json"]) == [str(scored), str(labelled)]
    assert ({name: entry["metrics"] for name, entry in written["python.json"].items()}
            == {name: entry["metrics"] for name, entry in written["cli.json"].items()})
    # the output is checked against the datasets before any is read
    before = scored.read_bytes()
    with pytest.raises(ConfigError, match="is also the --dataset"):
        evaluate_datasets(str(tiny_bert_dir), scored, datasets=[str(scored)])
    assert scored.read_bytes() == before
