"""Paraphrase identification without training: rank sentence pairs by cosine similarity (or by a symmetric
BM25 score) and measure average precision (×100) against the gold paraphrase labels, as USEB does.

Task `TwitterPara` (USEB family) follows USEB's TwitterPara evaluator exactly. It reads the original
distributions' layout below, or USEB's `twitterpara/` folder with the three files side by side:

- PIT-2015 test (`twitterpara/pit2015/data/test.data`, with `test.label` beside it): columns topic id,
  topic, sentence 1, sentence 2, expert label 0–5; 4–5 is a paraphrase, 0–2 is not, 3 is debatable.
  `test.label` (`true` / `false` / `----` per line) must agree, and is checked.
- Twitter URL corpus test (`twitterpara/turl/Twitter_URL_Corpus_test.txt`): sentence 1, sentence 2,
  `(n,6)` votes, URL; n ≥ 4 is a paraphrase, n ≤ 2 is not, n = 3 is debatable. Blank lines are skipped.

Debatable pairs are left out of AP but kept in the Spearman correlation with the graded gold score; the
main metric is the mean of the two APs (USEB's `ap_twitter_avg`). Texts are stripped, as USEB does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr
from sklearn.metrics import average_precision_score

from sentforge.errors import InputFileError
from sentforge.evaluation.reranking import is_lexical, unit_embeddings
from sentforge.evaluation.sts import read_lines
from sentforge.evaluation.task import Task, TaskMetadata, register_task

DEBATABLE = -1


@dataclass(frozen=True)
class LabelledPairs:
    """Sentence pairs with a binary label (1 paraphrase, 0 not, -1 debatable) and a graded gold score."""

    name: str
    sentences1: list[str]
    sentences2: list[str]
    labels: np.ndarray
    gold: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


def _paraphrase_label(graded: int) -> int:
    """USEB's mapping of a 0–5 expert label or a 0–6 vote count: above 3 yes, below 3 no, 3 debatable."""
    return 1 if graded > 3 else 0 if graded < 3 else DEBATABLE


PIT_LABEL_FILE_VALUES = {1: "true", 0: "false", DEBATABLE: "----"}


def read_pit2015_test(data_path: Path, label_path: Path) -> LabelledPairs:
    """PIT-2015 test: `test.data` rows with the expert label in the fifth column, checked against `test.label`."""
    rows, label_lines = read_lines(data_path), read_lines(label_path)
    if len(rows) != len(label_lines):
        raise InputFileError(f"{data_path} has {len(rows)} lines but {label_path} has {len(label_lines)}; "
                             "they must pair up line by line")
    first, second, labels, gold = [], [], [], []
    for line_no, (row, label_line) in enumerate(zip(rows, label_lines), 1):
        fields = row.split("\t")
        if len(fields) < 5:
            raise InputFileError(f"{data_path}, line {line_no}: expected at least 5 tab-separated fields "
                                 f"(topic id, topic, sentence 1, sentence 2, label), found {len(fields)}")
        if fields[4].strip() not in ("0", "1", "2", "3", "4", "5"):
            raise InputFileError(f"{data_path}, line {line_no}: expert label must be 0-5, not {fields[4]!r}")
        graded = int(fields[4])
        label = _paraphrase_label(graded)
        binary = label_line.split("\t")[0].strip()
        if binary != PIT_LABEL_FILE_VALUES[label]:
            raise InputFileError(f"{label_path}, line {line_no}: says {binary!r} but label {graded} in "
                                 f"{data_path} means {PIT_LABEL_FILE_VALUES[label]!r}")
        first.append(fields[2].strip())
        second.append(fields[3].strip())
        labels.append(label)
        gold.append(graded)
    return LabelledPairs("pit", first, second, np.asarray(labels), np.asarray(gold, dtype=np.float64))


VOTES = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)")


def read_twitter_url_corpus(path: Path) -> LabelledPairs:
    """Twitter URL corpus: `sentence1<TAB>sentence2<TAB>(n,6)<TAB>url`, n of 6 annotators saying paraphrase."""
    first, second, labels, gold = [], [], [], []
    for line_no, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 3:
            raise InputFileError(f"{path}, line {line_no}: expected at least 3 tab-separated fields "
                                 f"(sentence 1, sentence 2, (n,6) votes), found {len(fields)}")
        votes = VOTES.fullmatch(fields[2].strip())
        if votes is None or int(votes[1]) > int(votes[2]):
            raise InputFileError(f"{path}, line {line_no}: votes must look like (n,6) with n <= 6, "
                                 f"not {fields[2]!r}")
        positive = int(votes[1])
        first.append(fields[0].strip())
        second.append(fields[1].strip())
        labels.append(_paraphrase_label(positive))
        gold.append(positive)
    return LabelledPairs("turl", first, second, np.asarray(labels), np.asarray(gold, dtype=np.float64))


