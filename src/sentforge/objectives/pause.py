"""PAUSE: positive and annealed unlabelled sentence embedding (Cao et al., 2021).

A dual encoder with shared weights (the encoder passed in, mean pooling) embeds both sentences of a
pair; the pair features (u, v, |u - v|, u * v) go through a head Dense(128, ELU) -> Dense(K) that
gives one logit per class. The loss is

    loss = supervised + w(t) * PU,   w(t) = (t / T) ** p,  p = 3,  t the global step, T the total steps.

supervised: cross-entropy over the labelled pairs of the batch (binary cross-entropy per class when
    the data is multi-label); none when there are no negative labels (K = 1, positive-only data).
PU: for each class k, a one-vs-rest non-negative PU risk (Kiryo et al., 2017) with class prior pi_k
    (default 1/K) and the sigmoid loss l(z, y) = sigmoid(-y z):
        positive risk  R+ = pi_k * mean_{labelled k} l(z_k, +1)
        negative risk  R- = mean_{unlabelled} l(z_k, -1) - pi_k * mean_{labelled k} l(z_k, -1)
        term_k = -R-  when R- < 0 (only the negative risk is pushed back up), else R+ + R-
    averaged over the classes whose term the batch defines (it holds labelled-k and unlabelled pairs).
    (The reference implementation counts an empty mean as 0 and always divides by K; with its batches
    of 1024 every class is nearly always present, and with small batches the empty-mean convention
    would turn a class's term into "every unlabelled pair is a negative", so absent classes are skipped.
    A batch without unlabelled pairs, as at 100% labels, has no PU part.)

An example is (sentence1, sentence2, label): label is a class name, a tuple of class names
(multi-label), or None for an unlabelled pair. The head is the objective's own part; the encoder is
what a PAUSE run keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from sentforge.support.device import to_device
from sentforge.support.errors import ConfigError
from sentforge.objectives.host_counter import HostCounter

# The paper's prior is 1/3 for the 3 NLI classes (1/K here); its training settings are in recipes/pause.py.
HEAD_HIDDEN = 128  # Dense(128, ELU), the paper's head
ANNEAL_POWER = 3.0  # w(t) = (t / T) ** 3, the paper's annealing


def annealing_weight(step: int, total_steps: int, power: float = ANNEAL_POWER) -> float:
    """w(t) = (t / T) ** power, clipped to [0, 1]."""
    if total_steps < 1:
        raise ConfigError(f"total_steps must be >= 1, got {total_steps}")
    return min(1.0, max(0.0, step / total_steps)) ** power


def sigmoid_loss(logits: torch.Tensor, target_sign: float) -> torch.Tensor:
    """l(z, y) = sigmoid(-y z)."""
    return torch.sigmoid(-target_sign * logits)


def nn_pu_risk(positive_logits: torch.Tensor, unlabelled_logits: torch.Tensor, prior: float) -> torch.Tensor:
    """The non-negative PU objective of one class: -R- when the negative risk R- is below zero, else R+ + R-."""
    positive_risk = prior * sigmoid_loss(positive_logits, 1.0).mean()
    negative_risk = sigmoid_loss(unlabelled_logits, -1.0).mean() - prior * sigmoid_loss(positive_logits, -1.0).mean()
    # torch.where keeps the branch on the device (no host sync); the branch not taken gets no gradient.
    return torch.where(negative_risk < 0, -negative_risk, positive_risk + negative_risk)


def pu_loss(logits: torch.Tensor, positives: torch.Tensor, unlabelled: torch.Tensor,
            priors: Sequence[float]) -> torch.Tensor:
    """Mean over classes of the one-vs-rest nnPU objective.

    logits (n, K); positives (n, K) bool: pair i is labelled with class k; unlabelled (n,) bool.
    Classes without labelled pairs in the batch, and batches without unlabelled pairs, add no term.
    The masks may stay on the host while `logits` is on an accelerator: the choice of terms then
    needs no device sync.
    """
    if not unlabelled.any():
        return logits.sum() * 0.0
    unlabelled_logits = logits.index_select(0, _rows(unlabelled, logits.device))
    terms = [nn_pu_risk(logits[:, k].index_select(0, _rows(positives[:, k], logits.device)), unlabelled_logits[:, k],
                        priors[k])
             for k in range(logits.shape[1]) if positives[:, k].any()]
    return torch.stack(terms).mean() if terms else logits.sum() * 0.0


def _rows(mask: torch.Tensor, device: torch.device) -> torch.Tensor:
    """The row indices where `mask` (on the host) is true, on `device`. Indexing a device tensor with a
    host mask would copy the mask's indices over with a blocking copy, a sync per use."""
    return to_device(torch.nonzero(mask.cpu()).squeeze(1), device)


