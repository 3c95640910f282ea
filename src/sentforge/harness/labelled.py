"""The labelled pairs that `adapt` (--labelled) and `labels` read: positive pairs, 0/1-labelled pairs
(label-0 pairs become hard negatives) or partially labelled pairs, checked before any model loads."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from sentforge.support.errors import ConfigError, InputFileError


@dataclass(frozen=True)
class Labelled:
    """The labelled pairs and what they allow.

    pairs: the positive pairs (sentence1, sentence2[, hard negative]); negatives: the (sentence1, sentence2)
    pairs labelled 0 of a file with 0/1 labels, which give the positives their hard negatives (`positives`);
    partial: (sentence1, sentence2, label or None) tuples when some rows have no label (PAUSE), else None;
    positives_file: the file that `sentforge train mnrl` reads `positives` from (the labelled file itself,
    or the pairs kept by dev hygiene; None when there are no positives).
    """

    path: Path
    pairs: list[tuple]
    partial: list[tuple] | None
    positives_file: Path | None
    negatives: list[tuple[str, str]] = field(default_factory=list)

    @cached_property
    def positives(self) -> list[tuple]:
        """The MNRL examples: (sentence1, sentence2[, hard negative]) tuples (empty when none)."""
        from sentforge.data.pairs import with_hard_negatives

        return with_hard_negatives(self.pairs, self.negatives, str(self.path)) if self.pairs else []


def read_labelled(path: Path, command: str = "adapt") -> Labelled:
    """Positive pairs (with an optional `negative` column), or pairs with a `label` column that may be
    empty on some rows (then PAUSE trains on them); 0/1 labels also give MNRL their label-1 pairs as
    positives and their label-0 pairs as hard negatives. `command` names the command that reads them in
    the error for a file with nothing to train on."""
    from sentforge.data.nli import read_nli_table
    from sentforge.data.pairs import NEGATIVE_LABELS, POSITIVE_LABELS, read_pairs, read_positives_and_negatives

    if not path.is_file():
        raise InputFileError(f"--labelled {path}: file not found")
    rows = read_nli_table(path)
    labels = {label for _, _, label in rows if label is not None}
    if not labels:
        return Labelled(path, read_pairs(path), None, path)
    partial = rows if any(label is None for _, _, label in rows) else None
    pairs, negatives = [], []
    if {label.lower() for label in labels} <= POSITIVE_LABELS | NEGATIVE_LABELS:
        pairs, negatives = read_positives_and_negatives(path)
    if partial is None and not pairs:
        raise ConfigError(f"--labelled {path}: every row has a class label ({', '.join(sorted(labels))}); "
                          f"{command} trains on positive pairs (no label column, or 0/1 labels) or on partially "
                          "labelled pairs (some labels empty)")
    # `sentforge train mnrl` reads the same examples from the file itself (data/pairs.py's one rule).
    return Labelled(path, pairs, partial, path if pairs else None, negatives)
