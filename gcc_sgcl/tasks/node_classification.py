"""Node classification on frozen embeddings: logistic regression, micro-F1 (as GCC), under the paper's
protocol of repeated stratified k-fold CV with bootstrapped test folds (``common.cross_validated``).

    python -m gcc_sgcl.tasks.node_classification --load-path saved/run --hidden 64 --dataset usa_airport
    python -m gcc_sgcl.tasks.node_classification --load-path saved/run --hidden 64 --dataset my.edgelist \
        --labels my_labels.txt
"""
from __future__ import annotations

import argparse

from functools import partial
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.multiclass import OneVsRestClassifier

from gcc_sgcl.cli import user_errors
from gcc_sgcl.config import InputConfig, from_args
from gcc_sgcl.tasks.common import (
    TaskResult,
    check_classes,
    check_ids,
    check_rows,
    checked_embeddings,
    class_labels,
    cross_validated,
    estimator_fit_predict,
    labelled_rows,
    labels_by_dataset,
    load_embeddings,
    run_datasets,
    task_parser,
    with_embeddings,
)
from gcc_sgcl.tasks.folds import cache_folder
from gcc_sgcl.tasks.settings import EvalConfig, TaskConfig

TASK = "node_classification"


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
    bootstrapped test folds (see ``common.cross_validated``; ``scores`` holds one value per repetition). With a
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
        partial(f1_score, average="micro"), labels, f"one-vs-rest logistic regression C={C:g}",
        folds=folds, repeats=repeats, bootstrap=bootstrap, seed=seed, jobs=jobs, cache=cache, features=emb,
    )


def node_classification_under(emb: np.ndarray, labels: np.ndarray, dataset: str, p: EvalConfig) -> TaskResult:
    """:func:`evaluate_node_classification` of ``dataset``'s labelled nodes (a ``-1`` label is unlabelled, see
    :func:`~gcc_sgcl.tasks.common.labelled_rows`) under the protocol ``p``, its folds cached in the dataset's
    sub-folder of ``p.fold_cache``."""
    emb, labels = labelled_rows(emb, labels, f"nodes of {dataset}")
    return evaluate_node_classification(emb, labels, folds=p.folds, seed=p.seed, dataset=dataset, repeats=p.repeats,
                                        bootstrap=p.bootstrap, jobs=p.jobs, cache=cache_folder(p.fold_cache, dataset))


def command_line() -> argparse.ArgumentParser:
    """The command line (:func:`~gcc_sgcl.tasks.common.task_parser`)."""
    return task_parser(TASK, "Node classification on saved embeddings (logistic regression, micro-F1).",
                       ("labels",), ("folds", "repeats", "bootstrap", "seed", "jobs", "fold_cache"))


def main(argv: Sequence[str] | None = None, loader: Callable | None = None) -> list[TaskResult]:
    """CLI: evaluate ``<load_path>/<dataset>.npy`` for each dataset; ``loader`` defaults to the data layer's
    ``load_node_dataset(name, data_dir[, labels])`` (returns an object with ``.name``, ``.graph``, ``.labels``,
    ``-1`` for unlabelled nodes, which are not evaluated, and ``.ids`` or None)."""
    parser = command_line()
    args = parser.parse_args(argv)
    where, task, p = from_args(InputConfig, args), from_args(TaskConfig, args), from_args(EvalConfig, args)
    labels = labels_by_dataset(parser, where.dataset, task.labels)
    kinds = ("node",) if loader is None else ()  # a registered name of another kind is refused before any work
    if loader is None:
        from gcc_sgcl.data import load_node_dataset as loader

    def evaluate(name: str) -> list[TaskResult]:
        emb = load_embeddings(where.load_path, name, task.hidden)
        data = loader(name, data_dir=where.data_dir, **labels.get(name, {}))
        check_classes(data.labels, labels.get(name, {}).get("labels", name))  # a --labels file by its name
        check_rows(emb, where.load_path, name, data.graph.num_nodes(), f"nodes in {name}")
        check_ids(where.load_path, name, getattr(data, "ids", None))
        source = checked_embeddings(where.load_path, [(name, [data.graph])])
        return with_embeddings([node_classification_under(emb, data.labels, data.name, p)], source)

    with user_errors():
        return run_datasets(TASK, where.load_path, where.dataset, evaluate, kinds, p.jobs)


if __name__ == "__main__":
    main()
