"""Training data of Sentence-T5's two stages (Ni et al., 2022): question–answer pairs and NLI triples.

Stage 1, (question, answer) pairs:
- Qatar Living forum, SemEval-2015/2016 Task 3 XML: a question (subject and body) with each of its
  comments labelled Good with respect to that question (2015: `CGOLD="Good"`, trial file
  `ANNOTATION="good"`; 2016/2017 threads: `RELC_RELEVANCE2RELQ="Good"`);
- WikiQA in the id.txt / a.toks / b.toks / sim.txt layout: each question with its answer sentences labelled 1;
- Quora Question Pairs (GLUE QQP .tsv, read by data/nli.py): the duplicate pairs;
- any pair table (.tsv/.csv with a header, .jsonl) with sentence1, sentence2[, negative] (data/pairs.py).

Stage 2, (premise, entailment, contradiction) triples from NLI pairs (SentEval SNLI, SICK, pair tables;
read by data/nli.py): grouped by premise, each entailment hypothesis is a positive and a sentence that
contradicts the premise its hard negative.

Evaluation sets stay out of the folder readers: WikiQA's test split and the SemEval-2016/2017 test XML
are re-ranking tasks of sentforge eval. Every reader drops exact duplicate examples.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from pathlib import Path

from sentforge.data.nli import DUPLICATE, NLIPair, read_nli_pairs, read_qqp
from sentforge.data.pairs import PAIR_SUFFIXES, read_pairs
from sentforge.data.ranking_queries import read_wikiqa
from sentforge.data.texts import decoded_lines
from sentforge.support.errors import InputFileError

logger = logging.getLogger(__name__)

QAPair = tuple[str, str]
NLITriple = tuple[str, str, str]

WIKIQA_TRAINING_SPLITS = ("train", "dev")  # test is the WikiQA re-ranking evaluation
# The SemEval-2016/2017 Task 3 test files are the QatarLivingCQA re-ranking evaluation sets.
_SEMEVAL_TEST = re.compile(r"semeval-?201[67].*test", re.IGNORECASE)
ENTAILMENT, CONTRADICTION = "entailment", "contradiction"


def _clean(text: str | None) -> str:
    """Collapse the forum's line breaks and runs of spaces."""
    return " ".join(text.split()) if text else ""


def _unique(examples: Iterable[tuple[str, ...]]) -> list:
    return list(dict.fromkeys(examples))


# --- Qatar Living (SemEval Task 3) ---------------------------------------------------------------


def _parse_xml(path: Path) -> ET.Element:
    try:
        return ET.parse(path).getroot()
    except FileNotFoundError:
        raise InputFileError(f"{path}: file not found") from None
    except ET.ParseError as err:
        line, column = err.position
        raise InputFileError(f"{path}, line {line}, column {column}: malformed XML") from None


def _question_threads(root: ET.Element) -> Iterable[tuple[str, str, list[tuple[str, str]]]]:
    """(question id, question text, [(comment label, comment text)]) of every thread, in any of the
    three layouts: SemEval-2015 (`Question`/`Comment CGOLD`), the 2015 trial file
    (`Question`/`Comment ANNOTATION`) and SemEval-2016/2017 (`Thread`/`RelQuestion`/`RelComment`)."""
    for question in root.iter("Question"):
        subject = question.findtext("QSubject") if question.find("QSubject") is not None \
            else question.findtext("Short_Question")
        body = question.findtext("QBody") if question.find("QBody") is not None \
            else question.findtext("Full_Question")
        comments = []
        for comment in question.iter("Comment"):
            label = comment.get("CGOLD", comment.get("ANNOTATION"))
            text = comment.findtext("CBody") if comment.find("CBody") is not None else comment.findtext("Body")
            comments.append(((label or "").strip(), _clean(text)))
        yield question.get("QID", "?"), _clean(f"{_clean(subject)} {_clean(body)}"), comments
    seen: set[str] = set()
    for thread in root.iter("Thread"):
        related = thread.find("RelQuestion")
        if related is None:
            continue
        qid = related.get("RELQ_ID", "?")
        if qid in seen:  # subtask B/C files repeat a thread under every original question that lists it
            continue
        seen.add(qid)
        text = _clean(f"{_clean(related.findtext('RelQSubject'))} {_clean(related.findtext('RelQBody'))}")
        comments = [((c.get("RELC_RELEVANCE2RELQ") or "").strip(), _clean(c.findtext("RelCText")))
                    for c in thread.iter("RelComment")]
        yield qid, text, comments


