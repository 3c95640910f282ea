"""The `sentforge` command line: a thin layer over the library, one module per command group."""

from __future__ import annotations

import sys

import typer
from typer.exceptions import TyperException

from sentforge.cli.app import app
from sentforge.support.errors import SentforgeError, for_command_line

# Importing a command module registers its commands on `app`.
from sentforge.cli import encode  # noqa: F401
from sentforge.cli import eval  # noqa: F401
from sentforge.cli import pretrain  # noqa: F401
from sentforge.cli import train  # noqa: F401
from sentforge.cli import cross_encoder  # noqa: F401
from sentforge.cli import meta  # noqa: F401
from sentforge.cli import st5  # noqa: F401
from sentforge.cli import export  # noqa: F401
from sentforge.cli import index  # noqa: F401
from sentforge.cli import adapt  # noqa: F401
from sentforge.cli import labels  # noqa: F401
from sentforge.cli import explain  # noqa: F401
from sentforge.cli import predict  # noqa: F401
from sentforge.cli import distil  # noqa: F401


def describe_os_error(err: OSError) -> str:
    """One line naming the path(s) and the reason."""
    paths = " -> ".join(str(p) for p in (err.filename, err.filename2) if p is not None)
    reason = err.strerror or str(err)
    return f"{paths}: {reason}" if paths else reason


def main() -> None:
    try:
        # standalone_mode=False: usage errors come here as exceptions, to be printed as one line too.
        code = app(standalone_mode=False)
    except typer.Abort:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except TyperException as err:  # click's usage errors: bad option values, unknown commands, ...
        ctx, message = getattr(err, "ctx", None), err.format_message()
        if message:  # empty when the help was printed instead (no arguments)
            hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
            typer.echo(f"error: {message}{hint}", err=True)
        sys.exit(getattr(err, "exit_code", 2))
    except SentforgeError as err:
        typer.echo(f"error: {for_command_line(str(err))}", err=True)
        sys.exit(2)
    except OSError as err:  # the file system said no: a directory for a file, no permission, a full disk
        typer.echo(f"error: {describe_os_error(err)}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


__all__ = ["app", "main"]
