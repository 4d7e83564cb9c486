"""Dataset kinds — node, graph, similarity, pretrain — as one registry (:data:`KINDS`): what a loaded dataset
holds, how the cache stores it, and how its embedding rows are laid out. Code that treats the kinds
differently looks the kind up here instead of comparing kind strings; the tasks layer adds each kind's
evaluation in :mod:`gcc_sgcl.tasks.registry`.

Embedding layout (``rows``): ``"nodes"`` = one row per node of each of :meth:`DatasetKind.graphs` in order
(node datasets: the graph; similarity datasets: graph_1 then graph_2), ``"graphs"`` = one row per graph,
``""`` = not embedded (pre-training corpora).

>>> KINDS["similarity"].rows, KINDS["graph"].per_graph, KINDS["node"].labelled
('nodes', True, True)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dgl
import numpy as np

from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData, SimilarityPairData
from gcc_sgcl.data.graphs import num_undirected_edges
from gcc_sgcl.registry import Registry

Arrays = dict[str, np.ndarray]


@dataclass(frozen=True)
class DatasetKind:
    """One kind of dataset.

    ``container`` is the loader's result type (``list`` for a pre-training corpus); ``graphs(data)`` and
    ``arrays(data)`` take a loaded dataset apart (graphs in embedding order; labels or pairs) and
    ``build(name, graphs, arrays)`` puts it back together; ``summary(data)`` gives the counts that identify it.
    ``labelled``: its examples carry class labels (classification, fine-tuning).
    """

    name: str
    container: type
    rows: str
    labelled: bool
    graphs: Callable[[Any], list[dgl.DGLGraph]]
    arrays: Callable[[Any], Arrays]
    build: Callable[[str, list[dgl.DGLGraph], Arrays], Any]
    summary: Callable[[Any], dict[str, int]]

    @property
    def per_graph(self) -> bool:
        """Whether an embedding has one row per graph (else one per node, or none)."""
        return self.rows == "graphs"

    @property
    def embedded(self) -> bool:
        """Whether datasets of this kind are embedded and evaluated (pre-training corpora are not)."""
        return bool(self.rows)


def _counts(graphs: list[dgl.DGLGraph]) -> dict[str, int]:
    return {"num_nodes": sum(g.num_nodes() for g in graphs), "num_edges": sum(num_undirected_edges(g) for g in graphs)}


def _classes(labels: np.ndarray) -> int:
    return int(np.unique(labels[labels >= 0]).size)  # -1 marks an unlabelled example


KINDS: Registry[DatasetKind] = Registry("dataset kind", {
    kind.name: kind for kind in (
        DatasetKind(
            "node", NodeLabelData, "nodes", True, lambda d: [d.graph], lambda d: {"labels": d.labels},
            lambda name, g, a: NodeLabelData(name, g[0], a["labels"]),
            lambda d: {**_counts([d.graph]), "num_classes": _classes(d.labels)},
        ),
        DatasetKind(
            "graph", GraphLabelData, "graphs", True, lambda d: d.graphs, lambda d: {"labels": d.labels},
            lambda name, g, a: GraphLabelData(name, g, a["labels"]),
            lambda d: {"num_graphs": len(d.graphs), "num_classes": _classes(d.labels), **_counts(d.graphs)},
        ),
        DatasetKind(
            "similarity", SimilarityPairData, "nodes", False, lambda d: [d.graph_1, d.graph_2],
            lambda d: {"pairs": d.pairs}, lambda name, g, a: SimilarityPairData(name, g[0], g[1], a["pairs"]),
            lambda d: {"num_pairs": len(d.pairs), "num_nodes_1": d.graph_1.num_nodes(),
                       "num_nodes_2": d.graph_2.num_nodes(), "num_edges_1": num_undirected_edges(d.graph_1),
                       "num_edges_2": num_undirected_edges(d.graph_2)},
        ),
        DatasetKind(
            "pretrain", list, "", False, list, lambda d: {}, lambda name, g, a: list(g),
            lambda d: {"num_graphs": len(d), **_counts(list(d))},
        ),
    )
})


def kind_of_data(data: Any) -> DatasetKind:
    """The kind of a loaded dataset, from its type; a plain sequence of graphs is a pre-training corpus."""
    return next((k for k in KINDS.values() if isinstance(data, k.container)), KINDS["pretrain"])
