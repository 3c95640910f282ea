"""The rules every writing command follows before it does any work, so that nothing a user owns is lost.

- An output never is, contains or lies inside one of the command's inputs (text and data files, dev and
  test files, model directories, meta-embedding members, data folders), paths compared after resolving
  symlinks and relative parts.
- `--overwrite` replaces only an output of the same kind: a directory that this command family wrote
  (its `.sentforge-output.json` marker names the family and the entries it wrote; an entry it does not
  list is someone else's, and the whole directory is refused), or a file that the same command family
  wrote: a JSON object, Markdown or HTML page signed by it (`signed_json`, `signed_markdown`,
  `html_signature`), or a .npy array or PNG image, which cannot carry a signature and are recognised by
  their format alone.
- The rule covers every file a command writes, not only the one the user named: a report's Markdown
  beside its JSON is guarded as its own output, and the working files of a resumable run (`.NAME.partial`
  and the like) are replaced only when they hold that run's own state.
- One run per output: a run holds `.NAME.lock` beside its output (never inside: the output may be
  replaced as a whole) with its process id in it; a second run on the same output stops at once. A lock
  left by a run that was killed is taken over (the kernel releases the lock with its process).
- An output that cannot be written is reported under the path the user gave, before any work.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import os
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from sentforge.support.errors import ConfigError, OutputExistsError, OutputWriteError

logger = logging.getLogger(__name__)

MARKER = ".sentforge-output.json"
FILE_FORMATS = ("npy", "json", "html", "png", "markdown")
SIGNATURE_KEY = "written_by"

Inputs = Iterable[tuple[str, "str | os.PathLike | None"]]
F = TypeVar("F", bound=Callable[..., Any])


def guard_output(output: str | os.PathLike, inputs: Inputs, kind: str, overwrite: bool, *,
                 option: str = "--output", file_format: str | None = None, may_be_output: Collection[str] = (),
                 check_existing: bool = True, state_file: str | None = None) -> Path:
    """Refuse (ConfigError, OutputExistsError, OutputWriteError) an output that would harm an input or
    something this command did not write. `inputs` are (option name, path or model spec) pairs; a spec that
    is no path on disk is skipped. `kind` is the command family (`encode`, `train`, ...); `file_format` is
    one of FILE_FORMATS for a file output, None for a directory. `may_be_output` names inputs that may be
    the output itself (read whole before the output is replaced, e.g. the start model of a training run).
    `check_existing=False` leaves what is already at the output to the caller (runs that resume);
    `state_file`: the command resumes the run whose state that file in the output holds, so a non-empty
    directory without it is refused."""
    output = Path(output)
    refuse_inputs_around(output, inputs, option, may_be_output)
    check_writable(output, option)
    if state_file is not None:
        check_resumable_dir(output, kind, state_file, option)
    elif check_existing:
        if file_format is None:
            check_existing_dir(output, kind, overwrite, option)
        else:
            check_existing_file(output, file_format, overwrite, option, kind)
    return output


def refuse_inputs_around(output: Path, inputs: Inputs, option: str = "--output",
                         may_be_output: Collection[str] = ()) -> None:
    """Refuse an output that is, contains or lies inside an input."""
    target = output.resolve()
    for name, path in inputs:
        if path is None or not Path(path).exists():
            continue
        source = Path(path).resolve()
        if source == target:
            if name in may_be_output:
                continue
            raise ConfigError(f"{option} {output} is also the {name} {path}; write the output to another path")
        if target in source.parents:
            raise ConfigError(f"{name} {path} lies inside {option} {output}, which this run replaces; move it out "
                              "of the output directory first")
        if source in target.parents:
            raise ConfigError(f"{option} {output} lies inside the {name} {path}; write the output outside it")


def check_writable(output: Path, option: str = "--output") -> None:
    """Fail now, naming `output`, when its folder cannot take new files (no permission, read-only, not a folder)."""
    folder = output.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise OutputWriteError(f"cannot write {option} {output}: {err.strerror or err} ({folder})") from None


def check_existing_dir(output: Path, kind: str, overwrite: bool, option: str = "--output") -> None:
    """An existing directory is replaced only with `overwrite`, and only when `kind` wrote all of it."""
    if output.exists() and not output.is_dir():
        raise OutputExistsError(f"{option} {output} exists and is not a directory")
    if not output.is_dir() or not any(entry.name != MARKER for entry in output.iterdir()):
        return  # a run that stopped before writing anything leaves only its marker
    if not overwrite:
        raise OutputExistsError(f"output directory {output} is not empty; pass overwrite=True (--overwrite) to "
                                "replace it")
    marker = read_marker(output) or {}
    ours = marker.get("command") == kind
    written = set(marker["entries"]) if ours else set()
    foreign = sorted(entry.name for entry in output.iterdir() if entry.name != MARKER and entry.name not in written)
    rule = f"--overwrite replaces only an earlier sentforge {kind} output: choose another path"
    if foreign:
        raise OutputExistsError(f"{option} {output} holds {foreign[0]}, which sentforge {kind} did not write; "
                                f"{rule}, or move what you keep out of it")
    if not ours:
        raise OutputExistsError(f"{option} {output} was written by sentforge {marker.get('command')}; {rule}")


def check_resumable_dir(output: Path, kind: str, state_file: str, option: str = "--output") -> None:
    """An existing directory is written into only when it is empty or holds a `kind` run (its `state_file`)."""
    if output.exists() and not output.is_dir():
        raise OutputExistsError(f"{option} {output} exists and is not a directory")
    entries = sorted(entry.name for entry in output.iterdir()) if output.is_dir() else []
    if entries and state_file not in entries:
        raise OutputExistsError(f"{option} {output} is not empty and holds no {kind} run ({state_file}) but "
                                f"{entries[0]}; choose a new directory")


def check_existing_file(output: Path, file_format: str, overwrite: bool, option: str = "--output",
                        kind: str | None = None) -> None:
    """An existing file is replaced only with `overwrite`, and only when `kind` wrote it (a JSON, Markdown or
    HTML file carries its signature) or, for the formats that carry none (.npy, PNG), it is in that format."""
    if file_format not in FILE_FORMATS:
        raise ValueError(f"file_format {file_format!r}: one of {FILE_FORMATS}")
    if output.is_dir():
        raise OutputExistsError(f"output path {output} is a directory, expected a file")
    if not output.exists():
        return
    if not overwrite:
        raise OutputExistsError(f"output file {output} already exists; pass overwrite=True (--overwrite) to replace it")
    if not _has_format(output, file_format, kind):
        what = (f"a {file_format} file written by sentforge {kind}" if file_format in ("json", "markdown", "html")
                else f"a {file_format} file such as this command writes")
        raise OutputExistsError(f"{option} {output} is not {what}; --overwrite replaces only those: choose another "
                                "path, or move the file")


def signature(kind: str) -> str:
    return f"sentforge {kind}"


def signed_json(payload: dict[str, Any], kind: str) -> dict[str, Any]:
    """`payload` with the signature that lets `kind --overwrite` recognise the file as its own."""
    return {SIGNATURE_KEY: signature(kind), **payload}


def signed_markdown(text: str, kind: str) -> str:
    """`text` under a first line that renders as nothing and lets `kind --overwrite` recognise the file."""
    return f"<!-- written by {signature(kind)} -->\n{text}"


def html_signature(kind: str) -> str:
    """The <head> element that lets `kind --overwrite` recognise an HTML page as its own."""
    return f'<meta name="generator" content="{signature(kind)}">'


def _has_format(path: Path, file_format: str, kind: str | None = None) -> bool:
    try:
        data = path.read_bytes()
        if file_format == "npy":
            return data.startswith(b"\x93NUMPY")
        if file_format == "png":
            return data.startswith(b"\x89PNG")
        text = data.decode("utf-8")
        if file_format == "html":
            return text.lstrip()[:15].lower() == "<!doctype html>" and html_signature(kind or "") in text
        if file_format == "markdown":
            return text.split("\n", 1)[0] == signed_markdown("", kind or "").rstrip("\n")
        payload = json.loads(text)
        return isinstance(payload, dict) and payload.get(SIGNATURE_KEY) == signature(kind or "")
    except (OSError, ValueError):  # unreadable, not UTF-8, not JSON
        return False


def read_marker(directory: Path) -> dict[str, Any] | None:
    try:
        marker = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) and isinstance(marker.get("entries"), list) else None


def write_marker(directory: Path, kind: str, extra: Iterable[str] = ()) -> None:
    """Record that `kind` wrote `directory`: its present entries and `extra` ones still to come."""
    entries = sorted({entry.name for entry in directory.iterdir() if entry.name != MARKER} | set(extra))
    (directory / MARKER).write_text(json.dumps({"command": kind, "entries": entries}, indent=2) + "\n",
                                    encoding="utf-8")


# ------------------------------------------------------------------------------------------------ lock
_held: dict[str, list[Any]] = {}  # lock path -> [open file, depth]: a process may re-enter its own lock


def lock_path(output: str | os.PathLike) -> Path:
    """`.NAME.lock` beside the output, its path written out first (an output such as `dir/sub/..` is `dir`)."""
    output = Path(os.path.abspath(output))
    return output.parent / f".{output.name}.lock"


@contextlib.contextmanager
def output_lock(output: str | os.PathLike, command: str, option: str = "--output") -> Iterator[None]:
    """Hold the lock of `output` while this run writes it; OutputExistsError at once when another run does.
    Only the first process of a distributed run (RANK 0) takes it: the others write nothing."""
    output = Path(output)
    if os.environ.get("RANK", "0") != "0":
        yield
        return
    lock = lock_path(output)
    key = str(lock.parent.resolve() / lock.name)
    if key in _held:
        _held[key][1] += 1
        try:
            yield
        finally:
            _held[key][1] -= 1
        return
    missing = [folder for folder in lock.parents if not folder.exists()]
    handle = _acquire(lock, output, command, option)
    _held[key] = [handle, 1]
    try:
        yield
    finally:
        del _held[key]
        lock.unlink(missing_ok=True)  # while still held: a run that opens it now sees another file
        handle.close()
        for folder in missing:  # the folders made for the lock go again when the run wrote nothing into them
            with contextlib.suppress(OSError):
                folder.rmdir()


def _acquire(lock: Path, output: Path, command: str, option: str) -> Any:
    import fcntl

    while True:
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            handle = open(lock, "a+", encoding="utf-8")
        except OSError as err:
            raise OutputWriteError(f"cannot write {option} {output}: {err.strerror or err}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(handle)
            handle.close()
            pid = f" (process {holder['pid']})" if holder.get("pid") else ""
            raise OutputExistsError(f"another sentforge {holder.get('command', command)}{pid} is writing {output}; "
                                    f"wait for it to finish or choose another {option}") from None
        try:
            same = os.fstat(handle.fileno()).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:  # the holder finished and removed it between our open and flock
            same = False
        if same:
            break
        handle.close()
    stale = _holder(handle)
    if stale.get("pid") and stale["pid"] != os.getpid():
        # The kernel released the lock, so no run holds it; a live process of that number (a reused number, or
        # a program that wrote the file without locking it) is named as such, not as a run that ended.
        state = "holds no lock on it" if pid_alive(stale["pid"]) else "no longer runs"
        logger.warning("%s: the lock names process %s, which %s; taking the lock over", output, stale["pid"], state)
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"pid": os.getpid(), "command": command}) + "\n")
    handle.flush()
    return handle


def pid_alive(pid: int) -> bool:
    """Whether a process of that number runs now (any user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _holder(handle: Any) -> dict[str, Any]:
    handle.seek(0)
    try:
        holder = json.loads(handle.read() or "{}")
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def locked_output(command: str, argument: str = "output") -> Callable[[F], F]:
    """Run the decorated function holding the lock of its `argument` (skipped when that is None)."""
    def decorate(function: F) -> F:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            output = signature.bind(*args, **kwargs).arguments.get(argument)
            if output is None:
                return function(*args, **kwargs)
            with output_lock(output, command):
                return function(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
