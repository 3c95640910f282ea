"""Semantic textual similarity: Pearson and Spearman (×100) between cosine similarity and gold scores.

Tasks, all on test sets (see docs/evaluation.md):

- `STS12` … `STS16`: SemEval STS 2012–2016 in SentEval's layout, the SentEval-processed top-level
  files (`STS.input.<subset>.txt`, `STS.gs.<subset>.txt`; Moses-tokenised, lower-cased). As in the
  official SentEval code, each sentence is split on whitespace and its tokens joined by single spaces,
  and pairs whose gold line is empty (not officially scored) are skipped.
- `STS12-raw` … `STS16-raw`: the same subsets from the original SemEval files in the sub-folders.
- `STSBenchmark` (SentEval-processed `sts-test.csv`) and `STSBenchmark-raw` (the original
  `stsbenchmark/sts-test.csv`, the file behind the published sentence-transformers figures).
- `SICKRelatedness`: SICK test, relatedness scores (SentEval ships the original file).

Multi-subset tasks report each subset, SentEval's aggregates (`*_mean`: mean over subsets,
`*_wmean`: weighted by pair count) and the "all" setting of SimCSE and Sentence-T5 (`*_all`: one
correlation over the concatenated subsets).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from scipy.stats import pearsonr, spearmanr

from sentforge.errors import InputFileError
from sentforge.evaluation.task import Task, TaskMetadata, register_task

SENTEVAL_STS = "senteval/downstream/STS"
SENTEVAL_SICK = "senteval/downstream/SICK"


@dataclass(frozen=True)
class STSPairs:
    """Scored sentence pairs of one subset."""

    name: str
    sentences1: list[str]
    sentences2: list[str]
    scores: np.ndarray  # float64, one gold score per pair

    def __len__(self) -> int:
        return len(self.scores)


def join_tokens(text: str) -> str:
    """SentEval's view of a line: whitespace-split tokens joined by single spaces."""
    return " ".join(text.split())


def keep_text(text: str) -> str:
    """Raw originals are encoded as written, without surrounding whitespace."""
    return text.strip()


