"""Graph classification on frozen embeddings: RBF SVC, accuracy (GCC's ``svc_classify``), under the paper's
protocol of repeated stratified k-fold CV with bootstrapped test folds (``cv.cross_validated``).

    python -m gcc_sgcl.tasks.graph_classification --load-path saved/run --hidden 64 --dataset imdb-binary
"""
from __future__ import annotations

import argparse

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from sklearn.metrics import accuracy_score
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from gcc_sgcl.registry import Registry
from gcc_sgcl.tasks.commands import classification_main, task_parser
from gcc_sgcl.tasks.cv import FitPredict, check_features, class_labels, cross_validated
from gcc_sgcl.tasks.embeddings import labelled_rows
from gcc_sgcl.tasks.folds import cache_folder
from gcc_sgcl.tasks.records import TaskResult
from gcc_sgcl.tasks.settings import EvalConfig

TASK = "graph_classification"
C_GRID = (0.001, 0.01, 0.1, 1, 10, 100, 1000)
INNER_FOLDS = 5


@dataclass(frozen=True)
class SVCProtocol:
    """An RBF SVC: ``C`` (``None``: picked from :data:`C_GRID` by an inner grid search in each training fold)
    and the kernel width, ``"auto"`` = 1 / n_features or ``"scale"`` = 1 / (n_features · var(training X)), the
    meanings scikit-learn gives them."""

    C: float | None
    gamma: str
    description: str


SVC_PROTOCOLS: Registry[SVCProtocol] = Registry("SVC protocol", {
    # GCC's svc_classify: SVC(C=100000) with scikit-learn's default gamma, 'auto' up to 0.21 (assumed here: GCC's
    # requirements name scikit-learn>=0.20.3) and 'scale' from 0.22 on ("gcc-scale", for a sensitivity check)
    "gcc": SVCProtocol(100000.0, "auto", "rbf SVC C=100000, gamma=1/n_features (GCC)"),
    "gcc-scale": SVCProtocol(100000.0, "scale", "rbf SVC C=100000, gamma=scale (GCC's SVC under scikit-learn >= 0.22)"),
    "grid": SVCProtocol(None, "scale", f"rbf SVC gamma=scale, C by {INNER_FOLDS}-fold grid search in each "
                                       f"training fold"),
    "c1": SVCProtocol(1.0, "scale", "rbf SVC C=1, gamma=scale"),
})


def svc_fit_predict(emb: np.ndarray, labels: np.ndarray, svc: str = "gcc", seed: int = 0) -> FitPredict:
    """A :data:`~gcc_sgcl.tasks.cv.FitPredict` of the RBF SVC protocol ``svc`` (:data:`SVC_PROTOCOLS`).

    The squared distances between all examples are computed once; each call builds the fold's RBF Gram
    matrix from them once and fits ``SVC(kernel="precomputed")``, so a C grid search reuses it for every C
    (its inner ``INNER_FOLDS``-fold split is shuffled by ``seed``; gamma is the outer training fold's).
    Predictions equal those of ``SVC(kernel="rbf", gamma=..., C=...)`` on the raw features.
    """
    protocol = SVC_PROTOCOLS[svc]
    x = np.asarray(emb, dtype=np.float64)
    check_features(x, labels)
    squared = euclidean_distances(x, squared=True)

    def fit_predict(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        gamma = 1.0 / x.shape[1] if protocol.gamma == "auto" else 1.0 / (x.shape[1] * x[train].var())
        gram = np.exp(-gamma * squared[:, train])
        if protocol.C is None:
            inner = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=seed)
            model = GridSearchCV(SVC(kernel="precomputed"), {"C": list(C_GRID)}, cv=inner, scoring="accuracy")
        else:
            model = SVC(kernel="precomputed", C=protocol.C)
        return model.fit(gram[train], labels[train]).predict(gram[test])

    return fit_predict


def evaluate_graph_classification(
    emb: np.ndarray,
    labels: np.ndarray,
    folds: int = 10,
    seed: int = 0,
    svc: str = "gcc",
    dataset: str = "",
    repeats: int = 10,
    bootstrap: bool = True,
    jobs: int = 1,
    cache: str | Path | None = None,
) -> TaskResult:
    """Accuracy of an RBF SVC (protocol ``svc`` of :data:`SVC_PROTOCOLS`, default GCC's C=100000 and gamma =
    1 / n_features), ``repeats`` x stratified ``folds``-fold CV with bootstrapped test folds (see
    ``cv.cross_validated``; ``scores`` holds one value per repetition). With a ``cache`` folder the
    fold predictions are kept there until every fold is in, so a killed evaluation resumes at its missing folds.

    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> x = rng.normal(size=(100, 4)) + 10 * y[:, None]
    >>> result = evaluate_graph_classification(x, y, folds=5, repeats=3)
    >>> result.mean, result.scores.shape
    (1.0, (3,))
    """
    labels = class_labels(labels)
    return cross_validated(
        TASK, dataset, "accuracy", svc_fit_predict(emb, labels, svc, seed), accuracy_score, labels,
        SVC_PROTOCOLS[svc].description, folds=folds, repeats=repeats, bootstrap=bootstrap, seed=seed, jobs=jobs,
        cache=cache, features=emb,
    )


def graph_classification_under(emb: np.ndarray, labels: np.ndarray, dataset: str, p: EvalConfig) -> TaskResult:
    """:func:`evaluate_graph_classification` of ``dataset``'s labelled graphs (a ``-1`` label is unlabelled, see
    :func:`~gcc_sgcl.tasks.embeddings.labelled_rows`) under the protocol ``p``, its folds cached in the dataset's
    sub-folder of ``p.fold_cache``."""
    emb, labels = labelled_rows(emb, labels, f"graphs of {dataset}")
    return evaluate_graph_classification(emb, labels, folds=p.folds, seed=p.seed, svc=p.svc, dataset=dataset,
                                         repeats=p.repeats, bootstrap=p.bootstrap, jobs=p.jobs,
                                         cache=cache_folder(p.fold_cache, dataset))


def command_line() -> argparse.ArgumentParser:
    """The command line (:func:`~gcc_sgcl.tasks.commands.task_parser`)."""
    return task_parser(TASK, "Graph classification on saved embeddings (SVC, accuracy).", ("labels",),
                       ("folds", "repeats", "bootstrap", "seed", "svc", "jobs", "fold_cache"),
                       {"svc": SVC_PROTOCOLS})


def main(argv: Sequence[str] | None = None, loader: Callable | None = None) -> list[TaskResult]:
    """CLI: evaluate ``<load_path>/<dataset>.npy`` for each dataset
    (:func:`~gcc_sgcl.tasks.commands.classification_main`); ``loader`` defaults to the data layer's
    ``load_graph_dataset(name, data_dir[, labels])`` (returns an object with ``.name``, ``.graphs`` and ``.labels``,
    ``-1`` for unlabelled graphs, which are not evaluated)."""
    return classification_main(command_line(), TASK, "graph", graph_classification_under, argv, loader)

if __name__ == "__main__":
    main()
