"""Prepare the domain-adaptation data sets (Qatar Living, WikiQA, TwitterPara) in the own-data layouts
that `sentforge eval --dataset` reads, from the data store's original files, into a new output folder.

    python benchmarks/data/prepare_domain_data.py --data-dir ../shared/data --output domain-data

Writes, per domain, `unlabelled.txt` (one text per line), `labelled.jsonl` (training pairs with 0/1 labels:
MNRL trains on the label-1 pairs, each with a label-0 text of the same question as its hard negative), `dev.*` and
`test*.*` (evaluation files), and `counts.json` (also printed):

- `qatarliving/`, SemEval-2016 Task 3 subtask B (question-question): `dev.jsonl` re-ranking, from
  `cleaned/subtask-b/VAL-BASE.csv` (query: the original question; PerfectMatch and Relevant related
  questions are positives, as in the official scorer; Irrelevant ones negatives); `labelled.jsonl`, every
  pair of `cleaned/subtask-b/TRAIN-BASE.csv`, labelled 1 (PerfectMatch, Relevant) or 0 (Irrelevant);
  `unlabelled.txt`, every distinct question (subject and body) of the SemEval-2015 trial/devel/test XML
  and of the 2016 train part 1 XML. The cleaned CSVs keep only question bodies (their `feature` column
  glues two subjects together), so the dev and labelled texts are bodies. No file named TEST-BASE is
  read. Checks: no original question of the labelled file is one of the dev file (exact match after
  lower-casing and collapsing white space, and word-set Jaccard >= 0.5); and how many dev texts the
  unlabelled corpus holds (VAL-BASE is drawn from the 2016 train part 1, so it holds them);
  `unlabelled-without-dev.txt` leaves those out. `test.jsonl`: re-ranking of 50 labelled original questions
  (a seeded draw among those with both a relevant and an irrelevant related question); `labelled.jsonl` still
  holds their pairs (`sentforge adapt --test` keeps test texts out of training), `labelled-without-test.jsonl`
  leaves every pair that shares a text with the test set out, for training outside adapt.
- `wikiqa/`: `labelled.jsonl`, the train split's (question, candidate sentence) pairs, labelled 1 for a
  correct answer and 0 for the others; `dev.jsonl` and `test.jsonl` re-ranking from the dev and test
  splits, questions without a correct answer dropped (the standard protocol, which the WikiQA task
  follows too).
- `twitterpara/`: `unlabelled.txt`, the distinct Twitter URL corpus (TURL) train tweets minus near-duplicates
  of the test sentences (`sentforge.evaluation.domain_corpora`); `labelled-10pct.jsonl`, every TURL train pair
  with a class-stratified, seeded 10% of their labels and the rest empty (`null`: unlabelled, the layout
  that PAUSE reads); `labelled-all.jsonl`, the same pairs with every label (the all-labels reference
  that the few-labels runs are compared with); `dev.jsonl`, PIT-2015 dev; `test-pit.jsonl`,
  `test-turl.jsonl` and `test.jsonl` (the two together), the TwitterPara task's test sets. Labels are
  binarised as that task does: PIT test's expert 0-5 and TURL's n-of-6 votes are paraphrases above 3, not
  below 3, and left out at 3; PIT dev's n-of-5 crowd votes follow the PIT-2015 README (3-5 paraphrase,
  0-1 not, 2 left out). The TwitterPara task's main metric is the mean of the PIT and TURL test APs, not
  the AP of the union `test.jsonl`.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import random

import numpy as np

from sentforge.data.near_duplicates import near_duplicates
from sentforge.data.nli import label_fraction
from sentforge.data.texts import decoded_lines
from sentforge.support.errors import InputFileError, SentforgeError
from sentforge.evaluation.domain_corpora import read_semeval2015_questions, twitterpara_corpus
from sentforge.evaluation.ranking import RankingQuery
from sentforge.evaluation.readers.useb import (
    DEBATABLE,
    LabelledPairs,
    read_pit2015_test,
    read_semeval_question_similarity,
    read_twitter_url_corpus,
    read_wikiqa,
)
from sentforge.support.io import atomic_dir, atomic_file, save_json

QL = "cqa-qatarliving"
QL_2015 = tuple(f"{QL}/semeval2015-task3/CQA-QL-{part}.xml" for part in ("trial", "devel", "test"))
QL_2016_TRAIN1 = f"{QL}/semeval2016-task3/SemEval2016-Task3-CQA-QL-train-part1.xml"
QL_TRAIN, QL_VAL = f"{QL}/cleaned/subtask-b/TRAIN-BASE.csv", f"{QL}/cleaned/subtask-b/VAL-BASE.csv"
QL_RELEVANT = {"PerfectMatch": True, "Relevant": True, "Irrelevant": False}
PIT = "twitterpara/pit2015/data"
TURL_TRAIN = "twitterpara/turl/castorini-twitterPPDB/train"
TURL_TEST = "twitterpara/turl/Twitter_URL_Corpus_test.txt"
LABEL_FRACTION, LABEL_SEED = 0.1, 0
QL_TEST_QUESTIONS = 50
PIT_DEV_VOTES = re.compile(r"\(\s*(\d)\s*,\s*(\d)\s*\)")


def source(root: Path, relative: str) -> Path:
    """A data-store file this script may read: it exists, and it is no TEST-BASE file of any subtask."""
    if "TEST-BASE" in relative:
        raise SentforgeError(f"{relative}: TEST-BASE files are never read")
    path = root / relative
    if not path.exists():
        raise InputFileError(f"{path}: not found (data directory {root})")
    return path


def normalised(text: str) -> str:
    return " ".join(text.lower().split())


def write_lines(path: Path, texts: Iterable[str]) -> int:
    texts = list(texts)
    with atomic_file(path, "w") as handle:
        handle.writelines(" ".join(text.split()) + "\n" for text in texts)
    return len(texts)


def write_jsonl(path: Path, records: Sequence[dict]) -> int:
    with atomic_file(path, "w") as handle:
        handle.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    return len(records)


def reranking_records(queries: Sequence[RankingQuery]) -> list[dict]:
    """The re-ranking layout, queries without a positive dropped."""
    return [{"query": q.query, "positive": [c for c, r in zip(q.candidates, q.relevant) if r],
             "negative": [c for c, r in zip(q.candidates, q.relevant) if not r]} for q in queries if q.has_positive]


def labelled_records(queries: Sequence[RankingQuery]) -> list[dict]:
    """Every (query, candidate) pair, labelled 1 for a relevant candidate and 0 for the others."""
    return [{"sentence1": q.query, "sentence2": c, "label": int(r)} for q in queries
            for c, r in zip(q.candidates, q.relevant)]


def labelled_counts(records: Sequence[dict]) -> dict:
    return {"labelled_positive_pairs": sum(r["label"] for r in records),
            "labelled_negative_pairs": sum(1 - r["label"] for r in records)}


def pair_records(pairs: LabelledPairs) -> list[dict]:
    """Labelled-pairs rows of the decided pairs (debatable ones left out)."""
    return [{"sentence1": a, "sentence2": b, "label": int(label)}
            for a, b, label in zip(pairs.sentences1, pairs.sentences2, pairs.labels) if label != DEBATABLE]


def distinct(texts: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(t for t in (" ".join(x.split()) for x in texts) if t))


# ---------------------------------------------------------------------------------------------------------
# Qatar Living
# ---------------------------------------------------------------------------------------------------------

def read_cleaned_subtask_b(path: Path) -> list[RankingQuery]:
    """A cleaned subtask-B CSV (feature, question, rel_question, labels) grouped by original question."""
    csv.field_size_limit(sys.maxsize)
    grouped: dict[str, tuple[list[str], list[bool]]] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("question", "rel_question", "labels") if c not in (reader.fieldnames or [])]
        if missing:
            raise InputFileError(f"{path}: no column {missing[0]!r} (present: {', '.join(reader.fieldnames or [])})")
        for row in reader:
            if row["labels"] not in QL_RELEVANT:
                raise InputFileError(f"{path}:{reader.line_num}: label {row['labels']!r} is not one of "
                                     f"{', '.join(QL_RELEVANT)}")
            candidates, relevant = grouped.setdefault(" ".join(row["question"].split()), ([], []))
            candidates.append(" ".join(row["rel_question"].split()))
            relevant.append(QL_RELEVANT[row["labels"]])
    return [RankingQuery(str(i), q, tuple(c), tuple(r)) for i, (q, (c, r)) in enumerate(grouped.items())]


def qatarliving_test_split(train: Sequence[RankingQuery], seed: int) -> list[dict]:
    """A seeded draw of labelled original questions with a relevant and an irrelevant related question, as
    re-ranking records ordered by query: a test set that no shipped split provides (TEST-BASE stays unread)."""
    both = [q for q in train if any(q.relevant) and not all(q.relevant)]
    order = list(range(len(both)))
    random.Random(seed).shuffle(order)
    return sorted(reranking_records([both[i] for i in order[:QL_TEST_QUESTIONS]]), key=lambda r: r["query"])


def prepare_qatarliving(root: Path, out: Path, seed: int) -> dict:
    train, val = read_cleaned_subtask_b(source(root, QL_TRAIN)), read_cleaned_subtask_b(source(root, QL_VAL))
    train_questions, val_questions = [q.query for q in train], [q.query for q in val]
    exact_shared = {normalised(q) for q in train_questions} & {normalised(q) for q in val_questions}
    near_shared = int(near_duplicates(train_questions, val_questions).sum())
    if exact_shared or near_shared:
        raise SentforgeError(f"TRAIN-BASE and VAL-BASE share {len(exact_shared)} original questions exactly and "
                             f"{near_shared} as near-duplicates; split them apart before using them")
    labelled = labelled_records(train)
    dev = reranking_records(val)
    test = qatarliving_test_split(train, seed)
    test_texts = {normalised(t) for r in test for t in (r["query"], *r["positive"], *r["negative"])}
    unlabelled = [t for f in QL_2015 for t in read_semeval2015_questions(source(root, f))]
    unlabelled += [t for q in read_semeval_question_similarity(source(root, QL_2016_TRAIN1))
                   for t in (q.query, *q.candidates)]
    unlabelled = distinct(unlabelled)
    dev_texts = distinct(t for q in val for t in (q.query, *q.candidates))
    in_dev = near_duplicates(unlabelled, dev_texts)
    out.mkdir()
    return {
        "labelled_pairs_read": write_jsonl(out / "labelled.jsonl", labelled),
        **labelled_counts(labelled),
        "labelled_original_questions": len(train),
        "dev_queries": write_jsonl(out / "dev.jsonl", dev),
        "dev_queries_dropped_without_positive": len(val) - len(dev),
        "dev_candidates": sum(len(r["positive"]) + len(r["negative"]) for r in dev),
        "dev_positives": sum(len(r["positive"]) for r in dev),
        "original_questions_shared_by_labelled_and_dev": {"exact": len(exact_shared), "near_duplicate": near_shared},
        "labelled_originals_that_are_dev_candidates": len({normalised(q) for q in train_questions}
                                                          & {normalised(c) for q in val for c in q.candidates}),
        "test_queries": write_jsonl(out / "test.jsonl", test),
        "test_candidates": sum(len(r["positive"]) + len(r["negative"]) for r in test),
        "labelled_pairs_without_test": write_jsonl(out / "labelled-without-test.jsonl", [
            r for r in labelled if normalised(r["sentence1"]) not in test_texts
            and normalised(r["sentence2"]) not in test_texts]),
        "unlabelled_texts": write_lines(out / "unlabelled.txt", unlabelled),
        "unlabelled_texts_near_duplicate_of_a_dev_text": int(in_dev.sum()),
        "unlabelled_without_dev_texts": write_lines(out / "unlabelled-without-dev.txt",
                                                    [t for t, hit in zip(unlabelled, in_dev) if not hit]),
    }


# ---------------------------------------------------------------------------------------------------------
# WikiQA
# ---------------------------------------------------------------------------------------------------------

def prepare_wikiqa(root: Path, out: Path, seed: int) -> dict:
    splits = {split: read_wikiqa(source(root, f"wikiqa/{split}")) for split in ("train", "dev", "test")}
    labelled = labelled_records(splits["train"])
    out.mkdir()
    counts = {"labelled_pairs": write_jsonl(out / "labelled.jsonl", labelled), **labelled_counts(labelled),
              "train_questions": len(splits["train"])}
    for split in ("dev", "test"):
        records = reranking_records(splits[split])
        counts[f"{split}_questions"] = write_jsonl(out / f"{split}.jsonl", records)
        counts[f"{split}_questions_dropped_without_positive"] = len(splits[split]) - len(records)
        counts[f"{split}_candidates"] = sum(len(r["positive"]) + len(r["negative"]) for r in records)
    return counts


# ---------------------------------------------------------------------------------------------------------
# TwitterPara
# ---------------------------------------------------------------------------------------------------------

def read_pit2015_dev(path: Path) -> LabelledPairs:
    """PIT-2015 dev.data: topic id, topic, sentence 1, sentence 2, (yes, no) votes of 5 workers, tags."""
    first, second, labels, gold = [], [], [], []
    for line_no, line in enumerate(decoded_lines(path), 1):
        fields = line.split("\t")
        votes = PIT_DEV_VOTES.fullmatch(fields[4].strip()) if len(fields) >= 5 else None
        if votes is None or int(votes[1]) + int(votes[2]) != 5:
            raise InputFileError(f"{path}:{line_no}: expected topic id, topic, sentence 1, sentence 2 and (yes, no) "
                                 "votes of 5 workers, tab-separated")
        yes = int(votes[1])
        first.append(fields[2].strip())
        second.append(fields[3].strip())
        labels.append(1 if yes >= 3 else 0 if yes <= 1 else DEBATABLE)
        gold.append(yes)
    return LabelledPairs("pit-dev", first, second, np.asarray(labels), np.asarray(gold, dtype=np.float64))


def read_turl_train(root: Path) -> list[tuple[str, str, str]]:
    """TURL train pairs (lower-cased, tokenised) with their 0/1 label as text."""
    columns = [decoded_lines(source(root, f"{TURL_TRAIN}/{name}")) for name in ("a.toks", "b.toks", "sim.txt")]
    if len({len(c) for c in columns}) != 1:
        raise InputFileError(f"{root / TURL_TRAIN}: a.toks, b.toks and sim.txt differ in length")
    return [(a.strip(), b.strip(), label.strip()) for a, b, label in zip(*columns)]


def prepare_twitterpara(root: Path, out: Path, seed: int) -> dict:
    corpus = twitterpara_corpus(root)
    train = read_turl_train(root)
    partial = label_fraction(train, LABEL_FRACTION, seed=seed)
    pit_test = read_pit2015_test(source(root, f"{PIT}/test.data"), source(root, f"{PIT}/test.label"))
    turl_test = read_twitter_url_corpus(source(root, TURL_TEST))
    dev = read_pit2015_dev(source(root, f"{PIT}/dev.data"))
    out.mkdir()
    tests = {"pit": pair_records(pit_test), "turl": pair_records(turl_test)}
    return {
        "unlabelled_texts": write_lines(out / "unlabelled.txt", corpus.texts),
        "unlabelled_distinct_tweets_read": corpus.distinct_read,
        "unlabelled_dropped_as_test_near_duplicates": corpus.dropped_heldout,
        "labelled_pairs": write_jsonl(out / "labelled-10pct.jsonl", [
            {"sentence1": a, "sentence2": b, "label": None if label is None else int(label)}
            for a, b, label in partial]),
        "labelled_all_pairs": write_jsonl(out / "labelled-all.jsonl", [
            {"sentence1": a, "sentence2": b, "label": int(label)} for a, b, label in train]),
        "labelled_pairs_with_label": sum(label is not None for _, _, label in partial),
        "labelled_positive_labels": sum(label == "1" for _, _, label in partial),
        "dev_pairs": write_jsonl(out / "dev.jsonl", pair_records(dev)),
        "dev_pairs_dropped_debatable": int((dev.labels == DEBATABLE).sum()),
        "test_pit_pairs": write_jsonl(out / "test-pit.jsonl", tests["pit"]),
        "test_turl_pairs": write_jsonl(out / "test-turl.jsonl", tests["turl"]),
        "test_pairs": write_jsonl(out / "test.jsonl", tests["pit"] + tests["turl"]),
    }


# Each writes its files into a new folder and returns the counts to print; the seed draws TwitterPara's labels
# and the Qatar Living test questions.
DOMAINS = {"qatarliving": prepare_qatarliving, "wikiqa": prepare_wikiqa, "twitterpara": prepare_twitterpara}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"), help="the data store's root")
    parser.add_argument("--output", type=Path, required=True, help="new folder for the prepared files")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output folder")
    parser.add_argument("--domains", default=",".join(DOMAINS), help="comma-separated subset of "
                                                                    f"{', '.join(DOMAINS)}")
    parser.add_argument("--seed", type=int, default=LABEL_SEED,
                        help="seed of the 10%% TwitterPara label draw and of the Qatar Living test draw")
    args = parser.parse_args(argv)
    try:
        domains = [d.strip() for d in args.domains.split(",") if d.strip()]
        unknown = [d for d in domains if d not in DOMAINS]
        if unknown:
            raise SentforgeError(f"--domains: unknown {unknown[0]!r}; choose from {', '.join(DOMAINS)}")
        counts = {}
        with atomic_dir(args.output, args.overwrite) as tmp:
            for domain in domains:
                counts[domain] = DOMAINS[domain](args.data_dir, tmp / domain, args.seed)
                print(f"{domain}:")
                for key, value in counts[domain].items():
                    print(f"  {key}: {value}")
            save_json(tmp / "counts.json", counts)
    except SentforgeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
