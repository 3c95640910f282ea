"""Few examples per class: the start model with a logistic-regression head, SetFit 1.2 itself, and sentforge's
`setfit` recipe, from the same start model, on class-labelled sets; test accuracy and macro-F1 over seeded
draws of k examples per class, wall time of each run, and paired bootstrap intervals over the test items.

    pip install setfit==1.2.0   # the benchmark's peer only: sentforge does not depend on it
    python benchmarks/classes/setfit_ab.py trec --data-dir ../shared/data --work-dir runs/classes \\
        --shots 8 --draws 3 --arms start,setfit,sentforge

Sets: `trec` (TREC question types, fine labels such as NUM:date: train_5500.label, test TREC_10.label),
`sst5` (SST five-way sentiment: SST/fine sentiment-train, sentiment-test) and `qatarliving` (Qatar Living forum
questions by forum category, 7 categories: SemEval-2016 and 2015 Task 3 training questions, 2015's test
questions; qatarliving_categories.py says which texts and categories). A draw d takes k texts of each
class of the set's training texts with seed d (data.classes.per_class_draw: nested over k); every arm trains on the
same draw and is scored on the whole test file. SetFit runs with `num_iterations` pairs per text (20, the
SetFit paper's), as sentforge's recipe does (`--iterations`): its sampling default ("oversampling": every
negative pair once) makes C(n, 2) pairs, some 70,000 steps' worth at 16 shots. Each run writes
WORK/SET/kK/dD/ARM.json (sentforge-LOSS.json; predictions, correctness, seconds); one already there is read, not rerun.

`--labelled FILE --test FILE` (classes files, as `sentforge adapt` reads them) replace the set's draws by one
given draw and test file, e.g. the files `adapt_files.py` writes, so that the arms train on the texts adapt
trained on (runs in WORK/SET/given/); the `classifier` arm scores a classifier already trained on them
(`--classifier`, e.g. adapt's OUTPUT/model).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import DATA, fail

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qatarliving_categories import TEST_FILE, TRAIN_FILES, read_qatarliving

ARMS = ("start", "setfit", "sentforge", "classifier")


def read_trec(path: Path) -> list[tuple[str, str]]:
    """TREC: `COARSE:fine question` lines, Latin-1; the class is the fine label (e.g. NUM:date)."""
    rows = []
    for line in path.read_bytes().decode("latin-1").splitlines():
        label, _, question = line.strip().partition(" ")
        if question:
            rows.append((question.strip(), label))
    return rows


def read_sst5(path: Path) -> list[tuple[str, str]]:
    """SST fine: `LABEL sentence` lines (0-4), UTF-8."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        label, _, sentence = line.strip().partition(" ")
        if sentence:
            rows.append((sentence.strip(), label))
    return rows


def each_file(read: Callable[[Path], list]) -> Callable[[list[Path], Path], tuple[list, list]]:
    """A set's reader from a reader of one file: the training files' rows in order, and the test file's."""
    def read_both(train_paths: list[Path], test_path: Path) -> tuple[list, list]:
        return [row for path in train_paths for row in read(path)], read(test_path)
    return read_both


# name -> (reader of (training files, test file) -> (training rows, test rows), training files, test file)
SETS = {
    "trec": (each_file(read_trec), ("senteval/downstream/TREC/train_5500.label",),
             "senteval/downstream/TREC/TREC_10.label"),
    "sst5": (each_file(read_sst5), ("senteval/downstream/SST/fine/sentiment-train",),
             "senteval/downstream/SST/fine/sentiment-test"),
    "qatarliving": (read_qatarliving, TRAIN_FILES, TEST_FILE),
}


def read_set(name: str, data_dir: Path) -> tuple[list, list]:
    """(training rows, test rows) of a set from its files under `data_dir`; a file missing is bad input."""
    reader, train_files, test_file = SETS[name]
    for file in (*train_files, test_file):
        if not (data_dir / file).is_file():
            fail(f"--data-dir {data_dir}: no {file}")
    return reader([data_dir / file for file in train_files], data_dir / test_file)


def train_start(model: str, train: list, work: Path, seed: int, options: argparse.Namespace):
    import sentforge
    from sentforge.classification.classifier import SentenceClassifier

    return SentenceClassifier.fit(sentforge.load(model), train, seed=seed).predict


def train_sentforge(model: str, train: list, work: Path, seed: int, options: argparse.Namespace):
    import sentforge

    classifier = sentforge.train("setfit", model, [{"text": t, "label": y} for t, y in train], work / "sentforge-model",
                                 seed=seed, loss=options.loss, iterations=options.iterations, overwrite=True,
                                 show_progress=False)
    return classifier.predict


def train_setfit(model: str, train: list, work: Path, seed: int, options: argparse.Namespace):
    from datasets import Dataset
    from setfit import SetFitModel, Trainer, TrainingArguments

    setfit_model = SetFitModel.from_pretrained(model)
    arguments = TrainingArguments(output_dir=str(work / "setfit-checkpoints"),
                                  num_iterations=options.iterations or None,
                                  seed=seed, save_strategy="no", report_to="none", show_progress_bar=False)
    dataset = Dataset.from_dict({"text": [t for t, _ in train], "label": [y for _, y in train]})
    Trainer(model=setfit_model, args=arguments, train_dataset=dataset).train()
    return lambda texts: list(setfit_model.predict(texts, as_numpy=True))


def trained_classifier(model: str, train: list, work: Path, seed: int, options: argparse.Namespace):
    from sentforge.classification.classifier import SentenceClassifier

    return SentenceClassifier.load(options.classifier).predict


