"""Leave-one-member-out ablation: how much each member contributes to a meta-embedding, each ensemble
scored on tasks."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.evaluation.runner import TABLE_OPTION, evaluate, markdown_path
from sentforge.evaluation.task import CachedEncoder
from sentforge.meta.ablation import fit_method, member_subsets
from sentforge.meta.cache import cached_member_embeddings
from sentforge.meta.meta_encoder import MetaEncoder
from sentforge.meta_fit import load_members, meta_inputs, read_fit_corpus
from sentforge.support.errors import ConfigError
from sentforge.support.io import atomic_file, save_json
from sentforge.support.output_guard import guard_output, output_lock, signed_json, signed_markdown
from sentforge.support.seed import set_seed

logger = logging.getLogger(__name__)


def leave_one_member_out(members: Sequence[Any], method: str, params: dict[str, Any], corpus: Sequence[str],
                         tasks: str | Sequence[str], data_dir: str | os.PathLike | None = None,
                         batch_size: int = 32, cache_dir: str | Path | None = None,
                         seed: int = 1111) -> dict[str, Any]:
    """Fit `method` on all members and on each set without one member; score every ensemble on `tasks`.

    Each member encodes the fit corpus once (cached on disk with `cache_dir`) and the task texts once
    (kept in memory across the ensembles).
    """
    names = [str(m.name) for m in members]
    corpus_embeddings = [cached_member_embeddings(m, corpus, cache_dir, batch_size) for m in members]
    task_memo = [CachedEncoder(m, batch_size=batch_size) for m in members]
    rows = []
    for label, indices in member_subsets(names):
        fitted = fit_method(method, params, [corpus_embeddings[i] for i in indices])
        meta = MetaEncoder([task_memo[i] for i in indices], fitted, name=f"{method} ({label})")
        report = evaluate(meta, tasks, data_dir=data_dir, batch_size=batch_size, seed=seed)
        scores = {name: entry["main_score"] for name, entry in report["tasks"].items()}
        rows.append({"ensemble": label, "members": [names[i] for i in indices], "dim": meta.dim, "scores": scores,
                     "mean": float(np.mean(list(scores.values()))),
                     "metrics": {name: entry["metrics"] for name, entry in report["tasks"].items()}})
        logger.info("%s: mean main score %.2f", label, rows[-1]["mean"])
    main_metrics = {name: entry["main_metric"] for name, entry in report["tasks"].items()}
    return {"method": method, "params": {k: v for k, v in params.items() if k != "device"},
            "n_sentences": len(corpus), "main_metrics": main_metrics, "rows": rows}


META_ABLATE = "meta ablate"  # the command family that signs and locks the report


def ablate_meta_encoder(members: Sequence[Any], method: str, corpus: Sequence[str | os.PathLike],
                        output: str | os.PathLike, *, params: dict[str, Any] | None = None,
                        tasks: str | Sequence[str] = "sts", data_dir: str | os.PathLike | None = None,
                        field: str | None = None, batch_size: int = 32, cache_dir: str | os.PathLike | None = None,
                        device: str | None = None, overwrite: bool = False, seed: int = 0) -> dict[str, Any]:
    """`sentforge meta ablate`: `leave_one_member_out` of at least 2 `members` (model specs, loaded on
    `device`, or encoders) fitted on the sentences of the `corpus` files (JSONL `field`), the report
    written to `output` (.json, with its Markdown table beside it, `ablation_markdown`) and returned.

    params: the method's constructor arguments. The output is locked and checked before the corpus is
    read or a member loads: it never is or lies inside an input, and an existing report is replaced only
    with `overwrite` when `meta ablate` wrote it.
    """
    set_seed(seed)
    output = Path(output)
    inputs = [*meta_inputs(members, corpus), ("--data-dir", data_dir)]
    with output_lock(output, META_ABLATE):
        guard_output(output, inputs, META_ABLATE, overwrite, file_format="json")
        guard_output(markdown_path(output), inputs, META_ABLATE, overwrite, option=TABLE_OPTION,
                     file_format="markdown")
        if output.suffix != ".json":
            raise ConfigError(f"--output {output}: the table is written as JSON (+ Markdown beside it); end it in "
                              ".json")
        if len(members) < 2:
            raise ConfigError("--member: leaving one member out needs at least 2 members")
        sentences = read_fit_corpus(corpus, field)
        encoders = load_members(members, device)
        report = leave_one_member_out(encoders, method, params or {}, sentences, tasks, data_dir=data_dir,
                                      batch_size=batch_size, cache_dir=cache_dir, seed=seed)
        save_json(output, signed_json(report, META_ABLATE))
        with atomic_file(markdown_path(output), "w") as handle:
            handle.write(signed_markdown(ablation_markdown(report), META_ABLATE))
    return report


def ablation_markdown(report: dict[str, Any]) -> str:
    """The table of a `leave_one_member_out` report: each ensemble's scores and its change of the mean."""
    tasks = list(report["main_metrics"])
    title = (f"Leave-one-member-out, {report['method']} {report['params']}, fitted on {report['n_sentences']} "
             "sentences (main metric of each task)")
    lines = [title, "",
             "| ensemble | d | " + " | ".join(tasks) + " | mean | Δ mean |",
             "|---|---:|" + "---:|" * (len(tasks) + 2)]
    full = report["rows"][0]["mean"]
    for row in report["rows"]:
        cells = " | ".join(f"{row['scores'][t]:.2f}" for t in tasks)
        lines.append(f"| {row['ensemble']} | {row['dim']} | {cells} | {row['mean']:.2f} | {row['mean'] - full:+.2f} |")
    return "\n".join(lines) + "\n"
