"""Is an ensemble of `setfit` runs better than one run? The `setfit` recipe trained on one draw of class-labelled
texts with several seeds; test accuracy of each run, of the concatenation of their vectors (a sentforge
`MetaEncoder`, "concat") and of their weights averaged, each with a logistic-regression head fitted on the same
labelled texts; paired bootstrap intervals against the mean of the single runs and, with --setfit, against SetFit
1.2's predictions of the same test file.

    python benchmarks/classes/adapt_files.py sst5 --work-dir runs/adapt-classes --shots 8 --drop-heldout-copies
    python benchmarks/classes/setfit_ab.py sst5 --work-dir runs/adapt-classes/setfit \\
        --labelled runs/adapt-classes/sst5/labelled.jsonl --test runs/adapt-classes/sst5/test.jsonl --arms setfit
    python benchmarks/classes/setfit_ensembles.py --labelled runs/adapt-classes/sst5/labelled.jsonl \\
        --test runs/adapt-classes/sst5/test.jsonl --setfit runs/adapt-classes/setfit/sst5/given/setfit.json \\
        --work-dir runs/ensembles/sst5 --seeds 0,1,2

The weight average (a "model soup": the runs start from the same weights and train one epoch at a small learning
rate) is computed here, as no library function does it. Each run keeps its directory under WORK/seedS (one
already there is loaded, not retrained).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import fail


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labelled", type=Path, required=True, help="The classes file to train on.")
    parser.add_argument("--test", type=Path, required=True, help="The classes file to score on.")
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--seeds", default="0,1,2", help="Comma-separated seeds of the runs (at least two).")
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="The start model.")
    parser.add_argument("--setfit", type=Path, help="setfit_ab.py's setfit.json for the same files: the peer.")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's).")
    options = parser.parse_args()
    try:
        seeds = [int(seed) for seed in options.seeds.split(",")]
    except ValueError:
        fail(f"--seeds {options.seeds}: comma-separated whole numbers")
    if len(seeds) < 2 or len(set(seeds)) < len(seeds):
        fail(f"--seeds {options.seeds}: at least two distinct seeds")
    for path in (options.labelled, options.test, options.setfit):
        if path is not None and not path.is_file():
            fail(f"{path}: no such file")
    import torch

    import sentforge
    from sentforge.classification.classifier import SentenceClassifier
    from sentforge.data.classes import read_classes
    from sentforge.evaluation.paired import ItemScores, paired_bootstrap
    from sentforge.meta.meta_encoder import MetaEncoder

    if options.threads:
        torch.set_num_threads(options.threads)
    train = [(text, str(label)) for text, label in read_classes(options.labelled)]
    test = [(text, str(label)) for text, label in read_classes(options.test, min_per_class=1)]
    texts = [text for text, _ in test]
    setfit = None
    if options.setfit:  # checked before any training: a mismatched file fails at once
        setfit = np.asarray(json.loads(options.setfit.read_text(encoding="utf-8"))["correct"], float)
        if len(setfit) != len(test):
            fail(f"--setfit {options.setfit}: {len(setfit)} test items, not {len(test)}")

    def correct(classifier: SentenceClassifier) -> np.ndarray:
        return np.array([str(p) == y for p, (_, y) in zip(classifier.predict(texts), test)], dtype=float)

    rows: dict[str, np.ndarray] = {}
    classifiers = []
    for seed in seeds:
        run = options.work_dir / f"seed{seed}"
        began = time.perf_counter()
        if (run / "train.json").is_file():
            classifier = SentenceClassifier.load(run)
        else:
            classifier = sentforge.train("setfit", options.model, [{"text": t, "label": y} for t, y in train], run,
                                         seed=seed, show_progress=False)
        classifiers.append(classifier)
        rows[f"seed {seed}"] = correct(classifier)
        print(f"seed {seed}: {100 * rows[f'seed {seed}'].mean():.2f} ({time.perf_counter() - began:.0f} s)", flush=True)
    concat = MetaEncoder([c.encoder for c in classifiers], "concat")
    concat.fit([text for text, _ in train])
    rows["concat"] = correct(SentenceClassifier.fit(concat, train, seed=seeds[0]))
    states = [c.encoder.state_dict() for c in classifiers]
    averaged = copy.deepcopy(classifiers[0].encoder)
    averaged.load_state_dict({key: sum(s[key].float() for s in states).div(len(states)).to(states[0][key].dtype)
                              for key in states[0]})
    rows["weight average"] = correct(SentenceClassifier.fit(averaged, train, seed=seeds[0]))
    single_mean = np.mean([rows[f"seed {seed}"] for seed in seeds], axis=0)
    peers = {"mean of the single runs": single_mean, **({"SetFit 1.2": setfit} if setfit is not None else {})}
    print(f"{len(train)} labelled texts, {len(test)} test texts; test accuracy, and the difference with a 95 % paired "
          "bootstrap interval over the test items (2,000 resamples)")
    table = {**rows, **peers}
    names = list(table)
    for position, (name, row) in enumerate(table.items()):
        line = f"  {name:24s} {100 * row.mean():6.2f}"
        for peer in (later for later in names[position + 1:] if later in peers):  # each pair once
            interval = paired_bootstrap([ItemScores("mean", 100 * table[peer])], [ItemScores("mean", 100 * row)],
                                        resamples=2000, seed=0)
            line += f"   vs {peer}: {interval.difference:+.2f} [{interval.low:+.2f}, {interval.high:+.2f}]"
        print(line)


if __name__ == "__main__":
    main()
