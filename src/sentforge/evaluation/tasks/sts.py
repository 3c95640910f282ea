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
correlation over the concatenated subsets). A subset with fewer than two scored pairs, or whose gold
scores are all equal, is an error naming its file: its correlation is undefined.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, ClassVar


from sentforge.evaluation.readers.sts import (
    SENTEVAL_SICK,
    SENTEVAL_STS,
    STSB_PROCESSED,
    STSB_RAW,
    STSPairs,
    join_tokens,
    keep_text,
    read_semeval_sts,
    read_sick,
    read_stsbenchmark,
)
from sentforge.evaluation.scoring import check_gold, sts_scores
from sentforge.evaluation.task import Task, TaskMetadata


class STSTask(Task):
    """Cosine-similarity STS over one or more subsets; subclasses say how to read them."""

    def load(self) -> list[STSPairs]:
        raise NotImplementedError

    @cached_property
    def subsets(self) -> list[STSPairs]:
        return [check_gold(pairs) for pairs in self.load()]

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
    return type(metadata.name.replace("-", "_") + "Task", (SemEvalSTSTask,), attrs)


# STS12 ... STS16, then their -raw variants.
SEMEVAL_TASKS = tuple(
    _semeval_task(name, f"{SENTEVAL_STS}/{folder}" + (f"/{raw_folder}" if raw else ""), subsets, raw)
    for raw in (False, True) for name, (folder, raw_folder, subsets) in STS_YEARS.items())


class STSBenchmarkTask(STSTask):
    metadata = TaskMetadata(
        name="STSBenchmark", family="sts", main_metric="spearman",
        description="STS Benchmark test (1,379 pairs), SentEval-processed file; cosine similarity",
        files=(STSB_PROCESSED,), reference="Cer et al. 2017; SentEval layout")
    normalize: ClassVar[Callable[[str], str]] = staticmethod(join_tokens)

    def load(self) -> list[STSPairs]:
        return [read_stsbenchmark(self.data_dir / self.metadata.files[0], self.normalize)]


class STSBenchmarkRawTask(STSBenchmarkTask):
    metadata = TaskMetadata(
        name="STSBenchmark-raw", family="sts", main_metric="spearman",
        description="STS Benchmark test (1,379 pairs), original file; cosine similarity",
        files=(STSB_RAW,), reference="Cer et al. 2017; the figures published for sentence-transformers models",
        extra={"variant_of": "STSBenchmark"})
    normalize = staticmethod(keep_text)


class SICKRelatednessTask(STSTask):
    metadata = TaskMetadata(
        name="SICKRelatedness", family="sts", main_metric="spearman",
        description="SICK test (4,927 pairs), relatedness scores; cosine similarity",
        files=(f"{SENTEVAL_SICK}/SICK_test_annotated.txt",), reference="Marelli et al. 2014; SimCSE's SICK-R")

    def load(self) -> list[STSPairs]:
        return [read_sick(self.data_dir / self.metadata.files[0], join_tokens)]


TASKS = (*SEMEVAL_TASKS, STSBenchmarkTask, STSBenchmarkRawTask, SICKRelatednessTask)
