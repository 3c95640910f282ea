"""Read MarginMSE's training rows, (query, positive, negative, margin), from .jsonl, .tsv or .csv files or from
rows in memory (recipes/data.py): the margin is a teacher's score of (query, positive) minus its score of
(query, negative) (recipes/margins.py writes such rows).

The fields are `query`, `positive`, `negative` and `margin`; the names of the pair files stand for them too
(`sentence1` or `anchor` for the query, `sentence2` for the positive), and so do sentence-transformers'
label columns (`label` or `score` for the margin), so that a Dataset made for its `MarginMSELoss` reads as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sentforge.data.pairs import Row, file_rows, finite_number
from sentforge.support.errors import InputFileError

FIELDS = ("query", "positive", "negative", "margin")
# Other names of each field: the pair files' and sentence-transformers' columns.
ALIASES = {"query": "query", "anchor": "query", "sentence1": "query", "positive": "positive",
           "sentence2": "positive", "negative": "negative", "margin": "margin", "label": "margin", "score": "margin"}
MARGIN_COLUMNS = ("margin", "label", "score")
POSITIONAL = FIELDS[:3]


def read_margin_triples(path: str | Path, columns: Mapping[str, str] | None = None,
                        columns_argument: str = "columns") -> list[tuple[str, str, str, float]]:
    """(query, positive, negative, margin) tuples of a file; `columns` renames its columns first."""
    path = Path(path)
    return margin_triples_from_rows(file_rows(path, columns, columns_argument), str(path), InputFileError)


def column_roles(names: list[str], where: str, error: type[Exception]) -> dict[str, str]:
    """Column name -> field of a row from memory: the columns' own names when each is a field or an alias,
    else three text columns by position (query, positive, negative) and one margin column."""
    if all(name in ALIASES for name in names):
        return {name: name for name in names}
    texts = [name for name in names if name not in MARGIN_COLUMNS]
    margins = [name for name in names if name in MARGIN_COLUMNS]
    if len(texts) != 3 or len(margins) != 1:
        raise error(f"{where}: margin examples take 3 text columns (by position: query, positive, negative) and "
                    f"one margin column ({', '.join(MARGIN_COLUMNS)}), found {', '.join(names)}")
    return {**dict(zip(texts, POSITIONAL)), margins[0]: "margin"}


def margin_triples_from_rows(rows: list[Row], source: str,
                             error: type[Exception] = InputFileError) -> list[tuple[str, str, str, float]]:
    """The examples of rows whose fields are FIELDS or their ALIASES: non-empty texts and a finite margin."""
    examples = []
    for where, record in rows:
        unknown = [name for name in record if name not in ALIASES]
        if unknown:
            raise error(f"{where}: column {', '.join(map(repr, unknown))} is none of query, positive, negative, "
                        "margin (or their other names: anchor, sentence1, sentence2, label, score)")
        fields: dict[str, object] = {}
        for name, value in record.items():
            if ALIASES[name] in fields:
                same = [other for other in record if ALIASES[other] == ALIASES[name]]
                raise error(f"{where}: two columns give the {ALIASES[name]}: {', '.join(same)}")
            fields[ALIASES[name]] = value
        missing = [field for field in FIELDS if field not in fields]
        if missing:
            # the fields by their own names: the reader may have renamed a column (`positive` to sentence2)
            raise error(f"{where}: no field {', '.join(map(repr, missing))} (found: {', '.join(fields)}); margin "
                        "examples need query, positive, negative, margin")
        texts = [fields[field] for field in POSITIONAL]
        if not all(isinstance(text, str) and text.strip() for text in texts):
            raise error(f"{where}: query, positive and negative must be non-empty strings")
        examples.append((*texts, finite_number(where, fields["margin"], error, "margin")))
    if not examples:
        raise error(f"{source} holds no margin examples")
    return examples
