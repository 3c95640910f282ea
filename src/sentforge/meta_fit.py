"""`sentforge meta fit` as one library function: a MetaEncoder of the members fitted on an unlabelled corpus
and saved under the output rules of every writing command (`support/output_guard.py`); and the command line that
reproduces such a fit, spelled here beside the function so that the two cannot drift apart.

It lies above `loading.py` because members are given as the model specs that `sentforge.load` resolves,
and not in `meta/`, which lies below `loading.py` (that loads MetaEncoder directories).
"""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentforge.support.errors import ConfigError
from sentforge.meta import MetaEncoder

logger = logging.getLogger(__name__)

META_FIT = "meta fit"  # the command family named in the output marker and the lock
# The `meta fit` option of each method parameter; a method's seed is the command's own --seed.
PARAMETER_OPTIONS = {"dim": "--dim", "tau": "--tau", "loss": "--ae-loss", "hidden_layers": "--ae-hidden",
                     "epochs": "--ae-epochs", "batch_size": "--ae-batch-size", "device": "--device"}

Member = Any  # a model spec (str or path), or an encoder already loaded


@dataclass(frozen=True)
class FittedMeta:
    """A fitted and saved MetaEncoder, and how many corpus sentences it was fitted on."""

    encoder: MetaEncoder
    sentences: int


def fit_meta_encoder(members: Sequence[Member], method: str, corpus: Sequence[str | os.PathLike],
                     output: str | os.PathLike, *, params: Mapping[str, Any] | None = None, field: str | None = None,
                     batch_size: int = 32, cache_dir: str | os.PathLike | None = None, device: str | None = None,
                     embed_members: bool = False, overwrite: bool = False, seed: int = 0) -> FittedMeta:
    """Fit the meta-embedding `method` (with its constructor arguments `params`) of `members` on the
    sentences of the `corpus` files and save it to the directory `output`.

    members: model specs, loaded with `sentforge.load` on `device`, or encoders already loaded (only specs
    take part in the output check). The output is checked before the corpus is read or a member loads: it is
    locked, never is or lies inside an input, and an existing one is replaced only with `overwrite` when
    `meta fit` wrote it. cache_dir: where the members' embeddings of the corpus are cached (None: not cached).
    embed_members: save the members inside `output` instead of by reference (their spec).
    """
    from sentforge.support.output_guard import guard_output, output_lock
    from sentforge.support.seed import set_seed

    set_seed(seed)
    output = Path(output)
    with output_lock(output, META_FIT):
        guard_output(output, meta_inputs(members, corpus), META_FIT, overwrite)
        sentences = read_fit_corpus(corpus, field)
        encoders = load_members(members, device)
        logger.info("fitting %s on %d sentences with %d members", method, len(sentences), len(encoders))
        meta = MetaEncoder(encoders, method, **(params or {}))
        meta.fit(sentences, batch_size=batch_size, cache_dir=cache_dir)
        meta.save(output, overwrite=overwrite, embed_members=embed_members, kind=META_FIT)
    return FittedMeta(meta, len(sentences))


def meta_fit_command(members: Sequence[str], method: str, corpus: Sequence[str | os.PathLike],
                     output: str | os.PathLike, *, params: Mapping[str, Any] | None = None,
                     embed_members: bool = False, seed: int = 0) -> str:
    """The `sentforge meta fit` line that makes the fit of `fit_meta_encoder` with these arguments."""
    options = [(PARAMETER_OPTIONS[name], value) for name, value in (params or {}).items() if name != "seed"]
    command = ["sentforge", "meta", "fit", *[arg for spec in members for arg in ("--member", spec)],
               *[arg for path in corpus for arg in ("--corpus", str(path))], "--method", method,
               *[arg for option, value in options for arg in (option, str(value))], "--output", str(output),
               *(["--embed-members"] if embed_members else []), "--seed", str(seed)]
    return shlex.join(command)


def meta_inputs(members: Sequence[Member], corpus: Sequence[str | os.PathLike]) -> list[tuple[str, Any]]:
    """The inputs that a meta-embedding's output must leave alone: the members given as specs, the corpus."""
    specs = [member for member in members if isinstance(member, (str, os.PathLike))]
    return [*(("--member", spec) for spec in specs), *(("--corpus", path) for path in corpus)]


def read_fit_corpus(paths: Sequence[str | os.PathLike], field: str | None) -> list[str]:
    from sentforge.data.corpora import read_corpus

    if not paths:
        raise ConfigError("--corpus: give at least one file of unlabelled sentences")
    sentences = [s for path in paths for s in read_corpus(path, field, split=False)]
    if len(sentences) < 2:
        raise ConfigError(f"--corpus {', '.join(map(str, paths))}: {len(sentences)} sentences; "
                          "fitting needs at least 2")
    return sentences


def load_members(members: Sequence[Member], device: str | None) -> list[Any]:
    from sentforge.loading import load

    if not members:
        raise ConfigError("--member: give at least one member encoder")
    return [load(member, device) if isinstance(member, (str, os.PathLike)) else member for member in members]
