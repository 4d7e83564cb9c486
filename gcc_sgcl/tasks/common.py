"""What the three downstream tasks share: the result record, embedding loading and checks, the CLI loop,
the printed table and the ``results.csv`` log.

Evaluation is decoupled from training through ``<load_path>/<dataset>.npy`` (written by
``bash scripts/generate.sh``): one float row per node (node datasets), per graph (graph datasets), or per
node of graph_1 followed by graph_2 (similarity datasets). A dataset given by path goes by its file's stem
(``<load_path>/<stem>.npy``, with ``<stem>.ids.txt`` holding each row's original node id).

``generate`` writes a record beside each file, ``<stem>.provenance.json``, which the commands check
(:func:`check_provenance`): embeddings of another graph than the one evaluated (a file given by path under a
registered dataset's name, an edited file, another data root) are refused; embeddings of an unfinished run are
scored with a one-line warning (:class:`~gcc_sgcl.engine.generate.UnfinishedRunWarning`), and every row of
``results.csv`` records what its record says of the rows (:class:`Embeddings`): the encoder's step
(``encoder_step``), the views averaged per row (``views``: the tables' are GCC's 2, ``generate``'s node default is
32) and the vector joined to them (``joined``); empty for embeddings without a record (written by older code or by a
classical baseline, which are not checked). Rows written by ``generate --with-structural`` (the
encoder's embedding joined to the structural vector, the tables' ``<method> ⊕ structural`` rows) are wider rows,
read as any others: ``--hidden`` is then the encoder's size or the rows' whole width (:data:`JOINED_ROWS_HELP`).
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import fcntl
import io
import json
import multiprocessing
import os
import signal
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import RepeatedStratifiedKFold
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from gcc_sgcl.cli import PlainHelpParser
from gcc_sgcl.config import InputConfig, add_arguments
from gcc_sgcl.engine.threads import processes_line
from gcc_sgcl.fileio import atomic_target, folder_of, sha256_of, write_failure
from gcc_sgcl.tasks.folds import FoldResult, cache_meta, close_cache, held_cache, load_fold, open_cache, save_fold
from gcc_sgcl.tasks.settings import EvalConfig, TaskConfig

RESULTS_FILE = "results.csv"
# The CV fits small dense problems (thousands x 64) where a multi-threaded BLAS gains little; on the shared
# 2-core machine, one one-vs-rest logistic regression fit (4500 x 64, 20 classes) took 3.5 s with 2 OpenBLAS
# threads and 0.7 s with 1.
CV_BLAS_THREADS = 1
JOINED_ROWS_HELP = ("Embeddings written by generate.sh --with-structural (each row joined to the structural vector of "
                    "its node or graph, as the tables' '<method> ⊕ structural' rows) are read as they are; --hidden "
                    "is then the encoder's size (their record says how many structural columns follow) or the rows' "
                    "whole width.")
T = TypeVar("T")
CSV_COLUMNS = (
    "time",
    "task",
    "dataset",
    "metric",
    "mean",
    "std",
    "std_kind",
    "n",
    "n_scores",
    "protocol",
    "seed",
    "load_path",
    "encoder_step",
    "views",
    "joined",
)
EARLIER_CSV_HEADERS = tuple(CSV_COLUMNS[:CSV_COLUMNS.index(first)] for first in ("encoder_step", "views"))
"""The headers of logs written before ``encoder_step``, and before ``views`` and ``joined``, existed: such a log is
rewritten with the columns (empty in its old rows) when a row is next added."""


@dataclass(frozen=True)
class Embeddings:
    """What the record of scored embeddings says of their rows (:func:`checked_embeddings`): the ``step`` of the
    encoder that wrote them, the ``views`` averaged per row and the vector ``joined`` to them (``"structural"`` for
    rows of ``generate --with-structural``, else None). Each is None when unknown (no record)."""

    step: int | None = None
    views: int | None = None
    joined: str | None = None

    def described(self) -> list[str]:
        """What the rows are, as the printed table says it (nothing for rows without a record).

        >>> Embeddings(6000, 2, "structural").described()
        ['2 views per row', '⊕ structural']
        """
        return ([f"{self.views} views per row"] if self.views is not None else []) + (
            [f"⊕ {self.joined}"] if self.joined else [])


@dataclass(frozen=True)
class TaskResult:
    """One metric of one task on one dataset.

    ``scores`` are the per-repetition scores (classification: the mean over the folds of one repetition of
    the CV, see :func:`cross_validated`) or per-query-pair hits (similarity search); ``mean`` is their mean
    and ``std_kind`` says what ``std`` is (it is not always the std of ``scores``). ``n`` is the number of
    evaluated examples (nodes, graphs or query pairs). ``correct`` (classification only) is the
    ``(repeats, n)`` boolean out-of-fold record: whether example ``i``'s prediction in repetition ``r`` (made
    when ``i`` was in the test fold, before any bootstrap) was right; it is not written to the CSV.
    ``resumed_seconds`` estimates the time an interrupted earlier run spent on the folds this one read back.
    ``encoder_step``, ``views`` and ``joined`` say what the scored embeddings' record says of them, when known
    (:class:`Embeddings`, :func:`checked_embeddings`).
    """

    task: str
    dataset: str
    metric: str
    scores: np.ndarray
    mean: float
    std: float
    std_kind: str
    n: int
    protocol: str
    seed: int
    correct: np.ndarray | None = field(default=None, repr=False, compare=False)
    resumed_seconds: float = field(default=0.0, repr=False, compare=False)
    encoder_step: int | None = None
    views: int | None = None
    joined: str | None = None

    def row(self) -> dict[str, object]:
        """The CSV fields this result owns (``time`` and ``load_path`` are added by the writer)."""
        return {
            "task": self.task,
            "dataset": self.dataset,
            "metric": self.metric,
            "mean": f"{self.mean:.6f}",
            "std": f"{self.std:.6f}",
            "std_kind": self.std_kind,
            "n": self.n,
            "n_scores": len(self.scores),
            "protocol": self.protocol,
            "seed": self.seed,
            "encoder_step": "" if self.encoder_step is None else self.encoder_step,
            "views": "" if self.views is None else self.views,
            "joined": self.joined or "",
        }

    def line(self) -> str:
        """One line of the printed table: ``dataset | metric | mean ± std`` in percent, then what the rows are when
        their record says (views per row, the joined vector).

        >>> TaskResult("node_classification", "usa_airport", "micro_f1", np.zeros(1), 0.6687, 0.0087, "std", 1190,
        ...            "p", 0, views=32).line()
        'usa_airport      | micro_f1  |  66.87 ±  0.87   (std; 32 views per row)'
        """
        about = [self.std_kind, *Embeddings(self.encoder_step, self.views, self.joined).described()]
        return (
            f"{self.dataset:<16} | {self.metric:<9} | {100 * self.mean:6.2f} ± {100 * self.std:5.2f}"
            f"   ({'; '.join(about)})"
        )


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
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to report; it ends the pool


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


def forked_map(task: Callable[[int], T], n: int, jobs: int = 1, progress: str | None = None) -> list[T]:
    """``[task(0), ..., task(n - 1)]``, single-threaded BLAS each; with ``jobs > 1`` (``0``: :func:`cv_jobs`) in
    that many forked processes, which inherit ``task``'s data copy-on-write (nothing large is pickled) and return
    only the results (a worker that dies raises ``BrokenProcessPool`` here). Deterministic tasks give the same
    list whatever ``jobs``; without ``fork`` (not Linux) the tasks run here. ``progress``: a progress bar with
    that description, advanced as results arrive in order."""
    jobs = forked_jobs(jobs, n)
    bar = partial(tqdm, total=n, desc=progress, disable=progress is None, leave=False)
    if jobs <= 1:
        with threadpool_limits(limits=CV_BLAS_THREADS, user_api="blas"):
            return [task(i) for i in bar(range(n))]
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_init_worker,
                             initargs=(task,)) as pool:
        futures = [pool.submit(_run_task, i) for i in range(n)]
        try:
            return [future.result() for future in bar(futures)]
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
    seconds over the processes). On a terminal a progress bar counts the folds fitted, named by the dataset.
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
    bar = f"{dataset or task} folds" if sys.stderr.isatty() else None  # folds done / total, on a terminal only
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


def check_embeddings_exist(load_path: str | Path, datasets: Sequence[str]) -> None:
    """A FileNotFoundError naming the first dataset of ``datasets`` without ``<load_path>/<dataset>.npy`` and the
    ``generate.sh`` command that writes it."""
    for name in datasets:
        path = embeddings_path(load_path, name)
        if not path.is_file():
            raise FileNotFoundError(f"embeddings file {path} not found; run "
                                    f"`bash scripts/generate.sh <gpu> {load_path} {name}` first")


def embeddings_path(load_path: str | Path, dataset: str) -> Path:
    """``<load_path>/<dataset>.npy`` (a dataset given by path: ``<load_path>/<stem>.npy``; a checkpoint file as
    ``load_path``: its folder's)."""
    from gcc_sgcl.data import dataset_name

    return folder_of(load_path) / f"{dataset_name(dataset)}.npy"


def ids_path(load_path: str | Path, dataset: str) -> Path:
    """``<load_path>/<stem>.ids.txt``: the original node id of each row of a dataset given by path."""
    return embeddings_path(load_path, dataset).with_suffix(".ids.txt")


def check_ids(load_path: str | Path, dataset: str, ids: np.ndarray | None) -> None:
    """Raise if ``<stem>.ids.txt`` exists and does not list ``ids`` row by row (the embeddings were generated
    from another file of the same name)."""
    path = ids_path(load_path, dataset)
    if ids is None or not path.is_file():
        return
    if path.read_text().splitlines() != [str(i) for i in ids.tolist()]:
        raise ValueError(f"{path} does not list the node ids of {dataset} in order: the embeddings were generated "
                         f"from a different graph; run generate.sh on {dataset} again")


def check_classes(labels: np.ndarray, source: str | Path) -> None:
    """A ValueError naming ``source`` (a labels file, or what the rows are) when the labelled items (label >= 0)
    are of fewer than two classes: every classifier would score 100%.

    >>> check_classes(np.array([3, 3, -1]), "labels.txt")
    Traceback (most recent call last):
    ...
    ValueError: labels.txt: all 2 labelled items are of one class; classification needs at least two
    """
    labelled = np.asarray(labels)[np.asarray(labels) >= 0]
    if len(np.unique(labelled)) < 2:
        raise ValueError(f"{source}: all {len(labelled)} labelled items are of one class; classification needs at "
                         f"least two")


def labelled_rows(emb: np.ndarray, labels: np.ndarray, rows_are: str) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``emb`` and ``labels`` whose label is not ``-1`` (unlabelled); prints how many there are
    when some are not. ``rows_are`` names the rows (``"nodes of cora"``). Fewer than two classes among them is a
    ValueError (it would score 100%)."""
    labelled = np.asarray(labels) >= 0
    if not labelled.any():
        raise ValueError(f"none of the {len(labelled)} {rows_are} is labelled; give a labels file with --labels")
    check_classes(labels, rows_are)
    if not labelled.all():
        print(f"{rows_are}: evaluating the {int(labelled.sum())} labelled of {len(labelled)}", flush=True)
    return emb[labelled], np.asarray(labels)[labelled]


def load_embeddings(load_path: str | Path, dataset: str, hidden: int) -> np.ndarray:
    """Load ``<load_path>/<dataset>.npy`` and check it is a matrix of ``hidden`` finite columns (for rows joined to
    the structural vector, :func:`encoder_columns`: ``hidden`` of the encoder, and the structural columns).

    Called before the dataset is loaded, so that a missing or wrong file fails fast.
    """
    path = embeddings_path(load_path, dataset)
    check_embeddings_exist(load_path, [dataset])
    try:
        emb = np.load(path)
    except (ValueError, OSError, EOFError) as error:  # not an .npy, truncated, or object arrays
        raise ValueError(f"{path}: not a readable .npy array ({error}); generate it again") from None
    if emb.ndim != 2:
        raise ValueError(f"{path}: expected a 2-D (rows, hidden) array, got shape {emb.shape}")
    encoder = encoder_columns(path)
    if hidden not in (emb.shape[1], encoder):
        parts = (f" ({encoder} of the encoder joined to {emb.shape[1] - encoder} structural, generate "
                 "--with-structural)") if encoder is not None else ""
        raise ValueError(f"{path} has hidden size {emb.shape[1]}{parts} but --hidden is {hidden}")
    bad = int(np.size(emb) - np.count_nonzero(np.isfinite(emb)))
    if bad:
        raise ValueError(f"{path} contains {bad} non-finite values (NaN/inf); the encoder likely diverged")
    return emb


def encoder_columns(emb_path: str | Path) -> int | None:
    """The encoder's columns of embeddings written by ``generate --with-structural`` (their record's ``joined``
    entry; the structural vector's columns follow them); None for rows that are not joined, or without a readable
    record (:func:`check_provenance` says what is wrong with it)."""
    from gcc_sgcl.engine.generate import record_path

    try:
        joined = json.loads(record_path(emb_path).read_text()).get("joined")
        return int(joined["encoder_columns"]) if joined else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def check_rows(emb: np.ndarray, load_path: str | Path, dataset: str, rows: int, rows_are: str) -> None:
    """Raise unless ``emb`` has ``rows`` rows; ``rows_are`` says what they stand for (``"nodes in cora"``)."""
    if emb.shape[0] != rows:
        raise ValueError(
            f"{embeddings_path(load_path, dataset)} has {emb.shape[0]} rows but there are {rows} {rows_are}"
        )


def _header(path: Path) -> list[str] | None:
    """The header of the CSV file ``path``; None when it is absent or empty."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    with path.open(newline="") as f:
        return next(csv.reader(f), [])


def check_results_csv(path: str | Path) -> bool:
    """Whether the ``results.csv`` log ``path`` is new (absent or empty); ``ValueError`` if it exists with another
    header than :data:`CSV_COLUMNS` (or one of :data:`EARLIER_CSV_HEADERS`). The commands check it before evaluating, so a
    foreign file costs no work."""
    path = Path(path)
    header = _header(path)
    if header is None:
        return True
    if tuple(header) not in (CSV_COLUMNS, *EARLIER_CSV_HEADERS):
        raise ValueError(f"{path} exists with header {header}, expected {list(CSV_COLUMNS)}; move it away to start a "
                         f"new log")
    return False


class DamagedLogWarning(UserWarning):
    """A ``results.csv`` holds a line no CSV reader reads as a row; the message names the file and the line."""


def append_results_csv(path: str | Path, results: Sequence[TaskResult], load_path: str | Path) -> None:
    """Append one row per result to ``path``, writing the header only when the file is new or empty.

    An existing file with a different header is left untouched and reported (:func:`check_results_csv`), rather
    than mixed; one of :data:`EARLIER_CSV_HEADERS` is first rewritten with the columns it lacks (through a temporary
    file). The rows are added in one write, and a failed one (a full disk) is cut off again: a
    :class:`~gcc_sgcl.fileio.WriteError` naming ``path`` leaves the log as it was. Processes appending to one log
    take turns (:func:`results_lock`), so none writes a second header or appends to a file being replaced; a
    damaged line is reported (:func:`damaged_tail`) and the new rows are made to start a row of their own.
    """
    path = Path(path)
    now = datetime.now().isoformat(timespec="seconds")
    with results_lock(path):
        if not check_results_csv(path) and tuple(_header(path)) in EARLIER_CSV_HEADERS:
            _add_new_columns(path)
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=CSV_COLUMNS)
        if _header(path) is None:
            writer.writeheader()
        else:
            text.write(damaged_tail(path))
        for result in results:
            writer.writerow({"time": now, **result.row(), "load_path": str(load_path)})
        _append(path, text.getvalue().encode())


