"""Imports every task module so that their tasks register; `registered_tasks()` imports this module."""

from sentforge.evaluation import sts, geometry  # noqa: F401
from sentforge.evaluation import pair_classification, reranking, retrieval  # noqa: F401
from sentforge.evaluation import transfer  # noqa: F401
from sentforge.evaluation import sentglue  # noqa: F401
