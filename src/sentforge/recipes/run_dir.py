"""The output directory of a training run, the same for every recipe.

Layout: the trained model at the top (a sentence-transformers or Hugging Face directory), the run
summary (`train.json`), and `training/` (the Trainer's metrics.jsonl and checkpoints; recipes may
keep more entries, e.g. Sentence-T5's per-stage encoders).

Safety rules (sentforge.support.output_guard):
- inputs (the start model, data files) are read before anything is removed, and an output that is,
  holds or lies inside an input is refused (the start model may be the output directory itself: it is
  loaded first and replaced only by the trained one); `overwrite` replaces only an earlier run's
  directory (its output marker lists every entry);
- `overwrite` trains in a sibling staging directory and replaces the old output only once the new
  one is complete: a failed or killed run leaves the old output as it was;
- the final save builds the new directory beside the old one and swaps the two in one rename, so a
  crash at any point leaves the old model or the new one, never a mix of their files.
Only the first process writes; the others wait at the barriers.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sentforge.support.errors import ConfigError, OutputExistsError
from sentforge.support.io import save_json
from sentforge.support.output_guard import MARKER, guard_output, write_marker

logger = logging.getLogger(__name__)

TRAINING_DIR = "training"
SUMMARY_FILE = "train.json"
METRICS_LOG = Path(TRAINING_DIR) / "metrics.jsonl"  # the Trainer's log (training/trainer.py), in `work`
TRAIN = "train"  # the command family named in the output marker and the lock


class RunDirectory:
    """`prepare()` before reading the start model's weights into training, `training()` around the
    training steps, `work` for the Trainer's files, `finish(save_model, summary)` at the end."""

    def __init__(self, output: str | os.PathLike, *, resume: bool = False, overwrite: bool = False,
                 inputs: Iterable[tuple[str, str | os.PathLike]] = (), model: str | os.PathLike | None = None,
                 summary_file: str = SUMMARY_FILE, keep: Sequence[str] = (TRAINING_DIR,),
                 run_name: str = "training run", kind: str = TRAIN) -> None:
        self.output = Path(output)
        self.resume, self.overwrite = resume, overwrite
        self.inputs = [(name, Path(path)) for name, path in inputs]
        self.model = None if model is None else Path(model)
        self.summary_file = summary_file
        self.keep = list(keep)
        self.run_name = run_name
        self.kind = kind
        self._staging: Path | None = None

    @property
    def root(self) -> Path:
        """Where this run writes until `finish`: the output, or its staging directory (overwrite)."""
        return self._staging or self.output

    @property
    def work(self) -> Path:
        return self.root / TRAINING_DIR

    def check(self) -> None:
        """The checks that need no writing (run on every process, before any input is read)."""
        if self.resume and self.overwrite:
            raise ConfigError("resume and overwrite (--resume, --overwrite) exclude each other")
        if self.resume and self.output.exists() and not (self.output / TRAINING_DIR).is_dir():
            raise OutputExistsError(f"--resume: {self.output} holds no {self.run_name} ({TRAINING_DIR}/ is missing)")
        inputs = self.inputs + ([("--model", self.model)] if self.model is not None else [])
        guard_output(self.output, inputs, self.kind, self.overwrite, may_be_output={"--model"},
                     check_existing=not self.resume)

    def prepare(self, device: str | None = None, seed: int | None = None) -> None:
        """Join the process group, set up where the run writes, seed every generator."""
        import torch

        from sentforge.support.seed import set_seed
        from sentforge.support import distributed

        self.check()
        distributed.init_distributed(torch.device(device) if device else None)
        if self.overwrite and self.output.is_dir() and any(self.output.iterdir()):
            self._staging = self.output.parent / f".{self.output.name}.overwrite"
            if distributed.is_main_process():
                shutil.rmtree(self._staging, ignore_errors=True)  # a killed earlier overwrite's
                self._staging.mkdir(parents=True)
        distributed.barrier()
        if seed is not None:
            set_seed(seed)

    @contextlib.contextmanager
    def training(self) -> Iterator[None]:
        """Create the output, marked as this command's (a killed run's directory may be overwritten later),
        for the training block; a block that fails before it wrote anything leaves no output behind."""
        from sentforge.support import distributed

        created = not self.output.exists()
        if self._staging is None and distributed.is_main_process():
            self.output.mkdir(parents=True, exist_ok=True)
            write_marker(self.output, self.kind, [TRAINING_DIR])
        try:
            yield
        except BaseException:
            if created and distributed.is_main_process() and \
                    all(path.is_dir() or path.name == MARKER for path in self.output.rglob("*")):
                shutil.rmtree(self.output, ignore_errors=True)
            raise

    def finish(self, save_model: Callable[[Path], Any], summary: dict[str, Any]) -> None:
        """Write the model (`save_model(directory)`) and the summary, and put them in place with the
        run's kept entries, replacing the output in one step."""
        from sentforge.support import distributed

        if distributed.is_main_process():
            self.output.parent.mkdir(parents=True, exist_ok=True)
            new = self._staging or Path(tempfile.mkdtemp(dir=self.output.parent, prefix=f".{self.output.name}.",
                                                         suffix=".new"))
            try:
                model_dir = new / ".model"
                save_model(model_dir)
                for entry in model_dir.iterdir():  # `new` is invisible until the swap: the order is free
                    entry.replace(new / entry.name)
                model_dir.rmdir()
                save_json(new / self.summary_file, summary)
                if self._staging is None:
                    for name in self.keep:
                        if (self.output / name).exists():
                            (self.output / name).replace(new / name)
                write_marker(new, self.kind)
            except BaseException:
                if self._staging is None:
                    _restore(new, self.output, self.keep)
                raise
            swap_in(new, self.output)
            self._staging = None
        distributed.barrier()


def read_summary(output: str | os.PathLike) -> dict[str, Any]:
    """The run summary a finished run directory holds (SUMMARY_FILE)."""
    return json.loads((Path(output) / SUMMARY_FILE).read_text(encoding="utf-8"))


def _restore(new: Path, output: Path, keep: Sequence[str]) -> None:
    """Move the kept entries back after a failed final save, and drop the half-built directory."""
    for name in keep:
        if (new / name).exists() and not (output / name).exists():
            (new / name).replace(output / name)
    shutil.rmtree(new, ignore_errors=True)


def swap_in(new: Path, output: Path) -> None:
    """Make `new` the directory at `output` in one step; the old one is removed afterwards."""
    if not output.exists():
        os.replace(new, output)
        return
    if _exchange(new, output):
        shutil.rmtree(new, ignore_errors=True)  # now the old output
        return
    # No atomic exchange on this system: two renames, the old directory kept until the new one is in place.
    trash = Path(tempfile.mkdtemp(dir=output.parent, prefix=f".{output.name}.", suffix=".old"))
    os.replace(output, trash / "old")
    os.replace(new, output)
    shutil.rmtree(trash, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with Linux's renameat2(RENAME_EXCHANGE); False where unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))

