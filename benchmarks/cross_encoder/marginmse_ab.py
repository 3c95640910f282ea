"""MarginMSE on a domain: a trained cross-encoder scores (query, positive, negative) rows whose negatives the start
bi-encoder mines, and the bi-encoder learns the teacher's margins (`marginmse` recipe) within a time limit; scored on
dev and test against the start model and, with --bi-encoder, other bi-encoders (e.g. `mnrl` on the same labels),
paired intervals.

    python benchmarks/cross_encoder/marginmse_ab.py --domain domain-data/twitterpara \
        --labelled domain-data/twitterpara/labelled-10pct.jsonl --cross-encoder runs/ce-ab/twitterpara-e1-128/seed0 \
        --unlabelled domain-data/twitterpara/unlabelled.txt --time-limit 600 --output runs/marginmse/twitterpara \
        --bi-encoder mnrl=runs/mnrl/twitterpara-s0

The queries are the first texts of the label-1 pairs, each with its gold positive, and --anchors texts drawn from
the pool with their nearest other text as the positive; the mining pool is the texts of every labelled pair (label 0
too) and of --unlabelled. With --labelled-negatives each query's label-0 partners are its first negatives (the
wrong answers of a candidate list) and the mined ones fill the rest.
The rows are written once to OUTPUT/margins.jsonl and the trained model to OUTPUT/marginmse: a rerun reuses both.
"""

from __future__ import annotations

import argparse
import time

from _bi_encoder_ab import add_common_arguments, prepared, report, rows_written_once, trained_once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser)
    parser.add_argument("--negatives", type=int, default=4, help="mined negatives per (query, positive)")
    parser.add_argument("--depth", type=int, default=10, help="negatives are drawn among each query's DEPTH "
                                                              "nearest texts that are no positive of it")
    parser.add_argument("--anchors", type=int, default=0, help="more queries drawn from the pool, each with its "
                                                               "nearest text as the positive")
    parser.add_argument("--logits", action="store_true", help="margins of the teacher's logits instead of its "
                                                              "sigmoid scores")
    parser.add_argument("--labelled-negatives", action="store_true",
                        help="draw each query's negatives among its label-0 partners first")
    args, gold, texts, start = prepared(parser)
    import sentforge
    from sentforge.recipes.margins import margin_triples

    began = time.perf_counter()
    positives = [(a, b) for a, b, label in gold if float(label) == 1.0]
    wrong: dict[str, list[str]] = {}
    for a, b, label in gold:
        if args.labelled_negatives and float(label) == 0.0:
            wrong.setdefault(a, []).append(b)
    pool = [*(text for a, b, _ in gold for text in (a, b)), *texts]  # the label-0 pairs' texts are near ones
    rows = rows_written_once(args.output / "margins.jsonl", ("query", "positive", "negative", "margin"), lambda: (
        margin_triples(sentforge.load_cross_encoder(args.cross_encoder), start, positives, pool,
                       negatives=args.negatives, depth=args.depth, anchors=args.anchors, seed=args.seed,
                       logits=args.logits, labelled_negatives=wrong)))
    margins = [margin for *_, margin in rows]
    print(f"margin rows: {len(rows)} from {len({(q, p) for q, p, *_ in rows})} (query, positive) pairs, margin mean "
          f"{sum(margins) / len(margins):+.3f}, {sum(m > 0 for m in margins)} positive, "
          f"{time.perf_counter() - began:.0f} s", flush=True)
    trained = trained_once("marginmse", args.output / "marginmse", lambda: sentforge.train(
        "marginmse", args.model, rows, args.output / "marginmse", epochs=args.epochs, time_limit=args.time_limit,
        seed=args.seed), len(rows))
    report(args, start, "marginmse", trained)


if __name__ == "__main__":
    main()
