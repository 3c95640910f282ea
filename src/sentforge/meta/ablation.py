"""Leave-one-member-out ablation: how much each member contributes to a meta-embedding."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.meta.base import MetaMethod
from sentforge.meta.cache import cached_member_embeddings
from sentforge.meta.meta_encoder import MetaEncoder
from sentforge.meta.registry import method_class

logger = logging.getLogger(__name__)

# Methods whose d cannot exceed the members' total dimension (an eigen-decomposition of that size).
BOUNDED_BY_TOTAL_DIM = ("svd", "gcca")


def fit_method(method: str, params: dict[str, Any], embeddings: Sequence[np.ndarray]) -> MetaMethod:
    """Fit `method` on member embeddings; for SVD and GCCA, d is capped at the members' total dimension
    (which a subset of members can fall below)."""
    params = dict(params)
    total = sum(e.shape[1] for e in embeddings)
    if method in BOUNDED_BY_TOTAL_DIM and params.get("dim", 0) > total:
        logger.info("%s: dim %d > the %d dimensions of these members; using %d", method, params["dim"], total, total)
        params["dim"] = total
    return method_class(method)(**params).fit(embeddings)


def member_subsets(names: Sequence[str]) -> list[tuple[str, list[int]]]:
    """("all members", every index), then ("without NAME", the others) for each member."""
    everyone = list(range(len(names)))
    return [("all members", everyone)] + [(f"without {name}", [j for j in everyone if j != i])
                                          for i, name in enumerate(names)]


def leave_one_member_out(members: Sequence[Any], method: str, params: dict[str, Any], corpus: Sequence[str],
                         tasks: str | Sequence[str], data_dir: str | os.PathLike | None = None,
                         batch_size: int = 32, cache_dir: str | Path | None = None,
                         seed: int = 1111) -> dict[str, Any]:
    """Fit `method` on all members and on each set without one member; score every ensemble on `tasks`.

    Each member encodes the fit corpus once (cached on disk with `cache_dir`) and the task texts once
    (kept in memory across the ensembles).
    """
    from sentforge.evaluation.runner import evaluate
    from sentforge.evaluation.task import CachedEncoder

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


def ablation_markdown(report: dict[str, Any]) -> str:
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
