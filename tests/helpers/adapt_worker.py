"""An adapt run for tests/adaptation/test_adapt.py, run as a subprocess that may be SIGKILLed.

usage: adapt_worker.py MODEL_DIR DATA_DIR OUTPUT [--kill-in-candidate N --kill-at-step S] [--penalise METHOD]
Kills itself (SIGKILL) at step S of the N-th run of a trained candidate that reaches it (probes included), after
that step's checkpoint. --penalise: the dev and test scores of every model of that method's candidate are 100
points lower (`penalise`), so that racing stops it at its first evaluation.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
from pathlib import Path

import torch

import sentforge

# Few steps, a learning rate that changes the tiny model, evaluation and checkpoints every 2 steps. The test
# domain builds every text from the same dozen sentences, so dev hygiene would drop all of them: kept here,
# and tested on its own in test_adapt_selection.py.
FAST = {"eval_every": 2, "max_epochs": 2, "show_progress": False, "candidates": ["tsdae", "mnrl"],
        "keep_dev_texts": True, "keep": "all",  # the tests read the candidates' runs
        "overrides": {"tsdae": {"lr": 1e-3}, "mnrl": {"lr": 1e-3, "batch_size": 4}}}


def run(model_dir: str | Path, data: str | Path, output: str | Path, callbacks=()) -> dict:
    data = Path(data)
    return sentforge.adapt(str(model_dir), data / "unlabelled.txt", data / "dev.jsonl", output,
                           labelled=data / "labelled.jsonl", test=data / "test.jsonl", callbacks=callbacks, **FAST)


PENALTY = 100.0


def penalise(method: str) -> None:
    """Take PENALTY points off every dev and test score (the main metric and each unit's) of the models of
    `method`'s candidate: those scored while it trains or is recorded. Patches the dev/test loader and the
    recipe runs of this process."""
    import sentforge.evaluation as evaluation
    from sentforge.adaptation.runner import RecipeRun

    current = {"method": None}
    load_dataset = evaluation.load_dataset

    def tracked(run_recipe):
        def run(self, *args, **kwargs):
            current["method"] = self.candidate.method.name
            return run_recipe(self, *args, **kwargs)
        return run

    def penalised(*args, **kwargs):
        task = load_dataset(*args, **kwargs)
        evaluate, item_scores = task.evaluate, task.item_scores

        def lower(encoder):
            metrics = dict(evaluate(encoder))
            if current["method"] == method:
                metrics[task.metadata.main_metric] -= PENALTY
            return metrics

        def lower_items(encoder):
            items = item_scores(encoder)
            if current["method"] != method:
                return items
            return dataclasses.replace(items, values=items.values - PENALTY)

        task.evaluate, task.item_scores = lower, lower_items
        return task

    RecipeRun.train, RecipeRun.probe = tracked(RecipeRun.train), tracked(RecipeRun.probe)
    evaluation.load_dataset = penalised


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("model_dir", "data", "output"):
        parser.add_argument(name)
    parser.add_argument("--kill-in-candidate", type=int)
    parser.add_argument("--kill-at-step", type=int)
    parser.add_argument("--penalise")
    args = parser.parse_args()
    if args.penalise:
        penalise(args.penalise)
    torch.set_num_threads(1)
    reached = [0]

    def kill(state) -> None:
        # The N-th run to reach step S: probes stop before S, so it is the N-th trained candidate's own run.
        if state.step == args.kill_at_step:
            reached[0] += 1
            if reached[0] == args.kill_in_candidate:
                os.kill(os.getpid(), signal.SIGKILL)

    run(args.model_dir, args.data, args.output, [kill] if args.kill_in_candidate else [])


if __name__ == "__main__":
    main()
