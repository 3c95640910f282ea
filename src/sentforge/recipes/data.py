"""A recipe's training examples, from files or from memory: the one place that decides what `data` is.

`data` is a path (str or Path), a list of paths (Paths, or strings that all name existing files), or the
examples themselves: a list of texts for "sentences", a list of tuples for the pair kinds
(registry.DATA_KINDS), or the shapes sentence-transformers trains on: a `datasets.Dataset`, a list of
dicts, a list of `InputExample`s. Files are read by the readers of sentforge.data; corpus files are
length-filtered and de-duplicated (`SentenceReading`), examples given in memory are taken as they are.

The columns of a Dataset or of dicts get their roles as in sentence-transformers: a `label` or `score`
column is the label, the other columns are texts, by position (anchor/sentence1, positive/sentence2, then
a hard negative) unless every one of them names its role (sentence1, sentence2, anchor, positive,
negative). An InputExample's texts are taken by position and its `label` is the label column. The rows
then go through the file readers' rules (data/pairs.py), so the same rows give the same examples: a 0/1
`label` keeps the pairs labelled 1, with the pairs labelled 0 as their hard negatives; a `score` to a
positive-pair method is refused. `columns` renames a
file's (or a Dataset's) columns to roles first: {"anchor": "sentence1", "positive": "sentence2"}.
Class-labelled texts ("classes") keep their column names, `text` (or `sentence`) and `label`, and follow
data/classes.py; their tuples are (text, label). MarginMSE's rows ("margin triples") follow
data/margin_triples.py; their tuples are (query, positive, negative, margin).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.data.classes import classes_from_rows, read_classes
from sentforge.data.margin_triples import FIELDS as MARGIN_FIELDS
from sentforge.data.margin_triples import column_roles, margin_triples_from_rows, read_margin_triples
from sentforge.data.pairs import Row, pairs_from_rows, read_pairs, renamed
from sentforge.support.errors import ConfigError, InputFileError

ROLES = ("sentence1", "sentence2", "negative", "score", "label", "text")
# sentence-transformers takes a row's label from a column of either name; every other column is a text.
LABEL_COLUMNS = ("label", "score")
# Text columns whose names say their role (sentence-transformers' names included).
NAMED_TEXT_COLUMNS = {"sentence1": "sentence1", "sentence2": "sentence2", "anchor": "sentence1",
                      "positive": "sentence2", "negative": "negative"}
POSITIONAL_TEXT_ROLES = ("sentence1", "sentence2", "negative")
SENTENCE_ROLE = "text"


@dataclass(frozen=True)
class ArgumentNames:
    """How errors name the caller's arguments: `sentforge.train`'s keywords, or a command's options."""

    data: str = "data"
    columns: str = "columns"


PYTHON_ARGUMENTS = ArgumentNames()


@dataclass(frozen=True)
class SentenceReading:
    """How corpus files become sentences: the JSONL field, paragraph splitting, the length filter."""

    field: str | None = None
    split: bool = True
    min_words: int = 3
    max_words: int = 128


def data_paths(data: Any) -> list[Path]:
    """The files `data` names ([] for examples given in memory). A list of strings that are all paths of
    existing files or folders is a list of paths; a list that mixes such paths with texts is refused, so
    that a path is never trained on as a text."""
    if isinstance(data, (str, os.PathLike)):
        return [Path(data)]
    if not isinstance(data, Sequence) or not data:
        return []
    if all(isinstance(item, os.PathLike) for item in data):
        return [Path(item) for item in data]
    if all(isinstance(item, str) for item in data):
        existing = [item for item in data if _names_file(item)]
        if len(existing) == len(data):
            return [Path(item) for item in data]
        if existing:
            raise ConfigError(f"data: {existing[0]!r} (item {data.index(existing[0])}) is the path of an existing "
                              f"file, but {len(data) - len(existing)} other item(s) are not; give a list of paths "
                              "(pathlib.Path) or a list of texts")
        missing = next((item for item in data if _looks_like_a_file_name(item)), None)
        if missing is not None:
            raise ConfigError(f"data: {missing!r} (item {data.index(missing)}) looks like a file name, but no such "
                              f"file exists (from {Path.cwd()}); give the path of an existing file, or texts")
    return []


DATA_SUFFIXES = (".txt", ".jsonl", ".json", ".tsv", ".csv", ".gz", ".zip", ".xml", ".toks")


def _looks_like_a_file_name(text: str) -> bool:
    """A string with no space that ends like a data file (`corpus.txt`, `data/pairs.tsv`): never a sentence."""
    return not any(c.isspace() for c in text) and text.lower().endswith(DATA_SUFFIXES)


