"""Class-labelled texts as the labels of a learning curve: a size is k, the examples drawn of each class.

The draws are nested per class: in repeat r each class's texts are put in one seeded order
(data.classes.per_class_draw with seed + r) and size k takes the first k of each, so a smaller draw lies inside
every larger one of the same repeat, class by class. A class with fewer texts than k gives all it has, and the
report names such classes. Each draw trains the setfit recipe (its defaults) and the run's classifier, its head
fitted on the draw, is scored on a class-labelled dev file (evaluation/own/classes.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sentforge.data.classes import per_class_draw, read_classes, sorted_classes
from sentforge.learning_curve.data import LabelData, dev_kind
from sentforge.support.errors import ConfigError

DEFAULT_SHOTS = (2, 4, 8, 16)
MIN_SHOTS = 2  # the setfit recipe pairs two texts of a class
NAMED = 8  # the small classes a note names


def read_class_data(path: Path) -> ClassLabelData:
    rows = read_classes(path, min_per_class=MIN_SHOTS)
    return ClassLabelData(path, "classes", rows, list(range(len(rows))))


class ClassLabelData(LabelData):
    """The (text, label) rows of a class-labelled file; every unit is a text."""

    unit = "examples per class"

    @property
    def counts(self) -> Counter:
        """Texts per class."""
        return Counter(label for _, label in self.rows)

    def sizes(self, fractions: Sequence[float] | None, shots: Sequence[int] | None) -> list[int]:
        """`shots` (default DEFAULT_SHOTS up to the largest class), each at least MIN_SHOTS and none above the
        largest class, whose draw would repeat the one at its size."""
        if fractions is not None:
            raise ConfigError(f"--fractions: {self.path} holds class-labelled texts, drawn per class: give --shots, "
                              "the examples per class of each size (e.g. 2,4,8,16)")
        largest = max(self.counts.values())
        if shots is None:
            return [k for k in DEFAULT_SHOTS if k <= largest]
        if not shots:
            raise ConfigError("--shots: give at least one number of examples per class")
        bad = [k for k in shots if isinstance(k, bool) or not isinstance(k, int) or k < MIN_SHOTS]
        if bad:
            raise ConfigError(f"--shots: examples per class are whole numbers of at least {MIN_SHOTS} (the setfit "
                              f"recipe pairs two texts of a class), got {', '.join(map(str, bad))}")
        over = sorted(k for k in shots if k > largest)
        if over:
            raise ConfigError(f"--shots {over[0]}: no class of {self.path} has more than {largest} examples, so a "
                              f"draw of {over[0]} per class is the draw of {largest}; give sizes up to {largest}")
        return sorted(set(shots))

    def notes(self, sizes: Sequence[int]) -> list[str]:
        """A note naming the classes with fewer texts than the largest size."""
        most = max(sizes)
        small = {label: n for label, n in self.counts.items() if n < most}
        if not small:
            return []
        named = ", ".join(f"{label!r} ({small[label]})" for label in sorted_classes(list(small))[:NAMED])
        return [f"{len(small)} of {len(self.counts)} classes have fewer than {most} examples: {named}"
                f"{', ...' if len(small) > NAMED else ''}; a draw of k per class takes all the texts of a smaller "
                "class, so the sizes above its count add none of it"]

    def dev_task(self, dev: str | Path, sizes: Sequence[int], seed: int) -> Any:
        """Class-labelled dev texts: a run's classifier is scored by its own head; the start model by a head fitted
        on the draw of the largest size in repeat 0 (the most labels any run has), its reference."""
        from sentforge.evaluation.own.classes import ClassesTask

        kind = dev_kind(dev)
        if kind != "classes":
            raise ConfigError(f"--dev {dev}: runs trained on class-labelled --labelled data are scored by accuracy on "
                              f"class-labelled dev texts (text, label); {dev} holds "
                              f"{'other' if kind is None else kind} data")
        return ClassesTask(dev, f"dev:{Path(dev).name}", train=self.path, shots=max(sizes), seed=seed)

    def draw(self, size: int, seed: int, repeat: int) -> list[Any]:
        return per_class_draw(self.rows, size, seed + repeat)

    def training_rows(self, size: int) -> int:
        """The setfit recipe's pairs for a draw of `size` per class."""
        from sentforge.recipes.setfit import training_rows

        return training_rows(sum(min(size, n) for n in self.counts.values()))
