"""PAUSE: the loss against values computed here by hand from the formula (both nnPU branches, the
annealing weight), class-proportional batches, NLI readers and label_fraction, a tiny training run
whose loss falls, and `sentforge train pause` on tiny files."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
import torch

import sentforge
from sentforge.data.nli import label_fraction, read_nli_pairs
from sentforge.data.samplers import ProportionalBatches, proportional_order
from sentforge.support.errors import ConfigError, InputFileError
from sentforge.objectives.pause import PAUSE, annealing_weight, nn_pu_risk, pu_loss
from sentforge.training.trainer import Trainer, TrainingConfig

from conftest import DATA, REPO, assert_one_line_error, needs, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def hand_nnpu(positive: list[float], unlabelled: list[float], prior: float) -> tuple[float, bool]:
    """(objective value, whether the non-negative branch is taken), straight from the formula."""
    positive_risk = prior * sum(sig(-z) for z in positive) / len(positive)
    negative_risk = sum(sig(z) for z in unlabelled) / len(unlabelled) - prior * sum(sig(z) for z in positive) / len(
        positive)
    return (-negative_risk, True) if negative_risk < 0 else (positive_risk + negative_risk, False)


# --- the loss ------------------------------------------------------------------------------------

def test_nnpu_ordinary_branch():
    positive, unlabelled, prior = [0.5, -1.0], [0.2, 1.5, -0.3], 0.3
    expected, corrected = hand_nnpu(positive, unlabelled, prior)
    assert not corrected
    value = nn_pu_risk(torch.tensor(positive), torch.tensor(unlabelled), prior)
    assert value.item() == pytest.approx(expected, abs=1e-6)


def test_nnpu_non_negative_branch_value_and_gradient():
    positive, unlabelled, prior = [3.0, 2.0], [-4.0, -3.0], 0.5
    expected, corrected = hand_nnpu(positive, unlabelled, prior)
    assert corrected and expected > 0
    pos = torch.tensor(positive, requires_grad=True)
    unl = torch.tensor(unlabelled, requires_grad=True)
    value = nn_pu_risk(pos, unl, prior)
    value.backward()
    assert value.item() == pytest.approx(expected, abs=1e-6)
    # -R- = prior * mean sigmoid(z_pos) - mean sigmoid(z_unl): only the negative risk is optimised.
    for z, g in zip(positive, pos.grad.tolist()):
        assert g == pytest.approx(prior / len(positive) * sig(z) * (1 - sig(z)), abs=1e-6)
    for z, g in zip(unlabelled, unl.grad.tolist()):
        assert g == pytest.approx(-sig(z) * (1 - sig(z)) / len(unlabelled), abs=1e-6)


def test_pu_loss_averages_the_classes_present():
    logits = torch.tensor([[1.0, -2.0, 0.5], [0.3, 2.0, -1.0], [-0.7, 0.1, 0.9], [0.2, -0.4, 1.1], [2.5, 0.0, -0.2]])
    positives = torch.zeros(5, 3, dtype=torch.bool)
    positives[0, 0] = positives[1, 1] = positives[4, 0] = True  # class 2 has no labelled pair here
    unlabelled = torch.tensor([False, False, True, True, False])
    priors = [0.2, 0.5, 0.3]
    rows = logits.tolist()
    class0 = hand_nnpu([rows[0][0], rows[4][0]], [rows[2][0], rows[3][0]], 0.2)[0]
    class1 = hand_nnpu([rows[1][1]], [rows[2][1], rows[3][1]], 0.5)[0]
    assert pu_loss(logits, positives, unlabelled, priors).item() == pytest.approx((class0 + class1) / 2, abs=1e-6)
    assert pu_loss(logits, positives, torch.zeros(5, dtype=torch.bool), priors).item() == 0.0


def test_annealing_weight():
    assert annealing_weight(0, 100) == 0.0
    assert annealing_weight(50, 100) == pytest.approx(0.125)  # (1/2) ** 3
    assert annealing_weight(100, 100) == 1.0
    assert annealing_weight(50, 100, power=1.0) == pytest.approx(0.5)


PAIRS = [("a man is playing a guitar", "a man plays music", "entailment"),
         ("two women are walking on the beach", "nobody is outside", "contradiction"),
         ("a child eats an apple", "a kid is hungry", "neutral"),
         ("the cat sat on the mat", "a cat is on a mat", "entailment"),
         ("the train leaves at noon", "the train never leaves", None),
         ("a dog runs in the park", "an animal is outside", None)]
CLASSES = ["contradiction", "entailment", "neutral"]


def test_objective_loss_is_supervised_plus_annealed_pu(tiny_bert_dir):
    torch.manual_seed(0)
    encoder = sentforge.build_encoder(tiny_bert_dir, pooling="mean")
    objective = PAUSE(encoder, CLASSES, total_steps=10).eval()
    first, second, labels = zip(*PAIRS)
    with torch.no_grad():
        z = objective.logits(first, second).numpy().astype(np.float64)
    # Hand-computed: cross-entropy over the labelled rows, one-vs-rest nnPU with priors 1/3.
    supervised = np.mean([np.log(np.exp(z[i]).sum()) - z[i, CLASSES.index(label)]
                          for i, label in enumerate(labels) if label is not None])
    unlabelled_rows = [i for i, label in enumerate(labels) if label is None]
    terms = [hand_nnpu([z[i, k] for i, label in enumerate(labels) if label == name],
                       [z[i, k] for i in unlabelled_rows], 1 / 3)[0] for k, name in enumerate(CLASSES)]
    pu = float(np.mean(terms))
    for step, weight in ((0, 0.0), (5, 0.125), (10, 1.0)):
        objective.set_step(step)
        with torch.no_grad():
            loss = objective(PAIRS).item()
        assert loss == pytest.approx(supervised + weight * pu, abs=1e-5)
        assert objective.last_stats["pu_weight"] == pytest.approx(weight)
    baseline = PAUSE(encoder, CLASSES, total_steps=10, use_pu=False).eval()
    baseline.head.load_state_dict(objective.head.state_dict())
    baseline.set_step(10)
    with torch.no_grad():
        assert baseline(PAIRS).item() == pytest.approx(supervised, abs=1e-5)


def test_positive_only_has_no_supervised_part(tiny_bert_dir):
    encoder = sentforge.build_encoder(tiny_bert_dir, pooling="mean")
    objective = PAUSE(encoder, ["positive"], total_steps=4).eval()
    batch = [(a, b, "positive" if label else None) for a, b, label in PAIRS]
    objective.set_step(0)
    with torch.no_grad():
        assert objective(batch).item() == 0.0  # w(0) = 0 and no negative labels
        objective.set_step(4)
        z = objective.logits(*list(zip(*batch))[:2])[:, 0].tolist()
        loss = objective(batch).item()
    expected = hand_nnpu([z[i] for i, e in enumerate(batch) if e[2]], [z[i] for i, e in enumerate(batch) if not e[2]],
                         1.0)[0]
    assert loss == pytest.approx(expected, abs=1e-5)


def test_multi_label_supervised_part_is_binary_cross_entropy(tiny_bert_dir):
    objective = PAUSE(sentforge.build_encoder(tiny_bert_dir, pooling="mean"), ["a", "b"], total_steps=4,
                      multi_label=True).eval()
    batch = [("x y", "y z", ("a", "b")), ("p q", "q r", ("b",)), ("s t", "t u", None)]
    with torch.no_grad():
        z = objective.logits(*list(zip(*batch))[:2]).tolist()
        loss = objective(batch).item()  # step 0: the supervised part alone
    targets = [[1, 1], [0, 1]]
    expected = -np.mean([t * math.log(sig(v)) + (1 - t) * math.log(1 - sig(v))
                         for row, target in zip(z[:2], targets) for v, t in zip(row, target)])
    assert loss == pytest.approx(expected, abs=1e-5)


def test_objective_rejects_unknown_labels(tiny_bert_dir):
    objective = PAUSE(sentforge.build_encoder(tiny_bert_dir, pooling="mean"), CLASSES, total_steps=4)
    with pytest.raises(ConfigError, match="not one of the classes"):
        objective([("a b", "c d", "paraphrase")])
    with pytest.raises(ConfigError, match="priors"):
        PAUSE(objective.encoder, CLASSES, total_steps=4, priors=[0.5, 0.5])


# --- batches -------------------------------------------------------------------------------------

def test_batches_mirror_the_composition():
    labels = ["a"] * 7 + ["b"] * 30 + ["c"] * 3 + [None] * 280
    examples = [(f"s{i}", f"t{i}", label) for i, label in enumerate(labels)]
    batches = ProportionalBatches(examples, batch_size=16, seed=3)
    assert len(batches) == 20
    shares = {k: v / len(labels) for k, v in Counter(labels).items()}
    for batch in batches:
        counts = Counter(e[2] for e in batch)
        assert len(batch) == 16
        for label, share in shares.items():
            assert abs(counts.get(label, 0) - 16 * share) < 2
    seen = [e[0] for batch in batches for e in batch]
    assert sorted(seen) == sorted(e[0] for e in examples)  # every pair once per epoch
    # a class of 3 pairs in 320 is spread out, not bunched together
    positions = [i for i, e in enumerate(e for batch in batches for e in batch) if e[2] == "c"]
    assert min(np.diff(positions)) > 50


def test_batches_are_seeded():
    labels = ["x"] * 10 + [None] * 40
    assert (proportional_order(labels, 1) == proportional_order(labels, 1)).all()
    assert not (proportional_order(labels, 1) == proportional_order(labels, 2)).all()
    with pytest.raises(ConfigError):
        ProportionalBatches([("a", "b", None)], batch_size=2)


# --- readers and label_fraction --------------------------------------------------------------------

def test_label_fraction_is_stratified_and_seeded():
    pairs = [(f"s{i}", f"t{i}", label) for i, label in enumerate(["e"] * 100 + ["n"] * 50 + ["c"] * 10 + [None] * 5)]
    kept = label_fraction(pairs, 0.3, seed=0)
    counts = Counter(label for _, _, label in kept)
    assert counts == {"e": 30, "n": 15, "c": 3, None: 117}
    assert [p[:2] for p in kept] == [p[:2] for p in pairs]
    assert all(label in (None, original[2]) for (_, _, label), original in zip(kept, pairs))
    assert kept == label_fraction(pairs, 0.3, seed=0)
    assert kept != label_fraction(pairs, 0.3, seed=1)
    assert Counter(label for _, _, label in label_fraction(pairs, 0.01, seed=0)) == {"e": 1, "n": 1, "c": 1, None: 162}
    assert label_fraction(pairs, 1.0) == pairs
    with pytest.raises(ConfigError):
        label_fraction(pairs, 1.5)


def test_readers(tmp_path):
    snli = tmp_path / "SNLI"
    snli.mkdir()
    for split in ("dev", "test"):
        (snli / f"s1.{split}").write_text("A man sleeps . \nA dog barks . \n")
        (snli / f"s2.{split}").write_text("A person rests . \nA cat meows . \n")
        (snli / f"labels.{split}").write_text("entailment\ncontradiction\n")
    assert read_nli_pairs(snli)[:2] == [("A man sleeps .", "A person rests .", "entailment"),
                                        ("A dog barks .", "A cat meows .", "contradiction")]
    assert len(read_nli_pairs(snli)) == 4
    sick = tmp_path / "SICK_train.txt"
    sick.write_text("pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
                    "1\tA kid plays\tA child plays\t4.5\tENTAILMENT\n")
    assert read_nli_pairs(sick) == [("A kid plays", "A child plays", "entailment")]
    rte = tmp_path / "rte.tsv"
    rte.write_text("index\tsentence1\tsentence2\tlabel\n0\tIt rains.\tIt is wet.\tentailment\n")
    qnli = tmp_path / "qnli.tsv"
    qnli.write_text("index\tquestion\tsentence\n0\tWhy?\tBecause.\n")
    assert read_nli_pairs(rte) == [("It rains.", "It is wet.", "entailment")]
    assert read_nli_pairs(qnli) == [("Why?", "Because.", None)]
    table = tmp_path / "pairs.csv"
    table.write_text("sentence1,sentence2,label\nhello there,hi,entailment\n\"a, b\",c,\n")
    assert read_nli_pairs(table) == [("hello there", "hi", "entailment"), ("a, b", "c", None)]
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text('{"sentence1": "x y", "sentence2": "z"}\n{"sentence1": "u", "sentence2": "v", "label": "n"}\n')
    assert read_nli_pairs(jsonl) == [("x y", "z", None), ("u", "v", "n")]
    positives = tmp_path / "companies.txt"
    positives.write_text("acme corp\tacme inc\n")
    assert read_nli_pairs(positives) == [("acme corp", "acme inc", "positive")]


@pytest.mark.parametrize("name,text,where", [
    ("bad.txt", "one\ttwo\nonly one field\n", "bad.txt:2"),
    ("SICK_bad.txt", "pair_ID\tsentence_A\tsentence_B\tentailment_judgment\n1\ta\tb\n", "SICK_bad.txt:2"),
    ("bad.jsonl", '{"sentence1": "a", "sentence2": "b"}\n{"sentence1": "a"\n', "bad.jsonl:2"),
    ("bad.csv", "sentence1,sentence2,label\na,,entailment\n", "bad.csv:2"),
])
def test_malformed_lines_name_file_and_line(tmp_path, name, text, where):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputFileError, match=where):
        read_nli_pairs(path)


def test_snli_columns_must_match(tmp_path):
    for name, text in (("s1.dev", "a\nb\n"), ("s2.dev", "c\n"), ("labels.dev", "neutral\nneutral\n")):
        (tmp_path / name).write_text(text)
    with pytest.raises(InputFileError, match="must match"):
        read_nli_pairs(tmp_path)


@pytest.mark.slow
@needs(DATA / "senteval/downstream/SNLI")
def test_real_snli_and_sick():
    snli = read_nli_pairs(DATA / "senteval/downstream/SNLI")
    sick = read_nli_pairs(DATA / "senteval/downstream/SICK/SICK_train.txt")
    assert len(snli) == 19666 and len(sick) == 4500
    assert {label for _, _, label in snli + sick} == set(CLASSES)


# --- training ------------------------------------------------------------------------------------

TRAIN_PAIRS = [("a man is playing a guitar", "a man plays music", "entailment"),
               ("a man is playing a guitar", "nobody plays anything", "contradiction"),
               ("two women are walking on the beach", "two people walk by the sea", "entailment"),
               ("two women are walking on the beach", "the women are asleep at home", "contradiction"),
               ("a child eats an apple", "a kid eats fruit", "entailment"),
               ("a child eats an apple", "the child is not eating", "contradiction"),
               ("the train leaves at noon", "the train departs at midday", None),
               ("a dog runs in the park", "the dog is sleeping", None)] * 2


def test_training_lowers_the_loss(tiny_bert_dir, tmp_path):
    torch.manual_seed(0)
    encoder = sentforge.build_encoder(tiny_bert_dir, pooling="mean")
    steps = 30
    objective = PAUSE(encoder, ["contradiction", "entailment"], total_steps=steps)

    def full_loss() -> float:
        objective.eval()
        objective.set_step(steps)  # w = 1: supervised + PU
        with torch.no_grad():
            value = objective(TRAIN_PAIRS).item()
        objective.train()
        return value

    before = full_loss()
    objective.set_step(0)
    batches = ProportionalBatches(TRAIN_PAIRS, batch_size=8, seed=0)
    config = TrainingConfig(output_dir=tmp_path / "run", steps=steps, batch_size=1, optimizer="adam", lr=1e-3,
                            weight_decay=0.0, schedule="constant", show_progress=False)
    seen = []
    Trainer(encoder, objective, batches, config, callbacks=[lambda state: seen.append(objective.pu_weight)]).train()
    assert seen[-1] == 1.0 and seen[steps // 2 - 1] == pytest.approx(0.125)  # after step t: (t / T) ** 3
    assert objective.step == steps
    after = full_loss()
    assert after < 0.7 * before, (before, after)


def test_resume_continues_batches_and_annealing(tiny_bert_dir, tmp_path):
    import shutil

    def run_training(output, resume):
        torch.manual_seed(0)
        encoder = sentforge.build_encoder(tiny_bert_dir, pooling="mean")
        objective = PAUSE(encoder, ["contradiction", "entailment"], total_steps=4)
        config = TrainingConfig(output_dir=output, steps=4, batch_size=1, optimizer="adam", lr=1e-3, seed=5,
                                checkpoint_every=2, resume=resume, show_progress=False)
        result = Trainer(encoder, objective, ProportionalBatches(TRAIN_PAIRS, batch_size=4, seed=5), config).train()
        return objective, result

    straight, _ = run_training(tmp_path / "run", resume=False)
    shutil.rmtree(tmp_path / "run/checkpoints/step-00000004")
    resumed, result = run_training(tmp_path / "run", resume=True)
    assert result.steps == 4 and len(result.losses) == 2 and resumed.step == 4
    for (name, a), b in zip(straight.state_dict().items(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, msg=name)


# --- CLI -----------------------------------------------------------------------------------------

def test_cli_trains_and_chains_into_sts(tiny_bert_dir, tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"sentence1": a, "sentence2": b, "label": label}) + "\n"
                             for a, b, label in TRAIN_PAIRS))
    output = tmp_path / "pause"
    args = ["train", "pause", "--model", tiny_bert_dir, "--pairs", pairs, "--output", output, "--steps", 3,
            "--batch-size", 4, "--label-fraction", 0.5, "--seed", 1]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    summary = json.loads((output / "train.json").read_text())
    assert summary["steps"] == 3 and summary["classes"] == ["contradiction", "entailment"]
    assert summary["labelled"] == 6 and summary["examples"] == 16  # half of the 6 + 6 labels
    assert summary["training"]["optimizer"] == "adam" and summary["training"]["schedule"] == "polynomial"
    assert summary["training"]["lr"] * summary["training"]["schedule_end_factor"] == pytest.approx(5e-6)
    vectors = sentforge.load(output).encode(["a man plays music"])
    assert vectors.shape == (1, 32) and np.isfinite(vectors).all()

    code, _, err = run_cli(args, capsys)
    assert_one_line_error(code, err, "--overwrite")
    code, _, err = run_cli([*args, "--overwrite", "--supervised-only"], capsys)
    assert code == 0, err
    baseline = json.loads((output / "train.json").read_text())
    assert baseline["supervised_only"] and baseline["examples"] == 6  # the unlabelled pairs are left out
    records = [json.loads(line) for line in (output / "training/metrics.jsonl").read_text().splitlines()]
    logged = [r for r in records if "loss" in r]
    assert logged and all(r["pu_weight"] == 0.0 and r["labelled_share"] == 1.0 for r in logged)
    sts = tmp_path / "sts.tsv"
    sts.write_text("sentence1\tsentence2\tscore\n" + "".join(f"{a}\t{b}\t{i % 5}\n"
                                                            for i, (a, b, _) in enumerate(TRAIN_PAIRS)))
    code, _, err = run_cli(["train", "sts", "--model", output, "--corpus", sts, "--output", tmp_path / "sts",
                            "--steps", 2, "--batch-size", 4], capsys)
    assert code == 0, err


def test_cli_bad_input_exits_2(tiny_bert_dir, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("sentence1,sentence2,label\na b,c d,entailment\nonly one,\n")
    code, _, err = run_cli(["train", "pause", "--model", tiny_bert_dir, "--pairs", bad, "--output", tmp_path / "o"],
                           capsys)
    assert_one_line_error(code, err, "bad.csv:3")
    assert len(err.strip().splitlines()) == 1
    unlabelled = tmp_path / "unlabelled.csv"
    unlabelled.write_text("sentence1,sentence2,label\na b,c d,\n")
    code, _, err = run_cli(["train", "pause", "--model", tiny_bert_dir, "--pairs", unlabelled, "--output",
                            tmp_path / "o"], capsys)
    assert_one_line_error(code, err, "no labelled pairs")


# --- benchmark drivers (benchmarks/experiments/pause_label_efficiency.py, pause_positive_only.py) ----

@pytest.fixture
def drivers(monkeypatch):
    import importlib

    monkeypatch.syspath_prepend(str(REPO / "benchmarks" / "experiments"))
    return importlib.import_module("pause_label_efficiency"), importlib.import_module("pause_positive_only")


def test_plan_follows_the_seed_protocol(drivers):
    efficiency, _ = drivers
    runs = efficiency.plan(efficiency.FRACTIONS, efficiency.SEEDS, efficiency.MULTI_SEED_FRACTIONS,
                           efficiency.METHODS)
    seeds = {}
    for run in runs:
        seeds.setdefault((run.method, run.fraction), []).append(run.seed)
    assert seeds == {(m, f): ([0, 1, 2] if f in (1.0, 0.1, 0.01) else [0])
                     for m in ("pause", "supervised") for f in (1.0, 0.5, 0.3, 0.1, 0.05, 0.01)}
    assert len({run.name for run in runs}) == len(runs) == 24
    assert efficiency.budget_steps(None, 2.0, examples=1000, batch_size=64) == 30  # 2 x 15 whole batches
    assert efficiency.budget_steps(None, 0.01, examples=100, batch_size=64) == 1
    assert efficiency.budget_steps(7, None, examples=100, batch_size=64) == 7


def test_label_efficiency_report(drivers, tmp_path):
    efficiency, _ = drivers
    save = efficiency.check_config
    save(tmp_path, {"model": "m", "pairs": ["SNLI"], "steps": 10, "epochs": None, "batch_size": 8})
    families = {"STSBenchmark": "sts", "SICKRelatedness": "sts"}
    for method, fraction, seed, stsb, sick in [("pause", 1.0, 0, 80.0, 70.0), ("pause", 1.0, 1, 82.0, 72.0),
                                               ("supervised", 1.0, 0, 78.0, 70.0), ("pause", 0.1, 0, 79.0, 69.0),
                                               ("supervised", 0.1, 0, 70.0, 60.0)]:
        run = efficiency.Run(method, fraction, seed)
        (tmp_path / run.name).mkdir()
        (tmp_path / run.name / "result.json").write_text(json.dumps({
            "method": method, "fraction": fraction, "seed": seed, "scores": {"STSBenchmark": stsb,
                                                                              "SICKRelatedness": sick},
            "families": families, "sts_avg": (stsb + sick) / 2, "transfer_avg": None}))
    text = efficiency.markdown([tmp_path])
    pause_full = np.array([75.0, 77.0])
    assert f"| 100 % | {pause_full.mean():.2f} ± {pause_full.std(ddof=1):.2f} | 74.00 | +2.00 | 100.0 % |" in text
    assert f"| 10 % | 74.00 | 65.00 | +9.00 | {100 * 74 / pause_full.mean():.1f} % |" in text
    assert "| 100 % | PAUSE | 2 | 81.00 ± 1.41 | 71.00 ± 1.41 | 76.00 ± 1.41 |" in text
    efficiency.plot([tmp_path], tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit, match="batch_size: 8 then, 16 now"):
        save(tmp_path, {"model": "m", "pairs": ["SNLI"], "steps": 10, "epochs": None, "batch_size": 16})


def test_threshold_is_the_most_accurate_on_dev(drivers):
    _, positive_only = drivers
    rng = np.random.default_rng(0)
    truth = rng.random(200) < 0.4
    scores = np.round(rng.normal(truth * 0.5, 0.4), 1)  # rounded: many ties
    threshold, accuracy = positive_only.best_threshold(scores, truth)
    candidates = [*np.unique(scores), np.inf]
    brute = max(np.mean((scores >= t) == truth) for t in candidates)
    assert accuracy == pytest.approx(brute) and np.mean((scores >= threshold) == truth) == pytest.approx(brute)
    metrics = positive_only.classification_metrics(scores, truth, threshold)
    predicted = scores >= threshold
    true_positives = np.sum(predicted & truth)
    assert metrics["precision"] == pytest.approx(100 * true_positives / predicted.sum())
    assert metrics["recall"] == pytest.approx(100 * true_positives / truth.sum())
    assert metrics["accuracy"] == pytest.approx(100 * brute)


def test_positive_only_split_holds_out_questions(drivers):
    _, positive_only = drivers
    rng = np.random.default_rng(1)
    questions = [f"question {i}" for i in range(150)]
    pairs = [(questions[a], questions[b], "duplicate" if i % 3 == 0 else "not_duplicate")
             for i, (a, b) in enumerate(rng.integers(0, 150, size=(300, 2)))]
    split = positive_only.split_pairs(pairs, test_size=60, dev_size=30, seed=0)
    assert len(split["test"]) == 60 and len(split["dev"]) == 30
    assert Counter(label for _, _, label in split["test"])["duplicate"] == 20  # stratified: a third
    held_out = {q for part in ("test", "dev") for pair in split[part] for q in pair[:2]}
    assert not held_out & {q for pair in split["pool"] for q in pair[:2]}
    kept = [p for p in pairs if p not in split["test"] and p not in split["dev"]
            and p[0] not in held_out and p[1] not in held_out]
    assert Counter(split["pool"]) == Counter(kept)
    assert split == positive_only.split_pairs(pairs, test_size=60, dev_size=30, seed=0)