def _names_file(text: str) -> bool:
    """Whether a string is the path of an existing file or folder (a long text with newlines never is)."""
    if "\n" in text or len(text) > 4096:
        return False
    try:
        return Path(text).exists()
    except OSError:  # a name too long for the file system
        return False


def parse_columns(text: str, argument: str) -> dict[str, str]:
    """`question=sentence1,answer=sentence2` as {"question": "sentence1", "answer": "sentence2"}."""
    columns: dict[str, str] = {}
    for item in text.split(","):
        name, equals, role = (part.strip() for part in item.partition("="))
        if not (equals and name and role):
            raise ConfigError(f"{argument}: {item.strip()!r} is not COLUMN=ROLE; "
                              "e.g. anchor=sentence1,positive=sentence2")
        if name in columns:
            raise ConfigError(f"{argument}: column {name!r} is given twice")
        columns[name] = role
    return checked_columns(columns, argument)


def checked_columns(columns: Any, argument: str) -> dict[str, str]:
    """A column -> role mapping whose roles are ROLES, each at most once ({} for None)."""
    if columns is None:
        return {}
    if not isinstance(columns, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in columns.items()):
        raise ConfigError(f"{argument}: give a mapping of column names to roles, e.g. {{'anchor': 'sentence1'}}")
    for role in columns.values():
        if role not in ROLES:
            raise ConfigError(f"{argument}: {role!r} is not a role; the roles are {', '.join(ROLES)}")
        if list(columns.values()).count(role) > 1:
            raise ConfigError(f"{argument}: two columns are mapped to {role!r}")
    return dict(columns)


def read_examples(kind: str, data: Any, reading: SentenceReading | None = None,
                  columns: Mapping[str, str] | None = None, arguments: ArgumentNames = PYTHON_ARGUMENTS) -> list:
    """The examples of `data` for a recipe whose data is `kind`; `columns` maps column names to ROLES."""
    columns = checked_columns(columns, arguments.columns)
    if columns and kind == "sentences":
        raise ConfigError(f"{arguments.columns}: sentences have no column roles (a JSONL corpus names its text "
                          "field in SentenceReading(field=...))")
    rows = _memory_rows(kind, data, columns, arguments)
    if rows is not None:
        return _examples_from_rows(kind, rows, arguments)
    paths = data_paths(data)
    if not paths:
        if not isinstance(data, Sequence) or isinstance(data, (str, bytes)) or not data:
            raise ConfigError(f"no training data: give {arguments.data} as a path, a list of paths, a Dataset or a "
                              f"non-empty list of {kind}")
        if columns:
            raise ConfigError(f"{arguments.columns}: tuples have no column names; column roles are for files, "
                              "Datasets and dicts")
        examples = _checked(kind, list(data))
        if kind == "classes":
            return classes_from_rows([(f"{arguments.data}[{i}]", {"text": text, "label": label})
                                      for i, (text, label) in enumerate(examples)], arguments.data, ConfigError)
        if kind == "margin triples":
            return margin_triples_from_rows([(f"{arguments.data}[{i}]", dict(zip(MARGIN_FIELDS, example)))
                                             for i, example in enumerate(examples)], arguments.data, ConfigError)
        return examples
    for path in paths:
        if not path.exists():
            raise InputFileError(f"{'corpus' if kind == 'sentences' else 'data'} not found: {path}")
    if kind == "sentences":
        return _sentences(paths, reading or SentenceReading())
    if kind == "labelled pairs":
        from sentforge.data.nli import read_nli_pairs

        return [pair for path in paths for pair in read_nli_pairs(path, columns)]
    if len(paths) != 1:
        raise ConfigError(f"{arguments.data}: {kind} are read from one file; got {len(paths)} paths")
    if kind == "classes":
        return read_classes(paths[0], columns, arguments.columns)
    if kind == "margin triples":
        return read_margin_triples(paths[0], columns, arguments.columns)
    return read_pairs(paths[0], with_scores=kind == "scored pairs", columns=columns,
                      columns_argument=arguments.columns)


def _from_package(value: Any, package: str) -> bool:
    """Whether `value` is an object of `package`, told without importing it."""
    return type(value).__module__.split(".")[0] == package


