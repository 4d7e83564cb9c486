"""How a dataset scores an embedding: the metrics of its kind's task (:data:`gcc_sgcl.tasks.registry.TASKS`) and,
for classification, the accuracy in each λ2 quintile of its examples (the report's λ2 quintiles)."""
from __future__ import annotations

from typing import Any

import numpy as np

from gcc_sgcl.data import dataset_kind
from gcc_sgcl.tasks.records import TaskResult
from gcc_sgcl.tasks.registry import TASKS
from gcc_sgcl.tasks.settings import EvalConfig

QUINTILES = 5


def quintile_scores(lam: np.ndarray, correct: np.ndarray) -> tuple[list[float], list[list[float]]]:
    """Mean out-of-fold correctness in each rank quintile of ``lam`` (ties broken by position) and each
    quintile's λ2 range. ``correct`` is (repetitions, examples)."""
    per_example = np.asarray(correct, dtype=np.float64).mean(axis=0)
    parts = np.array_split(np.argsort(np.nan_to_num(lam, nan=-1.0), kind="stable"), QUINTILES)
    scores = [float(per_example[p].mean()) for p in parts]
    bounds = [[float(np.nanmin(lam[p])), float(np.nanmax(lam[p]))] if np.isfinite(lam[p]).any() else [np.nan] * 2
              for p in parts]
    return scores, bounds


def evaluate_dataset(name: str, data: Any, emb: np.ndarray, lam: np.ndarray | None,
                     protocol: EvalConfig) -> list[tuple[TaskResult, dict[str, Any]]]:
    """The task of dataset ``name`` (loaded as ``data``; :data:`gcc_sgcl.tasks.registry.TASKS`) on ``emb``: each
    metric's result, with the accuracy of each λ2 quintile of the examples for classification (``lam``: the λ2
    of each example's view) as extra row fields."""
    fields = []
    for result in TASKS[dataset_kind(name)].evaluate(emb, data, name, protocol):
        extra: dict[str, Any] = {}
        if result.correct is not None and lam is not None:
            scores, bounds = quintile_scores(lam, result.correct)
            extra = {"lambda2_quintiles": scores, "lambda2_bounds": bounds}
        fields.append((result, extra))
    return fields