def read_lines(path: Path) -> list[str]:
    """UTF-8 lines without line endings. Only newlines separate lines (str.splitlines would also
    break at rare Unicode separators inside a sentence; none occur in the distributed files, so
    this reads them exactly as SentEval does)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError(f"{path}: file not found") from None
    except UnicodeDecodeError as err:
        line = path.read_bytes()[:err.start].count(b"\n") + 1
        raise InputFileError(f"{path}, line {line}: not valid UTF-8 ({err.reason})") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def parse_score(value: str, path: Path, line_no: int) -> float:
    try:
        score = float(value)
    except ValueError:
        raise InputFileError(f"{path}, line {line_no}: gold score {value!r} is not a number") from None
    if not np.isfinite(score):
        raise InputFileError(f"{path}, line {line_no}: gold score {value!r} is not a finite number")
    return score


def split_fields(line: str, path: Path, line_no: int, needed: int) -> list[str]:
    fields = line.split("\t")
    if len(fields) < needed:
        raise InputFileError(f"{path}, line {line_no}: expected at least {needed} tab-separated fields, "
                             f"found {len(fields)}")
    return fields


def read_semeval_sts(input_path: Path, gold_path: Path, name: str,
                     normalize: Callable[[str], str] = join_tokens) -> STSPairs:
    """SemEval STS format: `input` holds `sentence1<TAB>sentence2[<TAB>source notes…]` per line, `gold`
    one score per line; an empty gold line marks a pair that was not scored, which is skipped."""
    inputs, golds = read_lines(input_path), read_lines(gold_path)
    if len(inputs) != len(golds):
        raise InputFileError(f"{input_path} has {len(inputs)} lines but its gold file {gold_path} has "
                             f"{len(golds)}; they must pair up line by line")
    first, second, scores = [], [], []
    for line_no, (line, gold) in enumerate(zip(inputs, golds), 1):
        fields = split_fields(line, input_path, line_no, 2)
        if not gold.strip():
            continue
        scores.append(parse_score(gold, gold_path, line_no))
        first.append(normalize(fields[0]))
        second.append(normalize(fields[1]))
    return STSPairs(name, first, second, np.asarray(scores, dtype=np.float64))


def read_stsbenchmark(path: Path, normalize: Callable[[str], str] = join_tokens) -> STSPairs:
    """STS Benchmark CSV: tab-separated genre, file, years, id, score, sentence1, sentence2 [, sources];
    no header and no quoting (quotes are part of the sentences)."""
    first, second, scores = [], [], []
    for line_no, line in enumerate(read_lines(path), 1):
        fields = split_fields(line, path, line_no, 7)
        scores.append(parse_score(fields[4], path, line_no))
        first.append(normalize(fields[5]))
        second.append(normalize(fields[6]))
    return STSPairs(path.stem, first, second, np.asarray(scores, dtype=np.float64))


def read_sick(path: Path, normalize: Callable[[str], str] = join_tokens) -> STSPairs:
    """SICK: a header line, then tab-separated pair_ID, sentence_A, sentence_B, relatedness_score, …"""
    lines = read_lines(path)
    if not lines:
        raise InputFileError(f"{path}: empty file; expected a header line and SICK pairs")
    first, second, scores = [], [], []
    for line_no, line in enumerate(lines[1:], 2):
        fields = split_fields(line, path, line_no, 4)
        scores.append(parse_score(fields[3], path, line_no))
        first.append(normalize(fields[1]))
        second.append(normalize(fields[2]))
    return STSPairs(path.stem, first, second, np.asarray(scores, dtype=np.float64))


def pair_cosines(encoder: Any, pairs: STSPairs) -> np.ndarray:
    """Cosine similarity of each pair in float64; a zero vector scores 0 (SentEval's nan_to_num)."""
    a = np.asarray(encoder.encode(pairs.sentences1), dtype=np.float64)
    b = np.asarray(encoder.encode(pairs.sentences2), dtype=np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def correlations(system: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """Pearson and Spearman ×100; 0 when undefined (constant scores), as SentEval reports NaN as 0."""
    if len(gold) < 2 or np.ptp(system) == 0 or np.ptp(gold) == 0:
        return {"pearson": 0.0, "spearman": 0.0}
    return {"pearson": 100 * float(pearsonr(system, gold)[0]), "spearman": 100 * float(spearmanr(system, gold)[0])}


def sts_scores(encoder: Any, subsets: Sequence[STSPairs]) -> dict[str, float]:
    """Per-subset correlations, then for several subsets SentEval's mean and weighted mean and the
    "all" correlation over the concatenation."""
    if len(subsets) == 1:
        (pairs,) = subsets
        return {**correlations(pair_cosines(encoder, pairs), pairs.scores), "n": len(pairs)}
    metrics: dict[str, float] = {}
    per_subset, system_all = [], []
    for pairs in subsets:
        system = pair_cosines(encoder, pairs)
        system_all.append(system)
        result = correlations(system, pairs.scores)
        per_subset.append(result)
        metrics.update({f"{pairs.name}.pearson": result["pearson"], f"{pairs.name}.spearman": result["spearman"],
                        f"{pairs.name}.n": len(pairs)})
    weights = [len(pairs) for pairs in subsets]
    overall = correlations(np.concatenate(system_all), np.concatenate([p.scores for p in subsets]))
    for metric in ("pearson", "spearman"):
        values = [result[metric] for result in per_subset]
        metrics[f"{metric}_mean"] = float(np.mean(values))
        metrics[f"{metric}_wmean"] = float(np.average(values, weights=weights))
        metrics[f"{metric}_all"] = overall[metric]
    metrics["n"] = sum(weights)
    return metrics


class STSTask(Task):
    """Cosine-similarity STS over one or more subsets; subclasses say how to read them."""

    def load(self) -> list[STSPairs]:
        raise NotImplementedError

    @cached_property
    def subsets(self) -> list[STSPairs]:
        return self.load()

    def texts(self) -> list[str]:
        return [text for pairs in self.subsets for text in (*pairs.sentences1, *pairs.sentences2)]

    def evaluate(self, encoder: Any) -> dict[str, Any]:
        return sts_scores(encoder, self.subsets)


class SemEvalSTSTask(STSTask):
    """One SemEval STS year: a folder with an input and a gold file per subset."""

    folder: ClassVar[str]
    subset_names: ClassVar[tuple[str, ...]]
    input_pattern: ClassVar[str] = "STS.input.{}.txt"
    gold_pattern: ClassVar[str] = "STS.gs.{}.txt"
    normalize: ClassVar[Callable[[str], str]] = staticmethod(join_tokens)

    def load(self) -> list[STSPairs]:
        root = self.data_dir / self.folder
        return [read_semeval_sts(root / self.input_pattern.format(name), root / self.gold_pattern.format(name),
                                 name, self.normalize)
                for name in self.subset_names]


# SentEval's subsets; STS13's SMT subset is licence-restricted and absent, as in SentEval.
STS_YEARS = {
    "STS12": ("STS12-en-test", "test-gold",
              ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews")),
    "STS13": ("STS13-en-test", "test-gs", ("FNWN", "headlines", "OnWN")),
    "STS14": ("STS14-en-test", "sts-en-test-gs-2014",
              ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news")),
    "STS15": ("STS15-en-test", "test_evaluation_task2a",
              ("answers-forums", "answers-students", "belief", "headlines", "images")),
    "STS16": ("STS16-en-test", "sts2016-english-with-gs-v1.0",
              ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")),
}


def _semeval_task(name: str, folder: str, subsets: tuple[str, ...], raw: bool) -> type[SemEvalSTSTask]:
    year = name[3:]
    # The 2016 originals carry the year in their names (`STS2016.input.*.txt`).
    prefix = "STS2016" if raw and year == "16" else "STS"
    input_pattern, gold_pattern = f"{prefix}.input.{{}}.txt", f"{prefix}.gs.{{}}.txt"
    files = tuple(f"{folder}/{pattern.format(s)}" for s in subsets for pattern in (input_pattern, gold_pattern))
    what = "original SemEval files" if raw else "SentEval-processed files (tokens joined by single spaces)"
    metadata = TaskMetadata(
        name=f"{name}-raw" if raw else name, family="sts", main_metric="spearman_mean",
        description=f"SemEval STS 20{year} test, {len(subsets)} subsets, {what}; cosine similarity",
        files=files, splits=("test",),
        reference="Conneau & Kiela 2018, SentEval (mean over subsets); Gao et al. 2021, SimCSE (all)",
        extra={"subsets": subsets, **({"variant_of": name} if raw else {})})
    attrs = {"metadata": metadata, "folder": folder, "subset_names": subsets, "input_pattern": input_pattern,
             "gold_pattern": gold_pattern, "normalize": staticmethod(keep_text if raw else join_tokens),
             "__module__": __name__, "__doc__": metadata.description}
    return register_task(type(metadata.name.replace("-", "_") + "Task", (SemEvalSTSTask,), attrs))


def _register_semeval_tasks() -> None:
    for raw in (False, True):
        for name, (folder, raw_folder, subsets) in STS_YEARS.items():
            path = f"{SENTEVAL_STS}/{folder}" + (f"/{raw_folder}" if raw else "")
            _semeval_task(name, path, subsets, raw)


_register_semeval_tasks()


STSB_PROCESSED = f"{SENTEVAL_STS}/STSBenchmark/sts-test.csv"
STSB_RAW = f"{SENTEVAL_STS}/STSBenchmark/stsbenchmark/sts-test.csv"


@register_task
class STSBenchmarkTask(STSTask):
    metadata = TaskMetadata(
        name="STSBenchmark", family="sts", main_metric="spearman",
        description="STS Benchmark test (1,379 pairs), SentEval-processed file; cosine similarity",
        files=(STSB_PROCESSED,), reference="Cer et al. 2017; SentEval layout")

    def load(self) -> list[STSPairs]:
        return [read_stsbenchmark(self.data_dir / STSB_PROCESSED, join_tokens)]


@register_task
class STSBenchmarkRawTask(STSTask):
    metadata = TaskMetadata(
        name="STSBenchmark-raw", family="sts", main_metric="spearman",
        description="STS Benchmark test (1,379 pairs), original file; cosine similarity",
        files=(STSB_RAW,), reference="Cer et al. 2017; the figures published for sentence-transformers models",
        extra={"variant_of": "STSBenchmark"})

    def load(self) -> list[STSPairs]:
        return [read_stsbenchmark(self.data_dir / STSB_RAW, keep_text)]


@register_task
class SICKRelatednessTask(STSTask):
    metadata = TaskMetadata(
        name="SICKRelatedness", family="sts", main_metric="spearman",
        description="SICK test (4,927 pairs), relatedness scores; cosine similarity",
        files=(f"{SENTEVAL_SICK}/SICK_test_annotated.txt",), reference="Marelli et al. 2014; SimCSE's SICK-R")

    def load(self) -> list[STSPairs]:
        return [read_sick(self.data_dir / self.metadata.files[0], join_tokens)]
