"""In-domain unlabelled corpora for the TSDAE paper's domain experiments, kept apart from the test data.

Both read the data store's layout (the root that `sentforge eval --data-dir` takes):

- `twitterpara_corpus`: the distinct tweets of the Twitter URL corpus *train* split
  (`twitterpara/turl/castorini-twitterPPDB/train/{a,b}.toks`, one tweet per line).
  Held out: every sentence of the TwitterPara task (PIT-2015 test and TURL test).
- `qatarliving_corpus`: Qatar Living forum questions (subject and body, as the re-ranking task joins
  them) of the SemEval-2015 Task 3 trial/devel/test XML, and the question bodies of the cleaned
  subtask-B train CSV (its subject column glues two subjects together, so bodies only). Held out:
  every question of the QatarLivingCQA tasks (SemEval-2016 train part 1; the 2016 test XML when
  present) and of the cleaned VAL-BASE/TEST-BASE CSVs, which are copies of that train part 1 and of
  the 2016 test set.

A text is dropped when its word set (lower-cased `\\w+` tokens) has a Jaccard similarity of at least
`NEAR_DUPLICATE_JACCARD` with a held-out text: the same questions appear in several copies that differ
in punctuation and character-encoding damage ("every week" / "everyÂ week"), which exact matching misses.
"""

from __future__ import annotations

import csv
import logging
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree


from sentforge.data.near_duplicates import NEAR_DUPLICATE_JACCARD, near_duplicates
from sentforge.data.texts import decoded_lines
from sentforge.support.errors import DataNotFoundError, InputFileError
from sentforge.evaluation.tasks.pair_classification import TwitterParaTask
from sentforge.evaluation.tasks.reranking import QatarLivingCQATask, QatarLivingCQATest2016Task

logger = logging.getLogger(__name__)

TURL_TRAIN = "twitterpara/turl/castorini-twitterPPDB/train"
QL_2015_FILES = tuple(f"cqa-qatarliving/semeval2015-task3/CQA-QL-{part}.xml" for part in ("trial", "devel", "test"))
QL_TRAIN_CSV = "cqa-qatarliving/cleaned/subtask-b/TRAIN-BASE.csv"
QL_HELDOUT_CSVS = tuple(f"cqa-qatarliving/cleaned/subtask-{task}/{split}.csv"
                        for task in ("a", "b", "c") for split in ("VAL-BASE", "TEST-BASE"))
QL_QUESTION_COLUMNS = ("question", "rel_question")

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class DomainCorpus:
    """Unlabelled in-domain texts and where they came from."""

    name: str
    texts: list[str]
    sources: list[str]
    distinct_read: int
    dropped_heldout: int
    heldout_texts: int

    def summary(self) -> dict[str, object]:
        return {"domain": self.name, "texts": len(self.texts), "sources": self.sources,
                "distinct_read": self.distinct_read, "dropped_as_heldout_near_duplicates": self.dropped_heldout,
                "heldout_texts": self.heldout_texts, "near_duplicate_jaccard": NEAR_DUPLICATE_JACCARD}


def _require(root: Path, relative: str) -> Path:
    path = root / relative
    if not path.exists():
        raise DataNotFoundError(f"{path} not found (data directory {root})")
    return path


def _clean(text: str | None) -> str:
    return _SPACES.sub(" ", text or "").strip()


def _distinct(texts: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(t for t in texts if t))


def _without_heldout(name: str, texts: list[str], heldout: list[str], sources: list[str]) -> DomainCorpus:
    held = _distinct(_clean(t) for t in heldout)
    dropped = near_duplicates(texts, held)
    kept = [text for text, drop in zip(texts, dropped) if not drop]
    logger.info("%s corpus: %d distinct texts read, %d dropped as near-duplicates of %d held-out texts, %d kept",
                name, len(texts), int(dropped.sum()), len(held), len(kept))
    return DomainCorpus(name, kept, sources, len(texts), int(dropped.sum()), len(held))


def twitterpara_corpus(data_dir: str | Path) -> DomainCorpus:
    """Distinct TURL train tweets, minus near-duplicates of the TwitterPara test sentences."""
    root = Path(data_dir)
    files = [_require(root, f"{TURL_TRAIN}/{side}.toks") for side in ("a", "b")]
    tweets = _distinct(_clean(line) for path in files for line in decoded_lines(path))
    task = TwitterParaTask(root)
    if task.missing_files():
        raise DataNotFoundError(f"TwitterPara test files missing: {', '.join(map(str, task.missing_files()))}; "
                                "they are needed to keep the test sentences out of the training corpus")
    return _without_heldout("twitterpara", tweets, task.texts(), [str(p) for p in files])


def qatarliving_corpus(data_dir: str | Path) -> DomainCorpus:
    """Qatar Living questions outside the evaluation data (see the module docstring)."""
    root = Path(data_dir)
    xml_files = [_require(root, name) for name in QL_2015_FILES]
    train_csv = _require(root, QL_TRAIN_CSV)
    questions = [text for path in xml_files for text in read_semeval2015_questions(path)]
    questions += read_csv_columns(train_csv, QL_QUESTION_COLUMNS)
    evaluated = QatarLivingCQATask(root)
    if evaluated.missing_files():
        raise DataNotFoundError(f"QatarLivingCQA files missing: {', '.join(map(str, evaluated.missing_files()))}; "
                                "they are needed to keep the test questions out of the training corpus")
    heldout = list(evaluated.texts())
    test2016 = QatarLivingCQATest2016Task(root)
    if not test2016.missing_files():
        heldout += test2016.texts()
    for name in QL_HELDOUT_CSVS:
        if (root / name).exists():
            heldout += read_csv_columns(root / name, ("question", "rel_question"), required=False)
    return _without_heldout("qatarliving", _distinct(_clean(q) for q in questions), heldout,
                            [str(p) for p in (*xml_files, train_csv)])


def read_semeval2015_questions(path: Path) -> list[str]:
    """SemEval-2015 Task 3 XML: each `Question`'s subject and body, joined as the re-ranking task joins them."""
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as err:
        line, column = err.position
        raise InputFileError(f"{path}, line {line}, column {column}: malformed XML") from None
    questions = [" ".join(part for part in (_clean(q.findtext("QSubject")), _clean(q.findtext("QBody"))) if part)
                 for q in root.iter("Question")]
    if not questions:
        raise InputFileError(f"{path}: no Question elements; expected SemEval-2015 Task 3 XML")
    return questions


def read_csv_columns(path: Path, columns: Sequence[str], required: bool = True) -> list[str]:
    """The values of `columns` in a CSV file with a header (all of them required unless `required` is
    False, when the columns present are read)."""
    csv.field_size_limit(sys.maxsize)
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        present = [c for c in columns if c in header]
        if required and len(present) < len(columns):
            missing = [c for c in columns if c not in header]
            raise InputFileError(f"{path}: no column {', '.join(map(repr, missing))} in the header {header}")
        try:
            return [_clean(row[c]) for row in reader for c in present if row[c]]
        except csv.Error as err:
            raise InputFileError(f"{path}, line {reader.line_num}: {err}") from None


CORPORA = {"twitterpara": twitterpara_corpus, "qatarliving": qatarliving_corpus}
