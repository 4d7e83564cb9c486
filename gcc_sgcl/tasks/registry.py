"""The downstream task of each embedded dataset kind (:data:`gcc_sgcl.data.kinds.KINDS`), as a registry:
node → node classification, graph → graph classification, similarity → top-k similarity search.

``TASKS[kind].evaluate(emb, data, name, protocol)`` scores an embedding laid out as the kind says (one row per
node of the kind's graphs, or per graph) against the loaded dataset ``data`` called ``name``; ``finetuned`` /
``finetuned_metric`` name the rows of fine-tuning on the kind's labels (:mod:`gcc_sgcl.tasks.finetune`) and
``finetuned_score`` scores them (``None`` for kinds without labels; :data:`FINETUNED_KINDS` are those with them).

>>> sorted(TASKS), TASKS["graph"].name, TASKS["similarity"].finetuned, FINETUNED_KINDS
(['graph', 'node', 'similarity'], 'graph_classification', None, ('node', 'graph'))

One name, one idea at 3 layers: :mod:`gcc_sgcl.registry` (the registry type), :mod:`gcc_sgcl.data.registry` (the
datasets'), :mod:`gcc_sgcl.tasks.registry` (the tasks').
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sklearn.metrics import accuracy_score

from gcc_sgcl.registry import Registry
from gcc_sgcl.tasks.graph_classification import graph_classification_under
from gcc_sgcl.tasks.node_classification import micro_f1, node_classification_under
from gcc_sgcl.tasks.records import TaskResult
from gcc_sgcl.tasks.settings import EvalConfig
from gcc_sgcl.tasks.similarity_search import evaluate_similarity_search


@dataclass(frozen=True)
class Task:
    """The evaluation of one dataset kind: ``name`` and ``metrics`` as in the result rows, ``evaluate(emb,
    data, dataset_name, protocol) -> results`` (one per metric), and the fine-tuning task's name, metric and scorer
    ``(y_true, y_pred) -> score`` (or ``None``)."""

    name: str
    metrics: tuple[str, ...]
    evaluate: Callable[[np.ndarray, Any, str, EvalConfig], list[TaskResult]]
    finetuned: str | None = None
    finetuned_metric: str | None = None
    finetuned_score: Callable[[np.ndarray, np.ndarray], float] | None = None


def _node(emb: np.ndarray, data: Any, name: str, p: EvalConfig) -> list[TaskResult]:
    return [node_classification_under(emb, data.labels, name, p)]


def _graph(emb: np.ndarray, data: Any, name: str, p: EvalConfig) -> list[TaskResult]:
    return [graph_classification_under(emb, data.labels, name, p)]


def _similarity(emb: np.ndarray, data: Any, name: str, p: EvalConfig) -> list[TaskResult]:
    n1 = data.graph_1.num_nodes()
    return evaluate_similarity_search(emb[:n1], emb[n1:], data.pairs, seed=p.seed, dataset=name)


_BY_KIND = {
    "node": Task("node_classification", ("micro_f1",), _node, "node_classification_finetuned", "micro_f1", micro_f1),
    "graph": Task("graph_classification", ("accuracy",), _graph, "graph_classification_finetuned", "accuracy",
                  accuracy_score),
    "similarity": Task("similarity_search", ("hits@20", "hits@40"), _similarity),
}
TASKS: Registry[Task] = Registry("task of dataset kind", _BY_KIND)
FINETUNED_KINDS = tuple(kind for kind, task in _BY_KIND.items() if task.finetuned)
"""The dataset kinds with labels to fine-tune on, in the order messages name them."""
