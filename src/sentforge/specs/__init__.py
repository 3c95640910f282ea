"""Specs of single encoders resolved to the encoder they name: a model directory, `glove:FILE`, a short
name or a hub id, and `build_encoder` (`encoders.py`); encoders that are not torch pipelines, any callable
and USE (`external.py`). `sentforge.load` adds MetaEncoder directories and `bm25` on top."""
