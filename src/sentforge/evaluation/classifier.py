"""Linear models on frozen sentence vectors: SentEval's logistic-regression protocol (its scikit-learn
path), run fast, and SentGLUE's hold-out selection.

Follows `senteval/tools/validation.py` of facebookresearch/SentEval with `usepytorch=False`:

- `inner_kfold` (SentEval's InnerKFoldClassifier; MR, CR, SUBJ, MPQA): an outer
  `StratifiedKFold(k, shuffle=True, random_state=1111)`; inside each outer fold an inner
  `StratifiedKFold(k, shuffle=True, random_state=1111)` over the outer-train part scores every C of
  2^-2..2^3; the C with the best mean inner accuracy is refitted on the outer-train part and scored on
  the outer-test part. Reported: the mean of the per-fold test accuracies.
- `kfold` (KFoldClassifier; TREC, MRPC): C ∈ 2^-1..2^5 chosen by `StratifiedKFold(k, shuffle=True,
  random_state=seed)` cross-validation on train, refitted on all of train, scored on test.
- `split` (SplitClassifier; SST-2): C ∈ 2^-2..2^3 chosen on dev; the model of that C is scored on test.

SentGLUE's selection (`holdout_logistic_regression`, `holdout_ridge`): a seeded 10% hold-out of train
(stratified for classification) scores each C ∈ 2^-2..2^3 (ridge alpha ∈ 10^-2..10^3) on a given
metric; the first best is refitted on all of train.

Sentence-pair tasks classify `pair_features` of the two sentences' vectors. The metrics here (`accuracy`,
`matthews`, `f1`, `pearson`, `spearman`) are fractions and correlations; callers that report ×100
scale explicitly (`percent`).

Every fit is `LogisticRegression(C=C, random_state=seed)` with scikit-learn's defaults (lbfgs, tol 1e-4,
max_iter 100) on the raw float32 features: SentEval's scikit-learn path does not standardise. The SentEval
protocols' accuracies are ×100 and rounded to two decimals where SentEval rounds them (which decides ties:
the first best C wins), so the numbers equal the official code's for the same features and sample order.

Speed comes from the execution, not from a different protocol: folds run in parallel worker processes
(joblib), each with single-threaded BLAS/OpenMP (multi-threaded BLAS on a busy 2-core machine is an
order of magnitude slower per fit), and all C values of one split are fitted inside one worker. Warm
starts along the C path were measured and dropped: no faster with lbfgs here, and less exact
(docs/transfer.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import pearsonr, spearmanr
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import f1_score, matthews_corrcoef
from sklearn.model_selection import StratifiedKFold, train_test_split
from threadpoolctl import ThreadpoolController

from sentforge.support.errors import ConfigError

SEED = 1111
KFOLD = 10
# SentEval's scikit-learn grids: `[2**t for t in range(-2, 4)]` (inner k-fold and dev split) and
# `[2**t for t in range(-1, 6)]` (k-fold on train).
INNER_KFOLD_REGS: tuple[float, ...] = tuple(2.0 ** t for t in range(-2, 4))
SPLIT_REGS = INNER_KFOLD_REGS
KFOLD_REGS: tuple[float, ...] = tuple(2.0 ** t for t in range(-1, 6))
HOLDOUT_REGS = SPLIT_REGS  # SentGLUE keeps SentEval's grid
RIDGE_ALPHAS: tuple[float, ...] = tuple(10.0 ** t for t in range(-2, 4))
HOLDOUT_FRACTION = 0.1
PAIR_FEATURES = ("senteval", "full")

Metric = Callable[[np.ndarray, np.ndarray], float]


@dataclass(frozen=True)
class ClassifierResult:
    """Outcome of one protocol run; accuracies ×100."""

    dev_acc: float  # best validation accuracy (mean over outer folds for `inner_kfold`)
    acc: float  # test accuracy
    chosen_C: tuple[float, ...]  # the selected C (one per outer fold for `inner_kfold`)
    predictions: np.ndarray | None = field(default=None, compare=False)  # test predictions (`kfold`, `split`)


def pair_features(first: np.ndarray, second: np.ndarray, kind: str) -> np.ndarray:
    """Features of sentence pairs from their vectors u, v: `senteval`: [|u−v|, u∗v] (SentEval's MRPC);
    `full`: [u, v, |u−v|, u∗v] (InferSent, SentGLUE)."""
    parts = [np.abs(first - second), first * second]
    if kind == "full":
        parts = [first, second, *parts]
    elif kind != "senteval":
        raise ConfigError(f"pair features {kind!r}: choose from {', '.join(PAIR_FEATURES)}")
    return np.concatenate(parts, axis=1)


@cache
def _threadpools() -> ThreadpoolController:
    # Built once per process: `threadpoolctl.threadpool_limits` rescans the loaded libraries on every call.
    return ThreadpoolController()


def single_threaded():
    """Context manager: BLAS and OpenMP pools limited to one thread."""
    return _threadpools().limit(limits=1)


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """The fraction of predictions equal to the labels."""
    return float(np.mean(y_true == y_pred))


def matthews(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(matthews_corrcoef(y_true, y_pred))


def f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(f1_score(y_true, y_pred))


def pearson(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Pearson's r; 0 for a constant prediction, which carries no correlation."""
    return float(pearsonr(y_true, y_pred)[0]) if np.ptp(y_pred) > 0 else 0.0


def spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Spearman's rho; 0 for a constant prediction."""
    return float(spearmanr(y_true, y_pred)[0]) if np.ptp(y_pred) > 0 else 0.0


METRICS: dict[str, Metric] = {"acc": accuracy, "mcc": matthews, "f1": f1, "pearson": pearson, "spearman": spearman}


def percent(metric: Metric) -> Metric:
    """`metric` ×100, as reports give accuracies and correlations."""
    return lambda y_true, y_pred: 100 * metric(y_true, y_pred)


def logistic_regression(C: float, seed: int) -> LogisticRegression:
    """SentEval's estimator: scikit-learn defaults apart from C and the seed."""
    return LogisticRegression(C=C, random_state=seed)


def fit(X: np.ndarray, y: np.ndarray, C: float, seed: int) -> LogisticRegression:
    """One SentEval fit, single-threaded (scikit-learn's non-convergence warnings are silenced: SentEval
    keeps max_iter=100, and its non-converged fits are part of the protocol)."""
    with single_threaded(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return logistic_regression(C, seed).fit(X, y)


def path_scores(X_train: np.ndarray, y_train: np.ndarray, X_valid: np.ndarray, y_valid: np.ndarray,
                regs: Sequence[float], seed: int) -> list[float]:
    """Validation accuracy of a model fitted at each C, single-threaded."""
    with single_threaded(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return [accuracy(y_valid, logistic_regression(C, seed).fit(X_train, y_train).predict(X_valid)) for C in regs]


def stratified_folds(X: np.ndarray, y: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """SentEval's folds: `StratifiedKFold(k, shuffle=True, random_state=seed)` over the samples in
    the order given (SentEval's order matters: the shuffle permutes within each class)."""
    counts = np.unique(y, return_counts=True)[1]
    if k < 2 or counts.min() < k:
        raise ConfigError(f"{k}-fold cross-validation needs at least {k} examples of every class; "
                          f"the smallest class has {counts.min()}")
    return list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(X, y))


def cv_scores(X: np.ndarray, y: np.ndarray, regs: Sequence[float], k: int, seed: int) -> list[float]:
    """Mean k-fold accuracy ×100 of each C, rounded to two decimals as SentEval does (sequential)."""
    per_fold = [path_scores(X[train], y[train], X[test], y[test], regs, seed)
                for train, test in stratified_folds(X, y, k, seed)]
    return [round(100 * float(np.mean(scores)), 2) for scores in zip(*per_fold)]


def _best(regs: Sequence[float], scores: Sequence[float]) -> tuple[float, float]:
    index = int(np.argmax(scores))  # first best, as SentEval's np.argmax
    return regs[index], scores[index]


def _outer_fold(X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray, regs: Sequence[float],
                k: int, seed: int) -> tuple[float, float, float]:
    X_train, y_train = X[train], y[train]
    C, dev = _best(regs, cv_scores(X_train, y_train, regs, k, seed))
    model = fit(X_train, y_train, C, seed)
    return dev, round(100 * model.score(X[test], y[test]), 2), C


def inner_kfold(X: np.ndarray, y: np.ndarray, regs: Sequence[float] = INNER_KFOLD_REGS, k: int = KFOLD,
                seed: int = SEED, n_jobs: int = -1) -> ClassifierResult:
    """SentEval's InnerKFoldClassifier; outer folds run in parallel. The official code hard-codes
    random_state=1111 for both splitters; here `seed` (default 1111) sets them and the estimator."""
    folds = stratified_folds(X, y, k, seed)
    outcomes = Parallel(n_jobs=n_jobs)(delayed(_outer_fold)(X, y, train, test, regs, k, seed)
                                       for train, test in folds)
    dev, test, chosen = zip(*outcomes)
    return ClassifierResult(dev_acc=round(float(np.mean(dev)), 2), acc=round(float(np.mean(test)), 2),
                            chosen_C=tuple(chosen))


def _fold_path(X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray, regs: Sequence[float],
               seed: int) -> list[float]:
    return path_scores(X[train], y[train], X[test], y[test], regs, seed)


def kfold(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
          regs: Sequence[float] = KFOLD_REGS, k: int = KFOLD, seed: int = SEED,
          n_jobs: int = -1) -> ClassifierResult:
    """SentEval's KFoldClassifier: C by k-fold CV on train (folds in parallel), refit on train, test."""
    folds = stratified_folds(X_train, y_train, k, seed)
    per_fold = Parallel(n_jobs=n_jobs)(delayed(_fold_path)(X_train, y_train, train, test, regs, seed)
                                       for train, test in folds)
    scores = [round(100 * float(np.mean(s)), 2) for s in zip(*per_fold)]
    C, dev = _best(regs, scores)
    model = fit(X_train, y_train, C, seed)
    predictions = model.predict(X_test)
    return ClassifierResult(dev_acc=dev, acc=round(100 * accuracy(y_test, predictions), 2), chosen_C=(C,),
                            predictions=predictions)


def split(X_train: np.ndarray, y_train: np.ndarray, X_dev: np.ndarray, y_dev: np.ndarray, X_test: np.ndarray,
          y_test: np.ndarray, regs: Sequence[float] = SPLIT_REGS, seed: int = SEED,
          n_jobs: int = -1) -> ClassifierResult:
    """SentEval's SplitClassifier: C chosen on dev; SentEval then refits that C on the same train set,
    which gives the very model already fitted, so that model is scored on test. Cs fit in parallel."""
    models = Parallel(n_jobs=n_jobs)(delayed(fit)(X_train, y_train, C, seed) for C in regs)
    scores = [round(100 * accuracy(y_dev, model.predict(X_dev)), 2) for model in models]
    index = int(np.argmax(scores))
    predictions = models[index].predict(X_test)
    return ClassifierResult(dev_acc=scores[index], acc=round(100 * accuracy(y_test, predictions), 2),
                            chosen_C=(regs[index],), predictions=predictions)


def holdout_indices(labels: np.ndarray, seed: int, stratify: bool) -> tuple[np.ndarray, np.ndarray]:
    """Seeded train / hold-out indices (hold-out = 10% of train)."""
    return train_test_split(np.arange(len(labels)), test_size=HOLDOUT_FRACTION, random_state=seed,
                            stratify=labels if stratify else None)


def holdout_logistic_regression(X: np.ndarray, y: np.ndarray, metric: Metric, seed: int = SEED,
                                n_jobs: int = -1) -> tuple[LogisticRegression, float, float]:
    """C by hold-out score (first best), then the model refitted on all of (X, y): (model, C, hold-out score)."""
    fit_rows, held = holdout_indices(y, seed, stratify=True)
    models = Parallel(n_jobs=n_jobs)(delayed(fit)(X[fit_rows], y[fit_rows], C, seed) for C in HOLDOUT_REGS)
    scores = [metric(y[held], model.predict(X[held])) for model in models]
    best = int(np.argmax(scores))
    return fit(X, y, HOLDOUT_REGS[best], seed), HOLDOUT_REGS[best], scores[best]


def holdout_ridge(X: np.ndarray, y: np.ndarray, metric: Metric, seed: int = SEED) -> tuple[Ridge, float, float]:
    """alpha by hold-out score (first best), then ridge refitted on all of (X, y): (model, alpha, score)."""
    fit_rows, held = holdout_indices(y, seed, stratify=False)
    scores = [metric(y[held], Ridge(alpha=alpha).fit(X[fit_rows], y[fit_rows]).predict(X[held]))
              for alpha in RIDGE_ALPHAS]
    best = int(np.argmax(scores))
    return Ridge(alpha=RIDGE_ALPHAS[best]).fit(X, y), RIDGE_ALPHAS[best], scores[best]