def read_qatarliving_file(path: str | Path) -> list[QAPair]:
    """(question, comment) pairs of one SemEval Task 3 XML file: every comment labelled Good with
    respect to its own question. A file without such labels gives no pairs (SemEval-2016 training
    part 1 labels its comments only against the original questions)."""
    path = Path(path)
    root = _parse_xml(path)
    threads = list(_question_threads(root))
    if not threads:
        raise InputFileError(f"{path}: no Question or Thread elements; expected SemEval Task 3 (Qatar Living) XML")
    pairs = []
    for _, question, comments in threads:
        if not question:
            continue
        pairs.extend((question, text) for label, text in comments if label.lower() == "good" and text)
    return _unique(pairs)


def read_qatarliving(path: str | Path) -> list[QAPair]:
    """Good (question, comment) pairs of one XML file, or of every .xml file below a folder (sorted)
    except the SemEval-2016/2017 test files, which are evaluation sets."""
    path = Path(path)
    if path.is_file():
        pairs = read_qatarliving_file(path)
        if not pairs:
            raise InputFileError(f"{path}: no comment is labelled Good with respect to its own question "
                                 "(CGOLD, ANNOTATION or RELC_RELEVANCE2RELQ)")
        return pairs
    if not path.is_dir():
        raise InputFileError(f"Qatar Living data not found: {path}")
    files = sorted(p for p in path.rglob("*.xml") if not _SEMEVAL_TEST.search(p.name))
    if not files:
        raise InputFileError(f"{path}: no SemEval Task 3 .xml files below this folder")
    pairs = []
    for file in files:
        found = read_qatarliving_file(file)
        logger.info("%s: %d question-answer pairs", file, len(found))
        pairs.extend(found)
    if not pairs:
        raise InputFileError(f"{path}: no comment in {len(files)} XML files is labelled Good with respect to its "
                             "own question")
    return _unique(pairs)


# --- WikiQA ---------------------------------------------------------------------------------------


def read_wikiqa_split(directory: str | Path) -> list[QAPair]:
    """(question, answer sentence) pairs of one WikiQA split folder: the answers whose sim.txt label is 1."""
    pairs = []
    for question in read_wikiqa(Path(directory)):
        for answer, relevant in zip(question.candidates, question.relevant):
            if relevant and not (question.query and answer):
                raise InputFileError(f"{directory}: question {question.qid} has an empty question or answer")
            if relevant:
                pairs.append((question.query, answer))
    return _unique(pairs)


def read_wikiqa_answers(path: str | Path, splits: Sequence[str] = WIKIQA_TRAINING_SPLITS) -> list[QAPair]:
    """WikiQA positives of a split folder (holding a.toks), or of `splits` of the WikiQA root folder
    (default train and dev: test is the WikiQA re-ranking evaluation)."""
    path = Path(path)
    if (path / "a.toks").is_file():
        return read_wikiqa_split(path)
    pairs = []
    for split in splits:
        if not (path / split).is_dir():
            raise InputFileError(f"WikiQA split folder not found: {path / split}")
        pairs.extend(read_wikiqa_split(path / split))
    return _unique(pairs)


# --- QQP ------------------------------------------------------------------------------------------


def read_qqp_duplicates(path: str | Path) -> list[QAPair]:
    """(question1, question2) of the duplicate pairs of a GLUE QQP .tsv file (header optional). Rows
    with the wrong number of fields (GLUE's QQP files have a few, broken by stray tabs or line breaks)
    are skipped with a warning."""
    return _unique((first, second) for first, second, label in read_qqp(path, skip_malformed=True)
                   if label == DUPLICATE)


# --- any QA source --------------------------------------------------------------------------------


