"""Cross-validation of the frozen tasks and fine-tuning's folds: the paper's repeated stratified k-fold splits
(:func:`repeated_stratified_folds`), the bootstrap of each test fold (:func:`bootstrap_indices`), the forked
processes that fit the folds (:func:`forked_map`, :func:`fold_predictions`: their predictions kept in the fold cache
of :mod:`gcc_sgcl.tasks.folds` while an evaluation runs) and the protocol that puts them together
(:func:`cross_validated`).
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, wait
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import RepeatedStratifiedKFold
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from gcc_sgcl.cli import ignore_signals, signals_held
from gcc_sgcl.tasks.folds import FoldResult, cache_meta, close_cache, held_cache, load_fold, open_cache, save_fold
from gcc_sgcl.tasks.records import TaskResult

# The CV fits small dense problems (thousands x 64) where a multi-threaded BLAS gains little; on the shared
# 2-core machine, one one-vs-rest logistic regression fit (4500 x 64, 20 classes) took 3.5 s with 2 OpenBLAS
# threads and 0.7 s with 1.
CV_BLAS_THREADS = 1
T = TypeVar("T")


def class_labels(labels: np.ndarray) -> np.ndarray:
    """``labels`` as an array, checked to be a 1-D class vector (single-label data only)."""
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(
            f"labels must be a 1-D class vector, got shape {labels.shape}; convert a one-hot matrix with "
            f"labels.argmax(axis=1) (multi-label data is not supported)"
        )
    return labels


def check_features(emb: np.ndarray, labels: np.ndarray) -> None:
    """Raise if ``emb`` is not a 2-D matrix with one row per label."""
    if emb.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D (rows, hidden) array, got shape {emb.shape}")
    if emb.shape[0] != labels.shape[0]:
        raise ValueError(f"embeddings have {emb.shape[0]} rows but there are {labels.shape[0]} labels")


def repeated_stratified_folds(
    labels: np.ndarray, folds: int, repeats: int, seed: int
) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """``repeats`` lists of ``folds`` ``(train, test)`` index pairs: ``RepeatedStratifiedKFold(folds, repeats,
    random_state=seed)``, a new shuffled stratified split per repetition. Depends only on the labels and seed.
    Every class needs at least ``folds`` examples, so that each test fold holds all classes."""
    if folds < 2:
        raise ValueError(f"--folds must be >= 2, got {folds}")
    classes, counts = np.unique(labels, return_counts=True)
    if counts.size and counts.min() < folds:
        raise ValueError(
            f"--folds {folds}: class {classes[counts.argmin()]} has only {counts.min()} examples, but stratified "
            f"{folds}-fold CV needs at least {folds} of every class; lower --folds"
        )
    splitter = RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)
    splits = list(splitter.split(np.zeros((len(labels), 1)), labels))
    return [splits[r * folds:(r + 1) * folds] for r in range(repeats)]


def bootstrap_indices(size: int, seed: int, repeat: int, fold: int) -> np.ndarray:
    """``size`` indices drawn uniformly with replacement from ``range(size)``, from a generator seeded by
    ``(seed, repeat, fold)`` so that every fold of every repetition gets its own reproducible resample."""
    return np.random.default_rng((seed, repeat, fold)).integers(0, size, size=size)


# (train indices, test indices) -> predicted labels of the test indices
FitPredict = Callable[[np.ndarray, np.ndarray], np.ndarray]


def estimator_fit_predict(estimator: BaseEstimator, emb: np.ndarray, labels: np.ndarray) -> FitPredict:
    """A :data:`FitPredict` that fits a clone of ``estimator`` on ``emb[train]`` and predicts ``emb[test]``."""
    check_features(emb, labels)

    def fit_predict(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        return clone(estimator).fit(emb[train], labels[train]).predict(emb[test])

    return fit_predict


_TASK: Callable[[int], object] | None = None  # set in each forked worker of :func:`forked_map`
MAX_CV_JOBS = 8  # each SVC worker holds a fold's Gram matrix (about 0.5 GB at 5 000 graphs)


def _init_worker(task: Callable[[int], object]) -> None:
    global _TASK
    _TASK = task
    ignore_signals((signal.SIGINT,))  # Ctrl-C is the parent's to report; it ends the pool


def _run_task(i: int) -> object:
    with threadpool_limits(limits=CV_BLAS_THREADS, user_api="blas"):
        return _TASK(i)


def cv_jobs(jobs: int) -> int:
    """Processes that fit CV folds (frozen tasks' classifiers, fine-tuning): ``jobs``, or with ``0`` the cores this
    process may use (at most :data:`MAX_CV_JOBS`)."""
    if jobs < 0:
        raise ValueError(f"jobs must be >= 0 (0: every available core), got {jobs}")
    affinity = getattr(os, "sched_getaffinity", None)
    return jobs or min(MAX_CV_JOBS, len(affinity(0)) if affinity else os.cpu_count() or 1)


def forked_jobs(jobs: int, n: int) -> int:
    """The processes :func:`forked_map` runs ``n`` tasks in for ``jobs`` (``0``: :func:`cv_jobs`): at most ``n``,
    and 1 (in this process) where ``fork`` is not available."""
    jobs = cv_jobs(jobs)
    return min(jobs, n) if "fork" in multiprocessing.get_all_start_methods() else 1


def _wait(future: Future[T], poll: float = 0.5) -> T:
    """``future.result()``, waited for in ``poll``-second slices: a Ctrl-C that another thread took (one sent
    while this thread held it back) is raised only once this thread runs again, not when the fit ends."""
    while not wait([future], timeout=poll).done:
        pass
    return future.result()


class _LoggedProgress:
    """Iterate ``items`` (``total`` of them), printing to stderr, at most every ``every`` seconds and only once the
    first ``every`` seconds have passed, ``[gcc_sgcl] <desc>: k of total, about m min left``: the estimate a
    progress bar shows, for an evaluation whose stderr is a log, not a terminal (short ones print nothing)."""

    def __init__(self, items: Iterable[T], total: int, desc: str, every: float = 60.0) -> None:
        self.items, self.total, self.desc, self.every = items, total, desc, every

    def __iter__(self) -> Iterator[T]:
        start = last = time.monotonic()
        for done, item in enumerate(self.items, 1):
            yield item
            now = time.monotonic()
            if now - last >= self.every and done < self.total:
                left = (now - start) / done * (self.total - done)
                print(f"[gcc_sgcl] {self.desc}: {done} of {self.total}, about {left / 60:.0f} min left", file=sys.stderr,
                      flush=True)
                last = now


def forked_map(task: Callable[[int], T], n: int, jobs: int = 1, progress: str | None = None) -> list[T]:
    """``[task(0), ..., task(n - 1)]``, single-threaded BLAS each; with ``jobs > 1`` (``0``: :func:`cv_jobs`) in
    that many forked processes, which inherit ``task``'s data copy-on-write (nothing large is pickled) and return
    only the results (a worker that dies raises ``BrokenProcessPool`` here). Deterministic tasks give the same
    list whatever ``jobs``; without ``fork`` (not Linux) the tasks run here. ``progress``: a progress bar with
    that description, advanced as results arrive in order."""
    jobs = forked_jobs(jobs, n)
    if progress is not None and not sys.stderr.isatty():  # a log: a line with an estimate now and then instead
        bar = partial(_LoggedProgress, total=n, desc=progress)
    else:
        bar = partial(tqdm, total=n, desc=progress, disable=progress is None, leave=False)
    if jobs <= 1:
        with threadpool_limits(limits=CV_BLAS_THREADS, user_api="blas"):
            return [task(i) for i in bar(range(n))]
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_init_worker,
                             initargs=(task,)) as pool:
        try:
            with signals_held():  # the pool forks its workers at the first submit: Ctrl-C waits for _init_worker
                futures = [pool.submit(_run_task, i) for i in range(n)]
            return [_wait(future) for future in bar(futures)]
        except KeyboardInterrupt:  # the workers ignore Ctrl-C: end them rather than wait for their fits; the pool
            for process in list(getattr(pool, "_processes", {}).values()):  # then fails the pending futures (none is
                process.terminate()  # cancelled first: the pool would fail a cancelled one with a traceback)
            raise


def fold_predictions(fit_fold: Callable[[int], np.ndarray], sizes: Sequence[int], jobs: int = 1,
                     cache: Path | None = None, features: np.ndarray | None = None,
                     meta: dict[str, Any] | None = None, progress: str | None = None) -> list[FoldResult]:
    """``fit_fold(i)``, fold ``i``'s predictions of its ``sizes[i]`` test examples, for every fold in order, with
    its fit's seconds, ``jobs`` at a time (:func:`forked_map`, ``progress`` its bar); each fit is single-threaded
    and deterministic, so the predictions do not depend on ``jobs``.

    With a ``cache`` folder (:mod:`gcc_sgcl.tasks.folds`), held for the call, the folds stored there for the same
    ``features`` and ``meta`` are read back instead of fitted (the count is printed to stderr), each fitted fold
    is written there as it finishes, and the folder is removed once every fold is in: an evaluation killed
    part-way resumes at its missing folds."""
    if cache is not None and (features is None or meta is None):
        raise ValueError("a fold cache needs the features the folds are fitted on and the evaluation's meta")

    def task(i: int) -> FoldResult:
        stored = None if cache is None else load_fold(cache, i, sizes[i])
        if stored is not None:
            return stored
        start = time.perf_counter()
        result = FoldResult(np.asarray(fit_fold(i)), time.perf_counter() - start)
        if cache is not None:
            save_fold(cache, i, result)
        return result

    with held_cache(cache):
        if cache is not None:
            stored = open_cache(cache, features, meta)
            if stored:
                print(f"{cache}: {stored} of {len(sizes)} folds stored, fitting the others", file=sys.stderr,
                      flush=True)
        fitted = forked_map(task, len(sizes), jobs, progress)
        if cache is not None:
            close_cache(cache)
    return fitted


def cross_validated(
    task: str, dataset: str, metric: str, fit_predict: FitPredict,
    score: Callable[[np.ndarray, np.ndarray], float], labels: np.ndarray, model: str, *,
    folds: int = 10, repeats: int = 10, bootstrap: bool = True, seed: int = 0, jobs: int = 1,
    cache: str | Path | None = None, features: np.ndarray | None = None,
) -> TaskResult:
    """The paper's protocol (appendix, "statistical experimental methodology"): ``repeats`` times, a new
    stratified ``folds``-fold split; on each fold ``fit_predict(train, test)`` fits a classifier on the training
    part and predicts the test fold of size T, and ``score(y_true, y_pred)`` is taken on T test examples drawn
    uniformly with replacement from that fold (``bootstrap``; otherwise on the fold itself). A repetition's
    score is the mean over its folds; ``std`` is the sample std (ddof=1) over the repetitions.

    The splits and the bootstrap draws depend only on ``(labels, seed)``, so two encoders evaluated on the
    same dataset with the same seed meet identical folds and resamples: their ``scores`` pair up by position.
    ``model`` describes the classifier for the ``protocol`` field; ``jobs`` processes fit the folds
    (:func:`fold_predictions`; the scores do not depend on it). With a ``cache`` folder, the fold predictions of
    ``features`` (what ``fit_predict`` was built on) are kept there while the evaluation runs
    (:mod:`gcc_sgcl.tasks.folds`), so a killed evaluation resumes at its missing folds; the folder is removed
    once every fold is in, and ``resumed_seconds`` estimates the wall time the folds read back took (their fit
    seconds over the processes). A progress bar counts the folds fitted, named by the dataset (in a log: a line with
    the estimate every minute once a minute has passed).
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    scores = np.empty((repeats, folds))
    correct = np.zeros((repeats, len(labels)), dtype=bool)
    splits = repeated_stratified_folds(labels, folds, repeats, seed)
    flat = [fold for repetition in splits for fold in repetition]
    meta = None if cache is None else cache_meta(labels, splits, model, seed)
    bar = f"{dataset or task} folds"  # folds done / total: a bar on a terminal, a line a minute in a log
    fitted = fold_predictions(lambda i: fit_predict(*flat[i]), [len(test) for _, test in flat], jobs,
                              None if cache is None else Path(cache), features, meta, bar)
    resumed = sum(f.seconds for f in fitted if f.stored) / forked_jobs(jobs, len(flat))
    predictions = iter(f.predictions for f in fitted)
    for r, repetition in enumerate(splits):
        for f, (train, test) in enumerate(repetition):
            y_true, y_pred = labels[test], next(predictions)
            correct[r, test] = y_pred == y_true
            if bootstrap:
                resample = bootstrap_indices(len(test), seed, r, f)
                y_true, y_pred = y_true[resample], y_pred[resample]
            scores[r, f] = score(y_true, y_pred)
    per_repeat = scores.mean(axis=1)
    resampled = ", bootstrapped test folds" if bootstrap else ""
    return TaskResult(
        task=task,
        dataset=dataset,
        metric=metric,
        scores=per_repeat,
        mean=float(per_repeat.mean()),
        std=float(per_repeat.std(ddof=1)) if repeats > 1 else 0.0,
        std_kind=f"std over {repeats} repeats of {folds}-fold CV{resampled}",
        n=len(labels),
        protocol=f"{model}, {repeats}x repeated stratified {folds}-fold CV{resampled}",
        seed=seed,
        correct=correct,
        resumed_seconds=resumed,
    )