@contextmanager
def results_lock(path: Path) -> Iterator[None]:
    """Hold the exclusive ``flock`` of the log ``path`` for the block, waiting for it: a side file
    ``.<name>.lock`` beside it, since the log itself may be replaced while it is held (the header migration). The
    file is left in place (removing it would let two processes lock two files)."""
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def damaged_tail(path: Path) -> str:
    """What must precede new rows appended to the log ``path`` for them to read as rows: ``""`` for a sound log;
    else a :class:`DamagedLogWarning` names the first damaged line (a row of another width, an unterminated quote,
    no final line break) and the text returned closes an open quote and ends the last line."""
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        text = f.read()
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    damage, width, start, open_quote = None, None, 1, False
    try:
        for record in reader:
            width = len(record) if width is None else width
            if damage is None and len(record) != width:
                damage = (start, f"{len(record)} fields where the header has {width}")
            start = reader.line_num + 1
    except csv.Error as error:
        open_quote = "unexpected end of data" in str(error)
        damage = damage or (start, "an unterminated quote" if open_quote else str(error))
    if damage is None and text.endswith("\n"):
        return ""
    line, what = damage or (text.count("\n") + 1, "no line break at its end")
    warnings.warn(f"{path} line {line}: damaged ({what}), it does not read as a row of the log; the new rows start "
                  f"on a line of their own: fix or remove line {line}", DamagedLogWarning, stacklevel=3)
    return ('"' if open_quote else "") + ("" if text.endswith("\n") and not open_quote else "\n")


