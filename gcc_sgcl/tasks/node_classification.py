"""Node classification on frozen embeddings: logistic regression, micro-F1 (as GCC), under the paper's
protocol of repeated stratified k-fold CV with bootstrapped test folds (``cv.cross_validated``).

    python -m gcc_sgcl.tasks.node_classification --load-path saved/run --hidden 64 --dataset usa_airport
    python -m gcc_sgcl.tasks.node_classification --load-path saved/run --hidden 64 --dataset my.edgelist \
        --labels my_labels.txt
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.multiclass import OneVsRestClassifier

from gcc_sgcl.tasks.commands import classification_main, task_parser
from gcc_sgcl.tasks.cv import class_labels, cross_validated, estimator_fit_predict
from gcc_sgcl.tasks.embeddings import labelled_rows
from gcc_sgcl.tasks.folds import cache_folder
from gcc_sgcl.tasks.records import TaskResult
from gcc_sgcl.tasks.settings import EvalConfig

TASK = "node_classification"


def micro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Micro-averaged F1 of the predictions ``y_pred`` of ``y_true`` (GCC's metric; accuracy for single-label data).

    >>> float(micro_f1(np.array([0, 1, 1, 2]), np.array([0, 1, 2, 2])))
    0.75
    """
    return f1_score(y_true, y_pred, average="micro")


def evaluate_node_classification(
    emb: np.ndarray,
    labels: np.ndarray,
    folds: int = 10,
    seed: int = 0,
    C: float = 1000.0,
    dataset: str = "",
    repeats: int = 10,
    bootstrap: bool = True,
    jobs: int = 1,
    cache: str | Path | None = None,
) -> TaskResult:
    """Micro-F1 of one-vs-rest logistic regression, ``repeats`` x stratified ``folds``-fold CV with
    bootstrapped test folds (see ``cv.cross_validated``; ``scores`` holds one value per repetition). With a
    ``cache`` folder the fold predictions are kept there until every fold is in (a killed evaluation resumes).

    ``C=1000`` and one-vs-rest follow GCC (its ``TopKRanker`` predicts the top-1 class for single-label
    data, i.e. the argmax of the one-vs-rest scores, so micro-F1 equals accuracy here).

    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> x = rng.normal(size=(100, 4)) + 10 * y[:, None]
    >>> result = evaluate_node_classification(x, y, folds=5, repeats=3)
    >>> result.mean, result.scores.shape, result.correct.shape
    (1.0, (3,), (3, 100))
    """
    estimator = OneVsRestClassifier(LogisticRegression(C=C, max_iter=2000, random_state=seed))
    labels = class_labels(labels)
    return cross_validated(
        TASK, dataset, "micro_f1", estimator_fit_predict(estimator, np.asarray(emb), labels),
        micro_f1, labels, f"one-vs-rest logistic regression C={C:g}",
        folds=folds, repeats=repeats, bootstrap=bootstrap, seed=seed, jobs=jobs, cache=cache, features=emb,
    )


def node_classification_under(emb: np.ndarray, labels: np.ndarray, dataset: str, p: EvalConfig) -> TaskResult:
    """:func:`evaluate_node_classification` of ``dataset``'s labelled nodes (a ``-1`` label is unlabelled, see
    :func:`~gcc_sgcl.tasks.embeddings.labelled_rows`) under the protocol ``p``, its folds cached in the dataset's
    sub-folder of ``p.fold_cache``."""
    emb, labels = labelled_rows(emb, labels, f"nodes of {dataset}")
    return evaluate_node_classification(emb, labels, folds=p.folds, seed=p.seed, dataset=dataset, repeats=p.repeats,
                                        bootstrap=p.bootstrap, jobs=p.jobs, cache=cache_folder(p.fold_cache, dataset))


def command_line() -> argparse.ArgumentParser:
    """The command line (:func:`~gcc_sgcl.tasks.commands.task_parser`)."""
    return task_parser(TASK, "Node classification on saved embeddings (logistic regression, micro-F1).",
                       ("labels",), ("folds", "repeats", "bootstrap", "seed", "jobs", "fold_cache"))


def main(argv: Sequence[str] | None = None, loader: Callable | None = None) -> list[TaskResult]:
    """CLI: evaluate ``<load_path>/<dataset>.npy`` for each dataset
    (:func:`~gcc_sgcl.tasks.commands.classification_main`); ``loader`` defaults to the data layer's
    ``load_node_dataset(name, data_dir[, labels])`` (returns an object with ``.name``, ``.graph``, ``.labels``, ``-1``
    for unlabelled nodes, which are not evaluated, and ``.ids`` or None)."""
    return classification_main(command_line(), TASK, "node", node_classification_under, argv, loader)


if __name__ == "__main__":
    main()
