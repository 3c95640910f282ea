"""How many examples per class reach a target accuracy? `sentforge labels` on a class-labelled set, then its
answer checked: the setfit recipe trained on fresh draws of the predicted number of examples per class and scored
on the dev split the curve was fitted on and on the test split it never saw.

    python benchmarks/classes/labels_check.py trec --coarse --work-dir runs/labels-classes \\
        --shots 2,4,8,16 --repeats 3 --target 85 --threads 1

The set's training side is split once (seeded): --dev-size texts are the dev split (500, or a third of a side of
fewer than 1,500 texts), the rest the labelled pool that the curve draws from (WORK/SET/labelled.jsonl,
dev.jsonl, test.jsonl; the test split is the set's own).
The curve is WORK/SET/curve (report.md, report.json; a rerun resumes it, and another --target answers again
without training). The check trains --check-draws runs at the answer's size, on per-class draws with seeds the
curve's repeats did not use; each is saved as WORK/SET/check-kK-dD.json and read, not rerun, the next time
(--check-from lets two processes train different draws side by side).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import DATA, fail
from setfit_ab import SETS, read_set

DEV_SIZE = 500  # dev texts of a set's training side, or a third of a smaller one
DEV_HELP = "Texts of the training side kept as dev (default: 500, or a third of a side of fewer than 1,500 texts)."


def write_jsonl(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in rows), encoding="utf-8")
    return path


def splits(options: argparse.Namespace) -> tuple[list, list, list]:
    """(labelled pool, dev, test) of the set: dev a seeded sample of the training side, the pool the rest."""
    train, test = read_set(options.set, options.data_dir)
    if options.coarse:  # TREC's coarse classes: NUM of NUM:date
        train, test = ([(t, y.split(":")[0]) for t, y in part] for part in (train, test))
    dev_size = min(DEV_SIZE, len(train) // 3) if options.dev_size is None else options.dev_size
    if not 0 < dev_size < len(train):
        fail(f"--dev-size {dev_size}: the {options.set} training side has {len(train)} texts; "
             f"choose 1 to {len(train) - 1}")
    held = set(np.random.default_rng(options.seed).choice(len(train), dev_size, replace=False).tolist())
    return [r for i, r in enumerate(train) if i not in held], [r for i, r in enumerate(train) if i in held], test


def accuracy_interval(correct: np.ndarray, seed: int, resamples: int = 2000) -> tuple[float, float]:
    """95 % bootstrap interval of the accuracy (×100) over the items (each item's mean over draws)."""
    rng = np.random.default_rng(seed)
    means = correct[rng.integers(len(correct), size=(resamples, len(correct)))].mean(axis=1)
    return tuple(100 * np.percentile(means, [2.5, 97.5]))


def check_run(model: str, pool: list, dev: list, test: list, shots: int, draw_seed: int, path: Path) -> dict:
    """The setfit recipe on `shots` per class drawn with `draw_seed`: correctness on dev and test, seconds."""
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    import time

    import sentforge
    from sentforge.data.classes import per_class_draw

    started = time.perf_counter()
    train = per_class_draw(pool, shots, draw_seed)
    classifier = sentforge.train("setfit", model, [{"text": t, "label": y} for t, y in train],
                                 path.with_suffix(""), seed=draw_seed, overwrite=True, show_progress=False)
    result = {"shots": shots, "seed": draw_seed, "texts": len(train), "seconds": time.perf_counter() - started}
    for name, rows in (("dev", dev), ("test", test)):
        predicted = classifier.predict([t for t, _ in rows])
        result[name] = [int(p == y) for p, (_, y) in zip(predicted, rows)]
    path.write_text(json.dumps(result), encoding="utf-8")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", choices=sorted(SETS))
    parser.add_argument("--coarse", action="store_true", help="trec: the 6 coarse classes (default: the fine ones).")
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--model", default=None, help="Start model (default: paraphrase-MiniLM-L3-v2's directory).")
    parser.add_argument("--shots", default="2,4,8,16", help="Examples per class of the curve's sizes.")
    parser.add_argument("--repeats", type=int, default=3, help="Nested draws per size.")
    parser.add_argument("--target", type=float, required=True, help="Dev accuracy to reach.")
    parser.add_argument("--dev-size", type=int, default=None, help=DEV_HELP)
    parser.add_argument("--check-draws", type=int, default=3, help="Runs at the answer's size.")
    parser.add_argument("--check-from", type=int, default=0, help="The first check draw (draws FROM to FROM+N-1: "
                        "two processes can each train some, and a last call with FROM 0 reads them all).")
    parser.add_argument("--budget-minutes", type=float, default=60.0, help="The curve's budget.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's).")
    options = parser.parse_args()
    if options.threads:
        import torch

        torch.set_num_threads(options.threads)
    model = options.model
    if model is None:
        from benchlib.data import reference_models

        model = reference_models()["paraphrase-MiniLM-L3-v2"]
    import sentforge

    pool, dev, test = splits(options)
    name = f"{options.set}{'-coarse' if options.coarse else ''}"
    work = options.work_dir / name
    files = {split: write_jsonl(work / f"{split}.jsonl", rows)
             for split, rows in (("labelled", pool), ("dev", dev), ("test", test))}
    print(f"{name}: {len(pool)} labelled texts of {len({y for _, y in pool})} classes, {len(dev)} dev, "
          f"{len(test)} test; model {Path(model).name}")
    shots = [int(k) for k in options.shots.split(",")]
    report = sentforge.labels(model, files["labelled"], files["dev"], work / "curve", shots=shots,
                              repeats=options.repeats, target=options.target, budget_minutes=options.budget_minutes,
                              seed=options.seed, show_progress=False)
    print(f"start model + head on the largest draw: dev accuracy {report['start']:.2f}")
    for row in report["sizes"]:
        spread = "-" if row["spread"] is None else f"{row['spread']:.2f}"
        print(f"  {row['labels']:3d} per class: dev accuracy {row['mean']:.2f} (spread {spread}, {row['runs']} runs)")
    result = report["answer"]
    if result is None:
        fail(f"no curve: {report.get('fit_error')}")
    from sentforge.learning_curve.report import holdout_lines, target_words

    print(f"curve: {result['model']}; {holdout_lines(report['holdout'], 'accuracy', report['unit'])[0]}")
    target = result["target"]
    print(f"target {options.target:g}: {target_words(target, result, report['unit'])}")
    size = target["measured_labels"] if target["status"] == "reached" else (
        math.ceil(target["fitted_labels"]) if target["status"] == "predicted" else None)
    if size is None:
        return
    runs = [check_run(model, pool, dev, test, size, options.seed + options.repeats + d,
                      work / f"check-k{size}-d{d}.json")
            for d in range(options.check_from, options.check_from + options.check_draws)]
    print(f"check: the setfit recipe on {options.check_draws} fresh draws of {size} per class "
          f"({runs[0]['texts']} texts), {np.mean([r['seconds'] for r in runs]):.0f} s a run")
    for split in ("dev", "test"):
        correct = np.array([r[split] for r in runs], dtype=float)
        low, high = accuracy_interval(correct.mean(axis=0), options.seed)
        draws = ", ".join(f"{100 * c.mean():.2f}" for c in correct)
        print(f"  {split:4s} accuracy {100 * correct.mean():.2f} [95 % bootstrap over items {low:.2f}, {high:.2f}] "
              f"(draws {draws}); target {options.target:g}: "
              f"{'reached' if 100 * correct.mean() >= options.target else 'not reached'}")


if __name__ == "__main__":
    main()