def _append(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` (created if absent); a failed write is cut off again, so a full disk leaves no
    half row, and raised as a :class:`~gcc_sgcl.fileio.WriteError` naming ``path``."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        rest = memoryview(data)
        try:
            while rest:
                rest = rest[os.write(fd, rest):]
        except OSError as error:
            os.ftruncate(fd, size)
            failure = write_failure(path, error)
            if failure is None:
                raise
            raise failure from None
    finally:
        os.close(fd)


def _add_new_columns(path: Path) -> None:
    """Rewrite the log ``path`` of one of :data:`EARLIER_CSV_HEADERS` with the columns of :data:`CSV_COLUMNS` (the new
    ones empty), atomically."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    with atomic_target(path) as tmp, tmp.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, restval="")
        writer.writeheader()
        writer.writerows(rows)


def check_provenance(load_path: str | Path, dataset: str, graphs: Sequence[Any]) -> dict | None:
    """Check the embeddings of ``dataset`` against their record (``<stem>.provenance.json``, written by
    ``generate``) and the ``graphs`` being evaluated; returns the record (its ``encoder`` entry: ``step``, ``steps``,
    ``finished``, ``sha256``; ``views``; ``joined``), or None when there is no record (embeddings of older code or of
    a classical baseline: nothing to check).

    Refused (a ValueError naming the file and what differs): a damaged record, a ``.npy`` that is not the file the
    record describes, embeddings of a file given by path evaluated as a registered dataset of the same name (or the
    reverse), and embeddings of other graphs (another digest: an edited file, another data root). Embeddings of an
    unfinished run are scored, with a one-line :class:`~gcc_sgcl.engine.generate.UnfinishedRunWarning`: scoring an
    encoder part-way through its training is a legitimate use (a learning curve), so it is said, not refused.
    """
    from gcc_sgcl.data import is_dataset_path
    from gcc_sgcl.data.graphs import graphs_digest
    from gcc_sgcl.engine.generate import RECORD_FORMAT, UnfinishedRunWarning, record_path

    emb_path = embeddings_path(load_path, dataset)
    path = record_path(emb_path)
    if not path.is_file():
        return None
    record = _read_record(path, RECORD_FORMAT)
    encoder, source = record["encoder"], record["dataset"]
    if record["embeddings"].get("sha256") != sha256_of(emb_path):
        raise ValueError(f"{emb_path} is not the file its record {path.name} describes (written since, without a "
                         f"record?); run generate.sh on {dataset} again")
    if is_dataset_path(dataset) and source["source"] != "path":
        raise ValueError(f"{emb_path} holds the registered dataset {source.get('name')!r}, not the file {dataset}; "
                         f"run generate.sh on the file, or evaluate {source.get('name')!r}")
    if not is_dataset_path(dataset) and source["source"] != "registered":
        raise ValueError(f"{emb_path} was generated from the file {source.get('path')}, not from the registered dataset "
                         f"{dataset!r}; evaluate it by that path, or run generate.sh on {dataset}")
    if source["graphs_sha256"] != graphs_digest(list(graphs)):
        raise ValueError(f"{emb_path} was generated from other graphs than those of {dataset} (its record "
                         f"{path.name} has another digest: an edited file, or another data root); run generate.sh "
                         f"on {dataset} again")
    if not encoder["finished"]:
        warnings.warn(f"{emb_path}: embeddings of an unfinished run (its encoder at step {encoder['step']} of "
                      f"{encoder['steps']}); the scores are of that step", UnfinishedRunWarning, stacklevel=2)
    return record


_RECORD_FIELDS = (("embeddings", "sha256"), ("encoder", "sha256"), ("encoder", "step"), ("encoder", "steps"),
                  ("encoder", "finished"), ("dataset", "source"), ("dataset", "graphs_sha256"))
"""The fields of an embeddings record (``generate``'s ``embeddings_record``) that :func:`check_provenance` reads."""


def _read_record(path: Path, expected_format: int) -> dict:
    """The embeddings record ``path``, checked to hold the fields :func:`check_provenance` reads."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable embeddings record ({error}); run generate.sh again") from None
    missing = next((f"{group}.{key}" for group, key in _RECORD_FIELDS
                    if not isinstance(record, dict) or not isinstance(record.get(group), dict)
                    or key not in record[group]), None)
    if missing is not None:
        raise ValueError(f"{path}: not an embeddings record of this code (no {missing}); run generate.sh again")
    if record.get("format") != expected_format:
        raise ValueError(f"{path}: record format {record.get('format')!r}, this code reads {expected_format}; run "
                         f"generate.sh again")
    return record


def checked_embeddings(load_path: str | Path, evaluated: Sequence[tuple[str, Sequence[Any]]]) -> Embeddings:
    """:func:`check_provenance` of each ``(dataset, graphs)`` evaluated together (one dataset, or the two graphs of
    a similarity search by path), and what their records say of the rows (:class:`Embeddings`; all None when no file
    has a record). Files that cannot be scored together are refused (a ValueError naming them): a file with a record
    beside one without, rows of different checkpoints, or of different views per row or joined vectors."""
    from gcc_sgcl.engine.generate import record_path

    records = [(name, check_provenance(load_path, name, graphs)) for name, graphs in evaluated]
    files = " and ".join(str(embeddings_path(load_path, name)) for name, _ in evaluated)
    lacking = [str(record_path(embeddings_path(load_path, name))) for name, r in records if r is None]
    if lacking and len(lacking) < len(records):
        raise ValueError(f"{files}: {' and '.join(lacking)} is missing (rows of older code or of a baseline beside "
                         f"rows of generate.sh); run generate.sh on them with one encoder")
    records = [(name, r) for name, r in records if r is not None]
    steps = {r["encoder"]["sha256"]: r["encoder"]["step"] for _, r in records}
    if len(steps) > 1:
        raise ValueError(f"{files} come from different checkpoints (steps {', '.join(map(str, steps.values()))}); "
                         f"run generate.sh on them with one encoder")
    found = {_rows_of(r) for _, r in records}
    if len(found) > 1:
        said = " and ".join(f"{name}: {'; '.join(Embeddings(None, *_rows_of(r)).described())}" for name, r in records)
        raise ValueError(f"{files} hold different rows ({said}); run generate.sh on them with the same --copies "
                         f"and --with-structural")
    views, joined = next(iter(found), (None, None))
    return Embeddings(next(iter(steps.values()), None), views, joined)


def _rows_of(record: dict) -> tuple[int | None, str | None]:
    """The views per row and the joined vector an embeddings record names (None for a record without them, or with
    a value of another type: a hand-edited record is not trusted)."""
    views = record.get("views") if isinstance(record.get("views"), dict) else {}
    joined = record.get("joined") if isinstance(record.get("joined"), dict) else {}
    copies, vector = views.get("copies"), joined.get("vector")
    return (copies if isinstance(copies, int) and not isinstance(copies, bool) else None,
            vector if isinstance(vector, str) else None)


def with_embeddings(results: list[TaskResult], embeddings: Embeddings) -> list[TaskResult]:
    """``results`` recording what the scored rows are (their ``results.csv`` rows' ``encoder_step``, ``views``,
    ``joined``)."""
    return [dataclasses.replace(result, encoder_step=embeddings.step, views=embeddings.views, joined=embeddings.joined)
            for result in results]


def task_parser(task: str, description: str, fields: Sequence[str], evaluation: Sequence[str],
                choices: dict[str, Iterable[str]] | None = None) -> argparse.ArgumentParser:
    """A task's command line: GCC's ``<load_path> <hidden> <datasets...>`` and the data root
    (:class:`~gcc_sgcl.config.InputConfig`, :class:`~gcc_sgcl.tasks.settings.TaskConfig`), the task's ``fields`` of
    ``TaskConfig`` and its ``evaluation`` settings (:class:`~gcc_sgcl.tasks.settings.EvalConfig`, valid values
    ``choices``)."""
    parser = PlainHelpParser(prog=f"python -m gcc_sgcl.tasks.{task}", description=description,
                                     epilog=JOINED_ROWS_HELP)
    add_arguments(parser, InputConfig, only=("load_path", "dataset", "data_dir"), required=("load_path", "dataset"))
    add_arguments(parser, TaskConfig, only=("hidden", *fields))
    add_arguments(parser, EvalConfig, only=evaluation, choices=choices)
    return parser


def labels_by_dataset(parser: argparse.ArgumentParser, datasets: Sequence[str], labels: Sequence[str]) -> dict:
    """``{dataset: {"labels": file}}`` pairing the ``--labels`` files with the datasets given by path in order
    (a parser error if the counts differ); keyword arguments for the loader."""
    from gcc_sgcl.data import is_dataset_path

    paths = [d for d in datasets if is_dataset_path(d)]
    if labels and len(labels) != len(paths):
        parser.error(f"--labels gives {len(labels)} file(s) for {len(paths)} dataset(s) given by path")
    return {d: {"labels": f} for d, f in zip(paths, labels)}


def run_datasets(
    task: str,
    load_path: str | Path,
    datasets: Sequence[str | tuple[str, str]],
    evaluate: Callable[[str | tuple[str, str]], list[TaskResult]],
    kinds: Sequence[str] = (),
    jobs: int | None = None,
) -> list[TaskResult]:
    """Evaluate each dataset, print a table line per metric as it finishes and log it to ``results.csv``. Checked
    first: the ``results.csv`` header (:func:`check_results_csv`), given ``kinds``, that each dataset is a
    registered one of those kinds or a path (:func:`~gcc_sgcl.data.check_dataset_names`), and that each
    embeddings file exists, so nothing is printed before an input error. ``jobs`` (the ``--jobs`` flag) puts the
    fold processes in the header line."""
    if kinds:
        from gcc_sgcl.data import check_dataset_names

        check_dataset_names([n for d in datasets for n in (d if isinstance(d, tuple) else (d,))], kinds, "--dataset")
    check_results_csv(folder_of(load_path) / RESULTS_FILE)
    check_embeddings_exist(load_path, [n for d in datasets for n in (d if isinstance(d, tuple) else (d,))])
    threads = "" if jobs is None else "  " + processes_line(cv_jobs(jobs), jobs)
    print(f"{task}  load_path={load_path}{threads}")
    print(f"{'dataset':<16} | {'metric':<9} | mean ± std (%)")
    everything: list[TaskResult] = []
    for name in datasets:
        results = evaluate(name)
        for result in results:
            print(result.line(), flush=True)
        append_results_csv(folder_of(load_path) / RESULTS_FILE, results, load_path)
        everything.extend(results)
    return everything
