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

from functools import cached_property
from pathlib import Path
from typing import Any


from sentforge.evaluation.readers.useb import LabelledPairs, read_pit2015_test, read_twitter_url_corpus
from sentforge.evaluation.scoring import paraphrase_scores
from sentforge.evaluation.similarity import is_lexical
from sentforge.evaluation.task import Task, TaskMetadata


PIT_DIR = "twitterpara/pit2015/data"
TURL_TEST = "twitterpara/turl/Twitter_URL_Corpus_test.txt"
# USEB's data-eval folder keeps the three files side by side.
USEB_LAYOUT = ("twitterpara/test.data", "twitterpara/test.label", "twitterpara/Twitter_URL_Corpus_test.txt")


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


TASKS = (TwitterParaTask,)
