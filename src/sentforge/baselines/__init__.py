"""Non-neural baselines that tasks accept beside encoders."""

from sentforge.baselines.bm25 import BM25Scorer, load_bm25

__all__ = ["BM25Scorer", "load_bm25"]