def _memory_rows(kind: str, data: Any, columns: Mapping[str, str],
                 arguments: ArgumentNames) -> list[Row] | None:
    """The rows of a datasets.Dataset, a list of dicts or a list of InputExamples, their columns named by
    role; None when `data` is none of these."""
    if _from_package(data, "datasets"):
        if isinstance(data, Mapping):
            raise ConfigError(f"{arguments.data}: a DatasetDict (splits {', '.join(map(str, data))}); give one "
                              "split, e.g. dataset['train']")
        records = [dict(record) for record in data]
    elif not isinstance(data, Sequence) or isinstance(data, (str, bytes)) or not data:
        return None
    elif all(isinstance(item, Mapping) for item in data):
        records = [dict(item) for item in data]
    elif all(_from_package(item, "sentence_transformers") and hasattr(item, "texts") for item in data):
        records = _input_example_records(kind, data)
    else:
        return None
    rows = []
    for i, record in enumerate(records):
        where = f"{arguments.data}[{i}]"
        record = renamed(record, columns, where, ConfigError)
        roles = _roles(kind, list(record), where)
        rows.append((where, {roles[name]: value for name, value in record.items()}))
    return rows


def _input_example_records(kind: str, examples: Sequence[Any]) -> list[dict[str, Any]]:
    """InputExamples as records: texts by position, then the label (for positive pairs only when some label
    is not 0, InputExample's default: sentence-transformers' MultipleNegativesRankingLoss ignores it)."""
    keep_label = kind in ("scored pairs", "labelled pairs", "margin triples") or (
        kind == "pairs" and any(example.label != 0 for example in examples))
    return [{**{f"texts[{i}]": text for i, text in enumerate(example.texts or [])},
             **({"label": example.label} if keep_label else {})} for example in examples]


def _roles(kind: str, names: list[str], where: str) -> dict[str, str]:
    """Column name -> role, by the rules of the module doc."""
    labels = [name for name in names if name in LABEL_COLUMNS]
    texts = [name for name in names if name not in LABEL_COLUMNS]
    if kind == "classes":
        return {name: name for name in names}  # data/classes.py finds the text and label columns
    if kind == "margin triples":
        return column_roles(names, where, ConfigError)
    if len(labels) > 1:
        raise ConfigError(f"{where}: both a 'label' and a 'score' column; keep the one that holds the label")
    if kind == "sentences":
        if len(texts) != 1 or labels:
            raise ConfigError(f"{where}: sentences come from one text column, found {', '.join(names) or 'none'}")
        return {texts[0]: SENTENCE_ROLE}
    if all(name in NAMED_TEXT_COLUMNS for name in texts):
        roles = {name: NAMED_TEXT_COLUMNS[name] for name in texts}
    else:
        most = 3 if kind == "pairs" else 2
        if not 2 <= len(texts) <= most:
            raise ConfigError(f"{where}: {kind} take {'2 or 3' if most == 3 else 2} text columns (by position: "
                              f"{', '.join(POSITIONAL_TEXT_ROLES[:most])}), found {len(texts)}: {', '.join(texts)}")
        roles = dict(zip(texts, POSITIONAL_TEXT_ROLES))
    if len(set(roles.values())) < len(roles):
        given = ", ".join(f"{n} -> {r}" for n, r in roles.items())
        raise ConfigError(f"{where}: two columns give the same role ({given})")
    label_role = {"scored pairs": "score", "labelled pairs": "label"}.get(kind)
    return {**roles, **{name: label_role or name for name in labels}}


def _examples_from_rows(kind: str, rows: list[Row], arguments: ArgumentNames) -> list:
    if not rows:
        raise ConfigError(f"no training data: {arguments.data} has no rows")
    if kind == "sentences":
        return _checked(kind, [record[SENTENCE_ROLE] for _, record in rows])
    if kind == "classes":
        return classes_from_rows(rows, arguments.data, ConfigError)
    if kind == "margin triples":
        return margin_triples_from_rows(rows, arguments.data, ConfigError)
    if kind == "labelled pairs":
        from sentforge.data.nli import nli_pairs_from_rows

        return nli_pairs_from_rows(rows, ConfigError)
    return pairs_from_rows(rows, arguments.data, kind == "scored pairs", ConfigError, arguments.columns)


def _sentences(paths: list[Path], reading: SentenceReading) -> list[str]:
    from sentforge.data.corpora import SentenceFilter, load_sentences

    sentences = load_sentences(paths, SentenceFilter(min_words=reading.min_words, max_words=reading.max_words),
                               field=reading.field, split=reading.split)
    if not sentences:
        raise InputFileError(f"no sentences of {reading.min_words}-{reading.max_words} words in "
                             f"{', '.join(map(str, paths))}")
    return sentences


def _checked(kind: str, examples: list) -> list:
    arity = {"pairs": (2, 3), "scored pairs": (3,), "labelled pairs": (3,), "classes": (2,),
             "margin triples": (4,)}.get(kind)
    for i, example in enumerate(examples):
        good = isinstance(example, str) if arity is None else (
            isinstance(example, (tuple, list)) and len(example) in arity)
        if not good:
            raise ConfigError(f"training example {i} is {example!r}; {kind} are expected")
    return [example if isinstance(example, str) else tuple(example) for example in examples]
