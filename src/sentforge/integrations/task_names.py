"""Task names in sentforge (SentEval / USEB naming) and in MTEB, with where their scores differ.

A sentforge task maps to one or more MTEB tasks. The main scores are comparable only where
`same_metric` is True; `note` says what differs otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.support.errors import ConfigError

_SEMEVAL_NOTE = ("sentforge's main score (SentEval) is the mean of the per-subset Spearman correlations; "
                 "MTEB pools all pairs of the year into one correlation, which is sentforge's `spearman_all`")


@dataclass(frozen=True)
class TaskAlias:
    sentforge: str
    mteb: tuple[str, ...]
    same_metric: bool
    note: str = ""


_CQADUPSTACK_FORUMS = ("Android", "English", "Gaming", "Gis", "Mathematica", "Physics", "Programmers", "Stats",
                       "Tex", "Unix", "Webmasters", "Wordpress")

TASK_ALIASES: tuple[TaskAlias, ...] = (
    *(TaskAlias(f"STS{year}", (f"STS{year}",), False, _SEMEVAL_NOTE + "; MTEB's text is the original, as in "
                f"sentforge's STS{year}-raw") for year in (12, 13, 14, 15, 16)),
    TaskAlias("STSBenchmark", ("STSBenchmark",), True,
              "both: Spearman of cosine similarity on the 1,379 test pairs; MTEB's text is the original, "
              "as in sentforge's STSBenchmark-raw (STSBenchmark is SentEval's tokenised file)"),
    TaskAlias("STSBenchmark-raw", ("STSBenchmark",), True, "same file, same metric"),
    TaskAlias("SICKRelatedness", ("SICK-R",), True, "both: Spearman of cosine similarity on SICK's test split"),
    TaskAlias("TwitterPara", ("TwitterSemEval2015", "TwitterURLCorpus"), False,
              "USEB's TwitterPara is the mean over both corpora of the average precision of cosine scores; "
              "MTEB reports each corpus on its own, with `max_ap` (best of several similarity functions)"),
    TaskAlias("AskUbuntu", ("AskUbuntuDupQuestions",), False,
              "sentforge: MAP over all candidates (USEB); MTEB: `map_at_1000`"),
    TaskAlias("SciDocs", ("SciDocsRR",), False,
              "USEB's SciDocs averages MAP over the cite, co-cite, co-read and co-view subtasks; "
              "MTEB's SciDocsRR is one reranking task with `map_at_1000`"),
    TaskAlias("CQADupStack", tuple(f"CQADupstack{forum}Retrieval" for forum in _CQADUPSTACK_FORUMS), False,
              "sentforge: MAP@100 averaged over the 12 forums (USEB); MTEB: one retrieval task per forum "
              "with `ndcg_at_10` (CQADupstackRetrieval averages them)"),
)


def mteb_names(sentforge_task: str) -> tuple[str, ...]:
    """The MTEB task names of a sentforge task name (case-insensitive)."""
    for alias in TASK_ALIASES:
        if alias.sentforge.lower() == sentforge_task.lower():
            return alias.mteb
    known = ", ".join(alias.sentforge for alias in TASK_ALIASES)
    raise ConfigError(f"no MTEB counterpart is known for task {sentforge_task!r}; known: {known}")


def sentforge_names(mteb_task: str) -> tuple[str, ...]:
    """The sentforge task names that correspond to an MTEB task name (empty when none does)."""
    return tuple(alias.sentforge for alias in TASK_ALIASES if mteb_task in alias.mteb)
