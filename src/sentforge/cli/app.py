"""The typer application and the options every command shares."""

from __future__ import annotations

import logging
from typing import Annotated, Any, Optional

import typer

from sentforge.support.errors import ConfigError

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Learn, combine and evaluate sentence embeddings.")

DEFAULT_MODEL = "all-MiniLM-L6-v2"
ModelOpt = Annotated[str, typer.Option("--model", "-m", help="Model spec: directory, short name or hub id.")]


def _check_seed(seed: int) -> int:
    from sentforge.support.seed import check_seed

    return check_seed(seed)


def seed_option(help: str = "Random seed.") -> Any:
    """--seed, checked as it is parsed: a bad seed stops the command before anything loads or is written."""
    return Annotated[int, typer.Option(help=help, callback=_check_seed)]


SeedOpt = seed_option()


def _check_device(spec: Optional[str]) -> Optional[str]:
    if spec is not None:
        from sentforge.support.device import parse_device

        parse_device(spec)
    return spec


DeviceOpt = Annotated[Optional[str], typer.Option(help="torch device, e.g. cpu or cuda:0 (default: cpu).",
                                                  callback=_check_device)]
OverwriteOpt = Annotated[bool, typer.Option(help="Replace existing output.")]


def _print_version(value: bool) -> None:
    if value:
        from sentforge import __version__

        typer.echo(f"sentforge {__version__}")
        raise typer.Exit()


@app.callback()
def configure(log_level: Annotated[str, typer.Option(help="Logging level of sentforge's messages.")] = "INFO",
              version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                    help="Print the version and exit.")] = False) -> None:
    level = getattr(logging, log_level.upper(), None)
    if not isinstance(level, int):
        raise ConfigError(f"--log-level: unknown level {log_level!r}; use DEBUG, INFO, WARNING or ERROR")
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s", level=logging.WARNING)
    logging.getLogger("sentforge").setLevel(level)

