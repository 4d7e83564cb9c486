"""Graph classification on frozen embeddings: SVC, stratified 10-fold CV, accuracy (GCC's ``svc_classify``).

    python -m gcc_sgcl.tasks.graph_classification --load-path saved/run --hidden 64 --dataset imdb-binary
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from gcc_sgcl.tasks.common import (
    TaskResult,
    base_parser,
    check_rows,
    class_labels,
    cross_validated,
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
) -> TaskResult:
    """Accuracy of an RBF SVC over ``StratifiedKFold(folds, shuffle=True, seed)``.

    With ``search`` the SVC's C is picked from ``C_GRID`` by a 5-fold grid search inside each training
    fold only (the test fold never informs C); otherwise C=1. ``std`` is the population std over folds.

    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> x = rng.normal(size=(100, 4)) + 10 * y[:, None]
    >>> evaluate_graph_classification(x, y, folds=5, search=False).mean
    1.0
    """
    if search:
        estimator = GridSearchCV(SVC(random_state=seed), {"C": list(C_GRID)}, cv=INNER_FOLDS, scoring="accuracy")
    else:
        estimator = SVC(C=1.0, random_state=seed)
    c_choice = f"C by {INNER_FOLDS}-fold grid search in each training fold" if search else "C=1"
    protocol = f"rbf SVC {c_choice}, stratified {folds}-fold CV"
    return cross_validated(TASK, dataset, "accuracy", estimator, "accuracy", np.asarray(emb), class_labels(labels),
                           folds, seed, protocol)


def main(argv: Sequence[str] | None = None, loader: Callable | None = None) -> list[TaskResult]:
    """CLI: evaluate ``<load_path>/<dataset>.npy`` for each dataset; ``loader`` defaults to the data layer's
    ``load_graph_dataset(name, data_dir)`` (returns an object with ``.graphs`` and ``.labels``)."""
    parser = base_parser(TASK, "Graph classification on saved embeddings (SVC, accuracy).")
    parser.add_argument("--folds", type=int, default=10, help="number of stratified CV folds")
    parser.add_argument(
        "--no-search", dest="search", action="store_false", help="use C=1 instead of a grid search over C"
    )
    args = parser.parse_args(argv)
    if loader is None:
        from gcc_sgcl.data import load_graph_dataset as loader

    def evaluate(name: str) -> list[TaskResult]:
        emb = load_embeddings(args.load_path, name, args.hidden)
        data = loader(name, data_dir=args.data_dir)
        check_rows(emb, args.load_path, name, len(data.graphs), f"graphs in {name}")
        return [
            evaluate_graph_classification(
                emb, data.labels, folds=args.folds, seed=args.seed, search=args.search, dataset=name
            )
        ]

    return run_datasets(TASK, args.load_path, args.dataset, evaluate)


if __name__ == "__main__":
    main()
