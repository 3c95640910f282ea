"""The `sentforge` command line: a thin layer over the library, one module per command group."""

from __future__ import annotations

import sys

import typer

from sentforge.cli.app import app
from sentforge.errors import SentforgeError

# Importing a command module registers its commands on `app`.
from sentforge.cli import encode  # noqa: E402,F401
from sentforge.cli import eval  # noqa: E402,F401
from sentforge.cli import pretrain  # noqa: E402,F401
from sentforge.cli import train  # noqa: E402,F401
from sentforge.cli import meta  # noqa: E402,F401
from sentforge.cli import st5  # noqa: E402,F401
from sentforge.cli import adapt  # noqa: E402,F401


def main() -> None:
    try:
        app()
    except SentforgeError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


__all__ = ["app", "main"]
