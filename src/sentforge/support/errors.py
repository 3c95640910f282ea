"""Errors that sentforge raises on bad input.

Every error carries an actionable message; the CLI prints it on one line and exits with code 2.
"""

from __future__ import annotations

import re

# A message names a setting for both audiences as `name=value (--option)`; the command line shows the option alone.
_PYTHON_AND_OPTION = re.compile(r"\b\w+=\S+ \((--[\w-]+)\)")


class SentforgeError(Exception):
    """Base class of every error that sentforge raises on purpose."""


class InputFileError(SentforgeError):
    """An input file is missing, unreadable or malformed (the message names the file and line)."""


class ModelNotFoundError(SentforgeError):
    """A model spec resolves to nothing loadable."""


class ModelFormatError(SentforgeError):
    """A model directory exists but its contents cannot be read."""


class OutputExistsError(SentforgeError):
    """An output path already holds data and overwriting was not requested."""


class OutputWriteError(SentforgeError):
    """An output could not be written (no permission, a full disk); the message names the path."""


class ConfigError(SentforgeError):
    """An argument or configuration value is invalid."""


class DataNotFoundError(SentforgeError):
    """A task's data files are not in the data directory."""


class TrainingDivergedError(SentforgeError):
    """Training produced a non-finite loss or non-finite weights and was stopped."""


def for_command_line(message: str) -> str:
    """The message as the command line prints it: `pass overwrite=True (--overwrite)` reads `pass --overwrite`."""
    return _PYTHON_AND_OPTION.sub(r"\1", message)
