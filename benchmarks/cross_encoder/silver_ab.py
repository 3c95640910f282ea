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
import time

from _bi_encoder_ab import add_common_arguments, prepared, report, rows_written_once, trained_once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser)
    parser.add_argument("--k", type=int, default=3, help="neighbours per anchor, by the bi-encoder and by BM25")
    parser.add_argument("--anchors", type=int, default=2000, help="unlabelled anchors drawn")
    args, gold, texts, start = prepared(parser)
    import sentforge
    from sentforge.recipes.silver import silver_pairs

    began = time.perf_counter()
    silver = rows_written_once(args.output / "silver.jsonl", ("sentence1", "sentence2", "score"), lambda: silver_pairs(
        sentforge.load_cross_encoder(args.cross_encoder), start, gold, texts, k=args.k, anchors=args.anchors,
        seed=args.seed))
    print(f"silver pairs: {len(silver)} ({sum(s >= 0.5 for *_, s in silver)} scored >= 0.5), "
          f"{time.perf_counter() - began:.0f} s", flush=True)
    examples = [(a, b, float(label)) for a, b, label in gold] + silver
    trained = trained_once("augsbert", args.output / "augsbert", lambda: sentforge.train(
        "sts", args.model, examples, args.output / "augsbert", epochs=args.epochs, score_max=1.0,
        time_limit=args.time_limit, seed=args.seed), len(examples))
    report(args, start, "augsbert", trained)


if __name__ == "__main__":
    main()
