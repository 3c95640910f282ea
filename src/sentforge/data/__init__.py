"""Readers for text files, corpora, pairs and benchmark formats."""
