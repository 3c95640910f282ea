"""Fitting a static model to its teacher's sentence vectors on the user's texts (Tokenlearn's idea).

The static model's mean token vector, times a linear map to the teacher's space, is regressed onto the
teacher's unit sentence vectors by cosine loss with Adam: the map starts at the ridge least-squares fit, the
token vectors of the texts' tokens and the map then move together. The mean is linear, so the map folds into
the table afterwards (every row times the map) and the result is again one StaticEmbedding, in the teacher's
dimension. Written here rather than taken from the `tokenlearn` package, which runs its own featurising
and training scripts over files and hub datasets, not over texts and vectors already in memory.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from sentforge.encoder import progress_enabled
from sentforge.modules.token_vectors import TokenVectors
from sentforge.support.errors import ConfigError

logger = logging.getLogger(__name__)

# The ridge penalty of the starting map, relative to the mean squared norm of the static vectors.
RIDGE = 1e-2


@dataclass(frozen=True)
class FitResult:
    """The fitted token vectors, the epochs and steps that gave them, and the mean cosine to the teacher's
    vectors of the texts with the starting map and after the fit."""

    vectors: TokenVectors
    epochs: float
    steps: int
    cosine_before: float
    cosine_after: float


def _mean_vectors(table: torch.Tensor, ids: list[torch.Tensor]) -> torch.Tensor:
    lengths = torch.tensor([len(row) for row in ids])
    offsets = torch.cumsum(lengths, dim=0) - lengths
    return nn.functional.embedding_bag(torch.cat(ids), table, offsets, mode="mean")


def _ridge_map(student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    """The least-squares map from the student's vectors to the teacher's, with a small ridge penalty."""
    gram = student.T @ student
    penalty = RIDGE * float(gram.diagonal().mean()) * torch.eye(gram.shape[0], dtype=gram.dtype)
    return torch.linalg.solve(gram + penalty, student.T @ teacher)


def _mean_cosine(student: torch.Tensor, teacher: torch.Tensor) -> float:
    return float(nn.functional.cosine_similarity(student, teacher, dim=1).mean())


def fit_token_vectors(vectors: TokenVectors, texts: list[str], targets: np.ndarray, *, epochs: int = 10,
                      lr: float = 3e-3, batch_size: int = 256, deadline: float | None = None,
                      seed: int = 0, show_progress: bool | None = None) -> FitResult:
    """Token vectors whose mean over each text's tokens, in the teacher's space, points where `targets` (the
    teacher's vectors of `texts`, one row each) point. Stops after `epochs` or at `deadline` (a
    `time.monotonic()` value), whichever comes first, and keeps the epoch's end (or the start) whose mean
    cosine on the texts is highest; `vectors` itself is left unchanged."""
    if len(texts) != len(targets) or len(texts) < 2:
        raise ConfigError(f"fitting needs at least 2 texts with one teacher vector each, got {len(texts)} texts "
                          f"and {len(targets)} vectors")
    token_ids = [torch.tensor(row, dtype=torch.long) for row in vectors.token_ids(texts)[0]]
    kept = [i for i, row in enumerate(token_ids) if len(row)]  # a text without tokens has no mean to fit
    token_ids = [token_ids[i] for i in kept]
    teacher = nn.functional.normalize(torch.as_tensor(np.asarray(targets)[kept], dtype=torch.float32), dim=1)
    table = nn.Parameter(vectors.embedding.weight.detach().clone())
    with torch.no_grad():
        start = _mean_vectors(table, token_ids)
        mapping = nn.Parameter(_ridge_map(start, teacher))
        before = _mean_cosine(start @ mapping, teacher)
    optimizer = torch.optim.Adam([table, mapping], lr=lr)
    generator = torch.Generator().manual_seed(seed)
    batches_per_epoch = -(-len(token_ids) // batch_size)
    best, best_state, steps = before, (table.detach().clone(), mapping.detach().clone(), 0), 0
    with tqdm(total=epochs * batches_per_epoch, desc="fit static", unit="step",
              disable=progress_enabled(show_progress, epochs * batches_per_epoch)) as progress:
        for _ in range(epochs):
            for rows in torch.randperm(len(token_ids), generator=generator).split(batch_size):
                if deadline is not None and time.monotonic() >= deadline:
                    break
                predicted = _mean_vectors(table, [token_ids[i] for i in rows]) @ mapping
                loss = 1 - nn.functional.cosine_similarity(predicted, teacher[rows], dim=1).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                steps += 1
                progress.update(1)
            with torch.no_grad():  # each epoch's end is a candidate; the best on the texts is kept
                cosine = _mean_cosine(_mean_vectors(table, token_ids) @ mapping, teacher)
            if cosine > best:
                best, best_state = cosine, (table.detach().clone(), mapping.detach().clone(), steps)
            if deadline is not None and time.monotonic() >= deadline:
                logger.info("static fit stopped at its time limit after %d of %d steps", steps,
                            epochs * batches_per_epoch)
                break
    kept_table, kept_mapping, kept_steps = best_state
    folded = kept_table @ kept_mapping
    logger.info("static fit on %d texts: mean cosine to the teacher %.4f -> %.4f (%d steps kept of %d)",
                len(token_ids), before, best, kept_steps, steps)
    return FitResult(TokenVectors(vectors.tokenizer, folded), kept_steps / batches_per_epoch, kept_steps, before, best)
