"""`sentforge.labels`: a learning curve over nested subsets of the labelled pairs, a saturating fit,
and what more labels would buy (docs/labels.md)."""

from sentforge.learning_curve.run import labels

__all__ = ["labels"]
