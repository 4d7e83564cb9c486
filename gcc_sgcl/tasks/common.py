"""What the three downstream tasks share: the result record, embedding loading and checks, the CLI loop,
the printed table and the ``results.csv`` log.

Evaluation is decoupled from training through ``<load_path>/<dataset>.npy`` (written by
``bash scripts/generate.sh``): one float row per node (node datasets), per graph (graph datasets), or per
node of graph_1 followed by graph_2 (similarity datasets).
"""
from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.model_selection import StratifiedKFold, cross_val_score

RESULTS_FILE = "results.csv"
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
)


@dataclass(frozen=True)
class TaskResult:
    """One metric of one task on one dataset.

    ``scores`` are the per-fold scores (classification) or per-query-pair hits (similarity search);
    ``mean`` is their mean and ``std_kind`` says what ``std`` is (it is not always the std of ``scores``).
    ``n`` is the number of evaluated examples (nodes, graphs or query pairs).
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
        }

    def line(self) -> str:
        """One line of the printed table: ``dataset | metric | mean ± std`` in percent."""
        return (
            f"{self.dataset:<16} | {self.metric:<9} | {100 * self.mean:6.2f} ± {100 * self.std:5.2f}"
            f"   ({self.std_kind})"
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


def stratified_folds(labels: np.ndarray, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(train, test)`` index pairs of ``StratifiedKFold(folds, shuffle=True, random_state=seed)``."""
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros((len(labels), 1)), labels))


def cross_validated(
    task: str, dataset: str, metric: str, estimator: BaseEstimator, scoring: str,
    emb: np.ndarray, labels: np.ndarray, folds: int, seed: int, protocol: str,
) -> TaskResult:
    """Score ``estimator`` on each fold of :func:`stratified_folds` (``sklearn`` ``cross_val_score``);
    ``std`` is the population std over folds."""
    check_features(emb, labels)
    scores = cross_val_score(estimator, emb, labels, scoring=scoring, cv=stratified_folds(labels, folds, seed))
    return TaskResult(
        task=task,
        dataset=dataset,
        metric=metric,
        scores=scores,
        mean=float(scores.mean()),
        std=float(scores.std()),
        std_kind=f"std over {folds} folds",
        n=len(labels),
        protocol=protocol,
        seed=seed,
    )


def embeddings_path(load_path: str | Path, dataset: str) -> Path:
    """``<load_path>/<dataset>.npy``."""
    return Path(load_path) / f"{dataset}.npy"


def load_embeddings(load_path: str | Path, dataset: str, hidden: int) -> np.ndarray:
    """Load ``<load_path>/<dataset>.npy`` and check it is a matrix of ``hidden`` finite columns.

    Called before the dataset is loaded, so that a missing or wrong file fails fast.
    """
    path = embeddings_path(load_path, dataset)
    if not path.is_file():
        raise FileNotFoundError(
            f"embeddings file {path} not found; run `bash scripts/generate.sh <gpu> {load_path} {dataset}` "
            f"first"
        )
    emb = np.load(path)
    if emb.ndim != 2:
        raise ValueError(f"{path}: expected a 2-D (rows, hidden) array, got shape {emb.shape}")
    if emb.shape[1] != hidden:
        raise ValueError(f"{path} has hidden size {emb.shape[1]} but --hidden is {hidden}")
    bad = int(np.size(emb) - np.count_nonzero(np.isfinite(emb)))
    if bad:
        raise ValueError(f"{path} contains {bad} non-finite values (NaN/inf); the encoder likely diverged")
    return emb


def check_rows(emb: np.ndarray, load_path: str | Path, dataset: str, rows: int, rows_are: str) -> None:
    """Raise unless ``emb`` has ``rows`` rows; ``rows_are`` says what they stand for (``"nodes in cora"``)."""
    if emb.shape[0] != rows:
        raise ValueError(
            f"{embeddings_path(load_path, dataset)} has {emb.shape[0]} rows but there are {rows} {rows_are}"
        )


def append_results_csv(path: str | Path, results: Sequence[TaskResult], load_path: str | Path) -> None:
    """Append one row per result to ``path``, writing the header only when the file is new or empty.

    An existing file with a different header is left untouched and reported, rather than mixed.
    """
    path = Path(path)
    is_new = not path.is_file() or path.stat().st_size == 0
    if not is_new:
        with path.open(newline="") as f:
            header = next(csv.reader(f), [])
        if tuple(header) != CSV_COLUMNS:
            raise ValueError(
                f"{path} exists with header {header}, expected {list(CSV_COLUMNS)}; move it away to start a "
                f"new log"
            )
    now = datetime.now().isoformat(timespec="seconds")
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        if is_new:
            writer.writeheader()
        for result in results:
            writer.writerow({"time": now, **result.row(), "load_path": str(load_path)})


def base_parser(task: str, description: str) -> argparse.ArgumentParser:
    """The arguments every task CLI takes (GCC's ``<load_path> <hidden> <datasets...>`` plus seed/data dir)."""
    parser = argparse.ArgumentParser(prog=f"python -m gcc_sgcl.tasks.{task}", description=description)
    parser.add_argument("--load-path", required=True, help="folder holding <dataset>.npy embeddings")
    parser.add_argument("--hidden", type=int, required=True, help="embedding size (columns of each .npy)")
    parser.add_argument("--dataset", nargs="+", required=True, help="one or more dataset names")
    parser.add_argument(
        "--data-dir", default=None, help="data root (default: let the data layer resolve it, e.g. $GCC_SGCL_DATA)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the CV splits / bootstrap")
    return parser


def run_datasets(
    task: str,
    load_path: str | Path,
    datasets: Sequence[str],
    evaluate: Callable[[str], list[TaskResult]],
) -> list[TaskResult]:
    """Evaluate each dataset, print a table line per metric as it finishes and log it to ``results.csv``."""
    print(f"{task}  load_path={load_path}")
    print(f"{'dataset':<16} | {'metric':<9} | mean ± std (%)")
    everything: list[TaskResult] = []
    for name in datasets:
        results = evaluate(name)
        for result in results:
            print(result.line(), flush=True)
        append_results_csv(Path(load_path) / RESULTS_FILE, results, load_path)
        everything.extend(results)
    return everything