TRAINERS = {"start": train_start, "setfit": train_setfit, "sentforge": train_sentforge,
            "classifier": trained_classifier}


def run_arm(arm: str, model: str, train: list, test: list, work: Path, seed: int,
            options: argparse.Namespace) -> dict:
    path = work / f"{arm if arm != 'sentforge' else f'sentforge-{options.loss}'}.json"
    if arm == "setfit" and not options.iterations:
        path = work / "setfit-default-sampling.json"
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    predict = TRAINERS[arm](model, train, work, seed, options)
    predicted = [str(p) for p in predict([t for t, _ in test])]
    seconds = time.perf_counter() - start
    result = {"arm": arm, "seconds": seconds, "predicted": predicted,
              "correct": [int(p == y) for p, (_, y) in zip(predicted, test)]}
    path.write_text(json.dumps(result), encoding="utf-8")
    return result


def macro_f1(predicted: list[str], test: list) -> float:
    from sklearn.metrics import f1_score

    return 100 * f1_score([y for _, y in test], predicted, average="macro")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", choices=sorted(SETS))
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--model", default=None, help="Start model directory (default: all-MiniLM-L6-v2's).")
    parser.add_argument("--shots", type=int, nargs="+", default=[8], help="Examples per class.")
    parser.add_argument("--draws", type=int, default=3, help="Seeded draws 0..N-1 per shot count.")
    parser.add_argument("--arms", default=",".join(ARMS), help=f"Comma-separated, of {', '.join(ARMS)}.")
    parser.add_argument("--iterations", type=int, default=20, help="Pair rounds per text (both SetFits); 0: "
                        "SetFit's own default sampling for the setfit arm.")
    parser.add_argument("--classifier", type=Path, help="The `classifier` arm: a trained classifier directory "
                        "(e.g. sentforge adapt's OUTPUT/model), scored as it is.")
    parser.add_argument("--loss", default="cosine", help="sentforge's setfit loss: cosine or supcon.")
    parser.add_argument("--labelled", type=Path, help="A classes file: train every arm on it (one draw) instead "
                        "of the set's draws; needs --test.")
    parser.add_argument("--test", type=Path, help="With --labelled: the classes file to score on.")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's); 1 is much "
                        "faster than 2 on two cores that other jobs share.")
    options = parser.parse_args()
    if options.threads:
        import torch

        torch.set_num_threads(options.threads)
    arms = [arm.strip() for arm in options.arms.split(",")]
    if any(arm not in ARMS for arm in arms):
        fail(f"--arms {options.arms}: choose from {', '.join(ARMS)}")
    if ("classifier" in arms) != (options.classifier is not None):
        fail("the classifier arm and --classifier go together")
    model = options.model
    if model is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from benchlib.data import reference_models

        model = reference_models()["all-MiniLM-L6-v2"]
    from sentforge.data.classes import per_class_draw, read_classes, unseen_classes
    from sentforge.evaluation.paired import ItemScores, paired_bootstrap

    if (options.labelled is None) != (options.test is None):
        fail("--labelled and --test go together")
    given = options.labelled is not None
    if given:
        options.shots, options.draws = ["given"], 1
        pool = read_classes(options.labelled)
        test = [(t, str(y)) for t, y in read_classes(options.test, min_per_class=1)]
    else:
        pool, test = read_set(options.set, options.data_dir)
    print(f"{options.set}: {len(pool)} training texts of {len({y for _, y in pool})} classes, {len(test)} test texts")
    for shots in options.shots:
        results: dict[str, list[dict]] = {arm: [] for arm in arms}
        for draw in range(options.draws):
            train = [(t, str(y)) for t, y in pool] if given else per_class_draw(pool, shots, seed=draw)
            # a class with one text cannot be paired: TREC has such classes; they are left out of training
            counts = {y: sum(label == y for _, label in train) for _, y in train}
            train = [(t, y) for t, y in train if counts[y] > 1]
            unseen_classes(train, test, f"{options.set} draw {draw}")
            work = options.work_dir / options.set / ("given" if given else f"k{shots}/d{draw}")
            for arm in arms:
                result = run_arm(arm, model, train, test, work, draw, options)
                results[arm].append(result)
                print(f"  k={shots} draw {draw} {arm:9s} accuracy {100 * np.mean(result['correct']):6.2f}  "
                      f"macro-F1 {macro_f1(result['predicted'], test):6.2f}  {result['seconds']:7.1f} s", flush=True)
        print(f"{options.set}, {shots} per class, {options.draws} draws: mean over draws (min-max), seconds per run")
        for arm in arms:
            accuracies = [100 * np.mean(r["correct"]) for r in results[arm]]
            f1s = [macro_f1(r["predicted"], test) for r in results[arm]]
            seconds = [r["seconds"] for r in results[arm]]
            print(f"  {arm:9s} accuracy {np.mean(accuracies):6.2f} ({min(accuracies):.2f}-{max(accuracies):.2f})  "
                  f"macro-F1 {np.mean(f1s):6.2f}  {np.mean(seconds):7.1f} s")
        scores = {arm: [ItemScores("mean", 100.0 * np.asarray(r["correct"])) for r in results[arm]] for arm in arms}
        for base, other in (("setfit", "sentforge"), ("start", "sentforge"), ("start", "setfit"),
                            ("setfit", "classifier"), ("start", "classifier")):
            if base in arms and other in arms:
                interval = paired_bootstrap(scores[base], scores[other], resamples=2000, seed=0)
                print(f"  {other} - {base}: {interval.difference:+.2f} accuracy points, 95% paired interval "
                      f"[{interval.low:+.2f}, {interval.high:+.2f}] over {interval.units} test items")


if __name__ == "__main__":
    main()