class PairHead(nn.Module):
    """(u, v, |u - v|, u * v) -> Dense(hidden, ELU) -> Dense(K)."""

    def __init__(self, dim: int, classes: int, hidden: int = HEAD_HIDDEN) -> None:
        super().__init__()
        self.hidden = nn.Linear(4 * dim, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        features = torch.cat([u, v, (u - v).abs(), u * v], dim=-1)
        return self.out(F.elu(self.hidden(features)))


class PAUSE(nn.Module):
    """PAUSE objective over batches of (sentence1, sentence2, label | tuple of labels | None).

    classes: the class names (K of them); priors: pi_k per class (default 1/K); total_steps: T of
    the annealing (the run's optimizer steps); multi_label: labels are tuples, supervised part is BCE;
    use_pu=False: the supervised-only baseline (same head, no PU term); gradient_accumulation: the
    Trainer's, so that `forward` calls count as optimizer steps.
    The global step t is counted by the objective itself: every training forward with gradients is
    1 / gradient_accumulation of a step. The count is a buffer, saved in the Trainer's checkpoints
    with the step it belongs to, so a resumed run continues the annealing where it stopped.
    `set_step(t)` sets it by hand.
    """

    def __init__(self, encoder: nn.Module, classes: Sequence[str], total_steps: int,
                 priors: Sequence[float] | None = None, anneal_power: float = ANNEAL_POWER,
                 multi_label: bool = False, head_hidden: int = HEAD_HIDDEN, use_pu: bool = True,
                 gradient_accumulation: int = 1) -> None:
        super().__init__()
        classes = list(classes)
        if not classes or len(set(classes)) != len(classes):
            raise ConfigError(f"PAUSE needs distinct class names, got {classes}")
        if total_steps < 1:
            raise ConfigError(f"total_steps must be >= 1, got {total_steps}")
        priors = [1.0 / len(classes)] * len(classes) if priors is None else [float(p) for p in priors]
        if len(priors) != len(classes) or not all(0.0 < p < 1.0 or (p == 1.0 and len(classes) == 1) for p in priors):
            raise ConfigError(f"priors must be one value in (0, 1) per class ({len(classes)}), got {priors}")
        if anneal_power <= 0:
            raise ConfigError(f"anneal_power must be positive, got {anneal_power}")
        if gradient_accumulation < 1:
            raise ConfigError(f"gradient_accumulation must be >= 1, got {gradient_accumulation}")
        if not use_pu and len(classes) == 1:
            raise ConfigError("supervised-only training needs negative labels (K >= 2); one class has no loss")
        self.encoder = encoder
        self.classes = classes
        self.index = {name: i for i, name in enumerate(classes)}
        self.priors = priors
        self.anneal_power = float(anneal_power)
        self.multi_label = multi_label
        self.use_pu = use_pu
        self.gradient_accumulation = gradient_accumulation
        self.head = PairHead(encoder.full_dim, len(classes), head_hidden)
        self._forwards = HostCounter(self, "forwards")  # training forwards so far
        self._total_steps = HostCounter(self, "total_steps", total_steps)
        self.last_stats: dict[str, float] = {}

    @property
    def step(self) -> int:
        """Optimizer steps completed (the t of the annealing)."""
        return self._forwards.value // self.gradient_accumulation

    def set_step(self, step: int) -> None:
        self._forwards.set(step * self.gradient_accumulation)

    @property
    def pu_weight(self) -> float:
        if not self.use_pu:
            return 0.0
        return annealing_weight(self.step, self._total_steps.value, self.anneal_power)

    def _targets(self, labels: Sequence) -> tuple[torch.Tensor, torch.Tensor]:
        """(n, K) bool membership and (n,) bool unlabelled."""
        membership = torch.zeros(len(labels), len(self.classes), dtype=torch.bool)
        for i, label in enumerate(labels):
            if label is None:
                continue
            names = label if isinstance(label, (tuple, list, frozenset)) else (label,)
            if not self.multi_label and len(names) != 1:
                raise ConfigError(f"pair {i} has labels {names}; multi-label data needs multi_label=True")
            for name in names:
                if name not in self.index:
                    raise ConfigError(f"pair {i} has label {name!r}, not one of the classes {self.classes}")
                membership[i, self.index[name]] = True
        unlabelled = torch.tensor([label is None for label in labels], dtype=torch.bool)
        return membership, unlabelled

    def logits(self, first: Sequence[str], second: Sequence[str]) -> torch.Tensor:
        vectors = self.encoder.embed([*first, *second])
        return self.head(vectors[:len(first)], vectors[len(first):]).float()

    def supervised_loss(self, logits: torch.Tensor, membership: torch.Tensor, labelled: torch.Tensor) -> torch.Tensor:
        if len(self.classes) == 1 or not labelled.any():
            return logits.sum() * 0.0
        targets = membership[labelled]  # on the host: copied over without a sync
        chosen = logits.index_select(0, _rows(labelled, logits.device))
        if self.multi_label:
            return F.binary_cross_entropy_with_logits(chosen, to_device(targets.float(), logits.device))
        return F.cross_entropy(chosen, to_device(targets.float().argmax(dim=1), logits.device))

    def forward(self, batch: Sequence) -> torch.Tensor:
        # ProportionalBatches used as the Trainer's data gives a list of mini-batches (batch size 1).
        if batch and isinstance(batch[0], list):
            batch = [example for group in batch for example in group]
        if any(len(example) != 3 for example in batch):
            raise ConfigError("PAUSE examples are (sentence1, sentence2, label or None) triples")
        first, second, labels = zip(*batch)
        logits = self.logits(first, second)
        membership, unlabelled = self._targets(labels)
        labelled_share = float((~unlabelled).float().mean())  # the masks stay on the host
        supervised = self.supervised_loss(logits, membership, ~unlabelled)
        pu = pu_loss(logits, membership, unlabelled, self.priors)
        weight = self.pu_weight
        if self.training and torch.is_grad_enabled():
            self._forwards.take()
        # Device tensors: the Trainer reads them with the loss, without a sync per step.
        self.last_stats = {"supervised": supervised.detach(), "pu": pu.detach(), "pu_weight": weight,
                           "labelled_share": labelled_share}
        return supervised + weight * pu
