"""What silver_ab.py and marginmse_ab.py share (not a benchmark): their common arguments, the gold pairs and
unlabelled texts they read, the teacher's rows written once, the trained bi-encoder reused when its run finished,
and the report of dev and test scores with paired intervals against the start and the --bi-encoder models."""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--domain", type=Path, required=True, help="folder with dev.jsonl and test.jsonl")
    parser.add_argument("--labelled", type=Path, required=True, help="the gold labelled pairs")
    parser.add_argument("--cross-encoder", type=Path, required=True)
    parser.add_argument("--unlabelled", type=Path, help="texts to sample more anchors from: a .txt (one per line) "
                                                        "or a pairs .jsonl (its texts)")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--bi-encoder", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--time-limit", type=float, required=True, help="seconds of bi-encoder training")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, required=True)


def prepared(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, list[tuple[str, str, Any]], list[str], Any]:
    """(the parsed arguments, the labelled pairs of --labelled whose label is given, the texts of --unlabelled, the
    start model), with INFO logging on."""
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    import sentforge
    from sentforge.data.texts import read_texts
    from sentforge.recipes.data import read_examples

    gold = [row for row in read_examples("labelled pairs", args.labelled) if row[2] is not None]
    texts = ([t for a, b, _ in read_examples("labelled pairs", args.unlabelled) for t in (a, b)]
             if args.unlabelled and args.unlabelled.suffix == ".jsonl"
             else read_texts(args.unlabelled) if args.unlabelled else [])
    return args, gold, texts, sentforge.load(args.model)


def rows_written_once(path: Path, fields: tuple[str, ...], make: Callable[[], list[tuple]]) -> list[tuple]:
    """The rows of `path` (JSON lines with `fields`): made by `make()` and written first when the file is missing,
    so that a rerun reuses the teacher's work."""
    if not path.is_file():
        rows = make()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(dict(zip(fields, row))) + "\n" for row in rows), encoding="utf-8")
    return [tuple(record[field] for field in fields)
            for record in map(json.loads, path.read_text(encoding="utf-8").splitlines())]


def trained_once(name: str, run: Path, train: Callable[[], Any], examples: int) -> Any:
    """The bi-encoder of a finished run in `run`, or `train()`'s; prints how long it took."""
    import sentforge

    began = time.perf_counter()
    finished = (run / "train.json").is_file()
    trained = sentforge.load(str(run)) if finished else train()
    done = f"the finished run {run} loaded" if finished else f"trained on {examples} pairs"
    print(f"{name}: {done} in {time.perf_counter() - began:.0f} s", flush=True)
    return trained


def report(args: argparse.Namespace, start: Any, name: str, trained: Any) -> None:
    """Dev and test scores of the start, the trained model `name` and each --bi-encoder: each one's gain over
    the start, and the trained model's over each --bi-encoder, with paired 95 % bootstrap intervals."""
    import sentforge
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.paired import paired_bootstrap

    models = {"start": start, name: trained,
              **{other: sentforge.load(path) for other, path in (s.split("=", 1) for s in args.bi_encoder)}}
    for split in ("dev", "test"):
        task = load_dataset(args.domain / f"{split}.jsonl")
        items = {model: task.item_scores(encoder) for model, encoder in models.items()}
        print(f"\n## {split}: score, gain over the start [95 %]")
        for model, scored in items.items():
            gain = paired_bootstrap(items["start"], scored, seed=0)
            print(f"- {model}: {scored.score():.2f}, {gain.difference:+.2f} [{gain.low:+.2f}, {gain.high:+.2f}]")
        for model in items:
            if model not in ("start", name):
                gain = paired_bootstrap(items[model], items[name], seed=0)
                print(f"- {name} - {model}: {gain.difference:+.2f} [{gain.low:+.2f}, {gain.high:+.2f}]")