def pair_scores(model: Any, pairs: LabelledPairs) -> np.ndarray:
    """Cosine similarity of each pair, or the lexical scorer's symmetric pair score."""
    if is_lexical(model):
        return np.asarray(model.pair_scores(pairs.sentences1, pairs.sentences2), dtype=np.float64)
    rows, vectors = unit_embeddings(model, [*pairs.sentences1, *pairs.sentences2])
    a = vectors[[rows[t] for t in pairs.sentences1]].astype(np.float64)
    b = vectors[[rows[t] for t in pairs.sentences2]].astype(np.float64)
    return np.einsum("ij,ij->i", a, b)


def paraphrase_metrics(scores: np.ndarray, pairs: LabelledPairs) -> dict[str, float]:
    """AP (×100) over the non-debatable pairs and Spearman (×100) with the graded gold over all pairs."""
    decided = pairs.labels != DEBATABLE
    labels = pairs.labels[decided]
    ap = 100 * float(average_precision_score(labels, scores[decided])) if labels.any() else 0.0
    constant = np.ptp(scores) == 0 or np.ptp(pairs.gold) == 0
    spearman = 0.0 if constant else 100 * float(spearmanr(pairs.gold, scores)[0])
    return {"ap": ap, "spearman": spearman, "n": len(pairs), "n_decided": int(decided.sum())}


def paraphrase_scores(model: Any, subsets: Sequence[LabelledPairs]) -> dict[str, float]:
    """Per-subset AP and Spearman, and their means over subsets (USEB's `*_avg`)."""
    metrics: dict[str, float] = {}
    for pairs in subsets:
        result = paraphrase_metrics(pair_scores(model, pairs), pairs)
        metrics.update({f"{pairs.name}.{name}": value for name, value in result.items()})
    for name in ("ap", "spearman"):
        metrics[f"{name}_avg"] = float(np.mean([metrics[f"{p.name}.{name}"] for p in subsets]))
    return metrics


PIT_DIR = "twitterpara/pit2015/data"
TURL_TEST = "twitterpara/turl/Twitter_URL_Corpus_test.txt"
# USEB's data-eval folder keeps the three files side by side.
USEB_LAYOUT = ("twitterpara/test.data", "twitterpara/test.label", "twitterpara/Twitter_URL_Corpus_test.txt")


@register_task
class TwitterParaTask(Task):
    """Reads the original distributions' layout (`metadata.files`) or, failing that, USEB's flat layout."""

    metadata = TaskMetadata(
        name="TwitterPara", family="useb", main_metric="ap_avg",
        description="TwitterPara: PIT-2015 test and Twitter URL corpus test; average precision of cosine "
                    "similarity against the paraphrase labels, mean over the two",
        files=(f"{PIT_DIR}/test.data", f"{PIT_DIR}/test.label", TURL_TEST),
        reference="Xu et al. 2015; Lan et al. 2017; USEB / TSDAE (Wang et al. 2021), ap_twitter_avg")

    @cached_property
    def files(self) -> tuple[Path, ...]:
        for layout in (self.metadata.files, USEB_LAYOUT):
            paths = tuple(self.data_dir / f for f in layout)
            if all(p.exists() for p in paths):
                return paths
        return tuple(self.data_dir / f for f in self.metadata.files)

    def missing_files(self) -> list[Path]:
        return [p for p in self.files if not p.exists()]

    @cached_property
    def subsets(self) -> list[LabelledPairs]:
        data, label, turl = self.files
        return [read_twitter_url_corpus(turl), read_pit2015_test(data, label)]

    def supports(self, model: Any) -> bool:
        return hasattr(model, "encode") or (is_lexical(model) and callable(getattr(model, "pair_scores", None)))

    def texts(self) -> list[str]:
        return [text for pairs in self.subsets for text in (*pairs.sentences1, *pairs.sentences2)]

    def evaluate(self, model: Any) -> dict[str, Any]:
        return paraphrase_scores(model, self.subsets)
