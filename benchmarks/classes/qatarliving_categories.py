"""Qatar Living forum questions labelled with the forum category their author posted them in, a class-labelled
set of benchmarks/classes (`qatarliving` in setfit_ab.py's SETS); run as a script, the category counts before and
after the rule below, and which categories are kept.

    python benchmarks/classes/qatarliving_categories.py --data-dir ../shared/data

Training questions: the related questions of SemEval-2016 Task 3's train-part1 (RELQ_CATEGORY, RelQSubject,
RelQBody) and the questions of SemEval-2015 Task 3's trial (CATEGORY, Short_Question, Full_Question) and
devel files (QCATEGORY, QSubject, QBody); test questions: SemEval-2015's test file. A question's text is its
subject, a space and its body; the subject alone when the body is empty, the body alone when it begins with the
subject (a subject that repeats the body's opening words is not written twice). HTML entities are decoded,
whitespace is collapsed to single spaces, and the 2016 file's export is undone (its commas written as
semicolons, its CSV quoting). Nothing is cut: the longest text is 104 words.

Each side keeps one row per text (the first; a text given two categories is dropped), and the training side
drops every text that is also a test text. A category is kept with at least 30 distinct training and 10 test
questions (a third of the training side as dev leaves some 20 to draw 8 labelled from and some 10 in dev),
except the catch-all "Qatar Living Lounge": its questions are about visas, salaries, beaches, games, the
forum itself, the topics of the other categories, so its label says where a question was posted rather than
what it asks. Questions of the other categories are dropped from both sides.
"""

from __future__ import annotations

import argparse
import html
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import DATA, fail

TRAIN_FILES = ("cqa-qatarliving/semeval2016-task3/SemEval2016-Task3-CQA-QL-train-part1.xml",
               "cqa-qatarliving/semeval2015-task3/CQA-QL-trial.xml",
               "cqa-qatarliving/semeval2015-task3/CQA-QL-devel.xml")
TEST_FILE = "cqa-qatarliving/semeval2015-task3/CQA-QL-test.xml"
MIN_TRAIN, MIN_TEST = 30, 10
CATCH_ALL = "Qatar Living Lounge"


def as_written(text: str) -> str:
    """A subject or body with its HTML entities decoded (the files keep the forum's &#39;, &quot;, &nbsp;) and
    whitespace collapsed to single spaces."""
    return " ".join(html.unescape(text).split())


def from_2016_export(subject: str, body: str) -> tuple[str, str]:
    """SemEval-2016's file writes every comma as ';' (it has none, where 2015's questions have some 50 commas
    to a semicolon) and CSV-quotes some questions: '"' before the subject, '"' after the body, '""' for '"'."""
    if subject.startswith('"') and body.endswith('"'):
        subject, body = subject[1:].replace('""', '"'), body[:-1].replace('""', '"')
    return subject.replace(";", ","), body.replace(";", ",")


def as_2015(subject: str, body: str) -> tuple[str, str]:
    """2015's files need no repair."""
    return subject, body


# question tag -> (category attribute, subject tag, body tag, repair of the file's export): 2016; 2015, its trial
LAYOUTS = {"RelQuestion": [("RELQ_CATEGORY", "RelQSubject", "RelQBody", from_2016_export)],
           "Question": [("QCATEGORY", "QSubject", "QBody", as_2015),
                        ("CATEGORY", "Short_Question", "Full_Question", as_2015)]}


def question_text(subject: str, body: str) -> str:
    """Subject and body joined as the forum shows them (see the module's docstring)."""
    if not body or not subject:
        return subject or body
    return body if body.startswith(subject) else f"{subject} {body}"


def read_questions(path: Path) -> list[tuple[str, str]]:
    """(text, category) of every question of a SemEval 2015 or 2016 Task 3 XML file, in file order."""
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        fail(f"{path}:{error.position[0]}: not well-formed XML ({error})")
    rows = []
    for element in root.iter():
        layout = next((fields for fields in LAYOUTS.get(element.tag, []) if fields[0] in element.attrib), None)
        if layout is None:
            if element.tag in LAYOUTS:
                fail(f"{path}: a <{element.tag}> without a category attribute")
            continue
        category, subject, body, repair = layout
        text = question_text(*repair(as_written(element.findtext(subject) or ""),
                                     as_written(element.findtext(body) or "")))
        if text:
            rows.append((text, element.attrib[category].strip()))
    if not rows:
        fail(f"{path}: no questions with a category (RelQuestion or Question)")
    return rows


def distinct(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One row per text, the first; a text with two categories is dropped."""
    categories: dict[str, set[str]] = {}
    for text, category in rows:
        categories.setdefault(text, set()).add(category)
    return [(text, next(iter(found))) for text, found in categories.items() if len(found) == 1]


def kept_categories(train: list, test: list, min_train: int, min_test: int) -> list[str]:
    """The categories with `min_train` training and `min_test` test rows, the catch-all left out."""
    train_counts, test_counts = Counter(y for _, y in train), Counter(y for _, y in test)
    return sorted(y for y in train_counts
                  if y != CATCH_ALL and train_counts[y] >= min_train and test_counts[y] >= min_test)


def distinct_sides(train_paths: list[Path], test_path: Path) -> tuple[list, list]:
    """Both sides de-duplicated, the test texts out of the training side; every category still there."""
    test = distinct(read_questions(test_path))
    test_texts = {text for text, _ in test}
    train = [row for row in distinct([row for path in train_paths for row in read_questions(path)])
             if row[0] not in test_texts]
    return train, test


def read_qatarliving(train_paths: list[Path], test_path: Path, min_train: int = MIN_TRAIN,
                     min_test: int = MIN_TEST) -> tuple[list, list]:
    """(training rows, test rows) of the set: distinct texts, no test text in training, the kept categories."""
    train, test = distinct_sides(train_paths, test_path)
    kept = set(kept_categories(train, test, min_train, min_test))
    return [row for row in train if row[1] in kept], [row for row in test if row[1] in kept]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    options = parser.parse_args()
    for name in (*TRAIN_FILES, TEST_FILE):
        if not (options.data_dir / name).is_file():
            fail(f"--data-dir {options.data_dir}: no {name}")
    train, test = distinct_sides([options.data_dir / name for name in TRAIN_FILES], options.data_dir / TEST_FILE)
    kept = kept_categories(train, test, MIN_TRAIN, MIN_TEST)
    train_counts, test_counts = Counter(y for _, y in train), Counter(y for _, y in test)
    print(f"{len(train)} distinct training questions (no test text), {len(test)} distinct test questions, "
          f"{len(train_counts | test_counts)} categories; kept: at least {MIN_TRAIN} training and {MIN_TEST} test "
          f"questions, not {CATCH_ALL}")
    for category in sorted(train_counts | test_counts, key=lambda y: (-train_counts[y], -test_counts[y], y)):
        print(f"  {train_counts[category]:4d} {test_counts[category]:4d}  {'kept' if category in kept else '    '}"
              f"  {category}")
    print(f"kept: {sum(train_counts[y] for y in kept)} training and {sum(test_counts[y] for y in kept)} test "
          f"questions of {len(kept)} categories")


if __name__ == "__main__":
    main()
