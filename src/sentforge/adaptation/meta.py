"""A meta-embedding candidate: sentforge.meta's MetaEncoder over the best candidates' models (and the
user's extra member encoders), fitted on the unlabelled texts, saved with its members embedded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sentforge.adaptation.inputs import DATA_DIR
from sentforge.adaptation.result import CandidateResult, MetaResult, PipelineResult
from sentforge.harness.dev_scores import main_score

GCCA_DIM = 1024  # the meta-embedding paper's d; lowered to the members' total dimension when that is smaller
# The fit needs covariances of at most a few thousand dimensions: a seeded sample of a larger corpus suffices.
MAX_FIT_TEXTS = 10_000


def member_specs(results: dict[str, CandidateResult], size: int, extra: list[str]) -> list[tuple[str, str]]:
    """(name, model spec) of the `size` best single-model candidates by dev score, then the extra members."""
    singles = [(name, r) for name, r in results.items()
               if r.done and not isinstance(r, (MetaResult, PipelineResult)) and r.model_path]
    best = sorted(singles, key=lambda item: -item[1].dev)[:size]
    return [(name, r.model_path) for name, r in best] + [(f"member:{spec}", spec) for spec in extra]


def run_meta(method: str, members: list[tuple[str, str]], corpus: Path, dev: Any, run_dir: Path, cache_dir: Path,
             device: str | None, seed: int) -> dict[str, Any]:
    """Fit, save (members embedded when they all can be) and score the meta-embedding; record the
    `sentforge meta fit` line that gives the same fit."""
    from sentforge.data.corpora import read_corpus
    from sentforge.encoder import Encoder
    from sentforge.loading import load
    from sentforge.meta_fit import fit_meta_encoder, meta_fit_command

    specs = [spec for _, spec in members]
    # Loaded here, not by the fit: GCCA's dimension depends on theirs.
    encoders = [load(spec, device=device) for spec in specs]
    params = {"dim": min(GCCA_DIM, sum(e.dim for e in encoders))} if method == "gcca" else {}
    # Counted as `sentforge meta fit --corpus` reads the texts: a larger corpus is fitted on its sample.
    texts = read_corpus(corpus, None, split=False)
    if len(texts) > MAX_FIT_TEXTS:
        corpus = fit_sample(texts, run_dir.parent.parent / DATA_DIR / "meta-fit.txt", seed)
    embedded = all(isinstance(e, Encoder) for e in encoders)
    fit = {"params": params, "embed_members": embedded, "seed": seed}  # the same in the call and its line
    # The run directory is this candidate's alone: a fit that stopped before its result was recorded is redone.
    fitted = fit_meta_encoder(encoders, method, [corpus], run_dir, cache_dir=cache_dir, overwrite=True, **fit)
    value, _ = main_score(dev, fitted.encoder)
    return {"dev": value, "members": [name for name, _ in members], "dim": fitted.encoder.dim,
            "examples": fitted.sentences, "commands": [meta_fit_command(specs, method, [corpus], run_dir, **fit)],
            "evaluations": []}


def fit_sample(texts: list[str], path: Path, seed: int) -> Path:
    """Write a seeded sample of MAX_FIT_TEXTS texts (in corpus order) to `path`, once."""
    import numpy as np

    from sentforge.support.io import atomic_file

    if not path.is_file():
        keep = np.sort(np.random.default_rng(seed).choice(len(texts), MAX_FIT_TEXTS, replace=False))
        with atomic_file(path, "w") as handle:
            handle.writelines(texts[i] + "\n" for i in keep)
    return path
