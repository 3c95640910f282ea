"""Readers of the benchmark file formats, one module per distribution family.

Each reader takes paths, returns plain data (pairs, queries, labelled sentences) and raises
InputFileError naming the file and line of anything malformed; none of them encodes or scores.
Task modules (`sentforge.evaluation.tasks`) say which files a task reads and what it measures.
"""
