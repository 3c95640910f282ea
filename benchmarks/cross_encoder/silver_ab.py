"""Augmented SBERT on a domain: silver pairs labelled by a trained cross-encoder, then the bi-encoder trained on
the gold and silver pairs (`sts` recipe, scores in [0, 1]) within a time limit; scored on dev and test against
the start model and, with --bi-encoder, other bi-encoders (e.g. `mnrl` on the same labels), paired intervals.

    python benchmarks/cross_encoder/silver_ab.py --domain domain-data/wikiqa \
        --labelled domain-data/wikiqa/labelled.jsonl --cross-encoder runs/ce-ab/wikiqa-e2-128/seed0 \
        --unlabelled domain-data/wikiqa/labelled.jsonl --time-limit 600 --output runs/silver/wikiqa \
        --bi-encoder mnrl=runs/mnrl/wikiqa-s0
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", type=Path, required=True, help="folder with dev.jsonl and test.jsonl")
    parser.add_argument("--labelled", type=Path, required=True, help="the gold labelled pairs")
    parser.add_argument("--cross-encoder", type=Path, required=True)
    parser.add_argument("--unlabelled", type=Path, help="texts to sample more anchors from: a .txt (one per line) "
                                                        "or a pairs .jsonl (its texts)")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--bi-encoder", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--k", type=int, default=3, help="neighbours per anchor, by the bi-encoder and by BM25")
    parser.add_argument("--anchors", type=int, default=2000, help="unlabelled anchors drawn")
    parser.add_argument("--time-limit", type=float, required=True, help="seconds of bi-encoder training")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")

    import sentforge
    from sentforge.data.texts import read_texts
    from sentforge.evaluation import load_dataset
    from sentforge.evaluation.paired import paired_bootstrap
    from sentforge.recipes.data import read_examples
    from sentforge.recipes.silver import silver_pairs

    gold = [row for row in read_examples("labelled pairs", args.labelled) if row[2] is not None]
    texts = ([t for a, b, _ in read_examples("labelled pairs", args.unlabelled) for t in (a, b)]
             if args.unlabelled and args.unlabelled.suffix == ".jsonl"
             else read_texts(args.unlabelled) if args.unlabelled else [])
    start = sentforge.load(args.model)
    silver_file = args.output / "silver.jsonl"
    began = time.perf_counter()
    if not silver_file.is_file():
        silver = silver_pairs(sentforge.load_cross_encoder(args.cross_encoder), start, gold, texts, k=args.k,
                              anchors=args.anchors, seed=args.seed)
        silver_file.parent.mkdir(parents=True, exist_ok=True)
        silver_file.write_text("".join(json.dumps({"sentence1": a, "sentence2": b, "score": s}) + "\n"
                                       for a, b, s in silver), encoding="utf-8")
    silver = [(r["sentence1"], r["sentence2"], r["score"])
              for r in map(json.loads, silver_file.read_text(encoding="utf-8").splitlines())]
    print(f"silver pairs: {len(silver)} ({sum(s >= 0.5 for *_, s in silver)} scored >= 0.5), "
          f"{time.perf_counter() - began:.0f} s", flush=True)
    examples = [(a, b, float(label)) for a, b, label in gold] + silver
    trained_dir = args.output / "augsbert"
    began = time.perf_counter()
    trained = (sentforge.load(str(trained_dir)) if (trained_dir / "train.json").is_file() else
               sentforge.train("sts", args.model, examples, trained_dir, epochs=args.epochs, score_max=1.0,
                               time_limit=args.time_limit, seed=args.seed))
    print(f"augsbert: trained in {time.perf_counter() - began:.0f} s on {len(examples)} pairs", flush=True)
    models = {"start": start, "augsbert": trained,
              **{name: sentforge.load(path) for name, path in (s.split("=", 1) for s in args.bi_encoder)}}
    for split in ("dev", "test"):
        task = load_dataset(args.domain / f"{split}.jsonl")
        items = {name: task.item_scores(model) for name, model in models.items()}
        print(f"\n## {split}: score, gain over the start [95 %]")
        for name, scored in items.items():
            gain = paired_bootstrap(items["start"], scored, seed=0)
            print(f"- {name}: {scored.score():.2f}, {gain.difference:+.2f} [{gain.low:+.2f}, {gain.high:+.2f}]")
        for name in items:
            if name not in ("start", "augsbert"):
                gain = paired_bootstrap(items[name], items["augsbert"], seed=0)
                print(f"- augsbert - {name}: {gain.difference:+.2f} [{gain.low:+.2f}, {gain.high:+.2f}]")


if __name__ == "__main__":
    main()
