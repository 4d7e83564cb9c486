"""Graph classification on frozen embeddings: SVC, accuracy (GCC's ``svc_classify``), under the paper's
protocol of repeated stratified k-fold CV with bootstrapped test folds (``common.cross_validated``).

    python -m gcc_sgcl.tasks.graph_classification --load-path saved/run --hidden 64 --dataset imdb-binary
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from gcc_sgcl.cli import user_errors
from gcc_sgcl.tasks.common import (
    TaskResult,
    add_cv_arguments,
    add_labels_argument,
    base_parser,
    check_rows,
    class_labels,
    cross_validated,
    labelled_rows,
    labels_by_dataset,
    load_embeddings,
    run_datasets,
)

TASK = "graph_classification"
C_GRID = (0.001, 0.01, 0.1, 1, 10, 100, 1000)
INNER_FOLDS = 5


def evaluate_graph_classification(
    emb: np.ndarray,
    labels: np.ndarray,
    folds: int = 10,
    seed: int = 0,
    search: bool = True,
    dataset: str = "",
    repeats: int = 10,
    bootstrap: bool = True,
) -> TaskResult:
    """Accuracy of an RBF SVC, ``repeats`` x stratified ``folds``-fold CV with bootstrapped test folds (see
    ``common.cross_validated``; ``scores`` holds one value per repetition).

    With ``search`` the SVC's C is picked from ``C_GRID`` by a grid search over a shuffled stratified
    5-fold split (seeded by ``seed``) of each training fold only, so the test fold never informs C;
    otherwise C=1.

    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> x = rng.normal(size=(100, 4)) + 10 * y[:, None]
    >>> result = evaluate_graph_classification(x, y, folds=5, search=False, repeats=3)
    >>> result.mean, result.scores.shape
    (1.0, (3,))
    """
    if search:
        inner = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=seed)
        estimator = GridSearchCV(SVC(), {"C": list(C_GRID)}, cv=inner, scoring="accuracy")
        model = f"rbf SVC, C by {INNER_FOLDS}-fold grid search in each training fold"
    else:
        estimator = SVC(C=1.0)
        model = "rbf SVC C=1"
    return cross_validated(
        TASK, dataset, "accuracy", estimator, accuracy_score, np.asarray(emb), class_labels(labels), model,
        folds=folds, repeats=repeats, bootstrap=bootstrap, seed=seed,
    )


def main(argv: Sequence[str] | None = None, loader: Callable | None = None) -> list[TaskResult]:
    """CLI: evaluate ``<load_path>/<dataset>.npy`` for each dataset; ``loader`` defaults to the data layer's
    ``load_graph_dataset(name, data_dir[, labels])`` (returns an object with ``.name``, ``.graphs`` and
    ``.labels``, ``-1`` for unlabelled graphs, which are not evaluated)."""
    parser = base_parser(TASK, "Graph classification on saved embeddings (SVC, accuracy).")
    add_cv_arguments(parser)
    add_labels_argument(parser, "graph_index label")
    parser.add_argument(
        "--no-search", dest="search", action="store_false", help="use C=1 instead of a grid search over C"
    )
    args = parser.parse_args(argv)
    labels = labels_by_dataset(parser, args.dataset, args.labels)
    if loader is None:
        from gcc_sgcl.data import load_graph_dataset as loader

    def evaluate(name: str) -> list[TaskResult]:
        emb = load_embeddings(args.load_path, name, args.hidden)
        data = loader(name, data_dir=args.data_dir, **labels.get(name, {}))
        check_rows(emb, args.load_path, name, len(data.graphs), f"graphs in {name}")
        emb, y = labelled_rows(emb, data.labels, f"graphs of {data.name}")
        return [
            evaluate_graph_classification(
                emb, y, folds=args.folds, seed=args.seed, search=args.search, dataset=data.name,
                repeats=args.repeats, bootstrap=args.bootstrap,
            )
        ]

    with user_errors():
        return run_datasets(TASK, args.load_path, args.dataset, evaluate)


if __name__ == "__main__":
    main()