def _is_pair_table(path: Path) -> bool:
    if path.suffix.lower() != ".tsv":
        return path.suffix.lower() in PAIR_SUFFIXES
    first = next((line for line in decoded_lines(path) if line.strip()), "")
    return "sentence1" in first.split("\t")


def read_qa_pairs(path: str | Path) -> list[tuple[str, ...]]:
    """Stage-1 examples of a path, told apart by its contents:

    - a folder holding a.toks, or train/ dev/ folders that do: WikiQA;
    - a .xml file, or a folder with .xml files below it: Qatar Living (SemEval Task 3);
    - a folder of .tsv files, or a .tsv file without a sentence1 column: QQP (duplicates);
    - a .csv/.jsonl file, or a .tsv with a header naming sentence1: a pair table
      (sentence1, sentence2[, negative]).
    """
    path = Path(path)
    if path.is_dir():
        if (path / "a.toks").is_file() or all((path / split / "a.toks").is_file() for split in WIKIQA_TRAINING_SPLITS):
            pairs = read_wikiqa_answers(path)
        elif any(path.rglob("*.xml")):
            pairs = read_qatarliving(path)
        elif tsvs := sorted(path.glob("*.tsv")):
            pairs = _unique(pair for file in tsvs for pair in read_qqp_duplicates(file))
        else:
            raise InputFileError(f"{path}: not a WikiQA, Qatar Living or QQP folder (no a.toks, .xml or .tsv files)")
    elif not path.is_file():
        raise InputFileError(f"QA data not found: {path}")
    elif path.suffix.lower() == ".xml":
        pairs = read_qatarliving(path)
    elif _is_pair_table(path):
        pairs = _unique(read_pairs(path))
    elif path.suffix.lower() == ".tsv":
        pairs = read_qqp_duplicates(path)
    else:
        raise InputFileError(f"{path}: unsupported QA data; give a WikiQA, Qatar Living or QQP folder, a .xml, "
                             f"or a pair table ({', '.join(PAIR_SUFFIXES)})")
    if not pairs:
        raise InputFileError(f"{path} holds no question-answer pairs")
    return pairs


# --- NLI triples ----------------------------------------------------------------------------------


def nli_triples(pairs: Sequence[NLIPair]) -> list[NLITriple]:
    """(premise, entailment, contradiction) triples: the hypotheses of each premise (first sentence),
    grouped; the i-th entailment hypothesis gets the (i mod n)-th of the premise's n contradictions.

    Contradiction is symmetric, so a premise's contradictions also include the sentences that name it
    as their contradiction hypothesis (SICK reuses sentences on both sides; SNLI never does).
    Premises without both an entailment and a contradiction give none. Labels are compared lower-cased.
    """
    entailments: dict[str, list[str]] = {}
    contradictions: dict[str, dict[str, None]] = {}  # ordered sets
    for premise, hypothesis, label in pairs:
        label = (label or "").lower()
        if label == ENTAILMENT:
            entailments.setdefault(premise, []).append(hypothesis)
        elif label == CONTRADICTION:
            contradictions.setdefault(premise, {})[hypothesis] = None
            contradictions.setdefault(hypothesis, {})[premise] = None
    triples = []
    for premise, positives in entailments.items():
        negatives = list(contradictions.get(premise, ()))
        if negatives:
            triples.extend((premise, positive, negatives[i % len(negatives)]) for i, positive in enumerate(positives))
    return _unique(triples)


def read_nli_triples(path: str | Path) -> list[NLITriple]:
    """NLI triples of any pair format data/nli.py reads (a SentEval SNLI folder: dev and test; SICK_*.txt;
    a pair table with sentence1, sentence2, label)."""
    pairs = read_nli_pairs(path)
    triples = nli_triples(pairs)
    if not triples:
        raise InputFileError(f"{path}: no premise has both an entailment and a contradiction hypothesis "
                             f"(labels found: {', '.join(sorted({str(p[2]) for p in pairs}))})")
    logger.info("%s: %d NLI pairs -> %d (premise, entailment, contradiction) triples", path, len(pairs), len(triples))
    return triples
