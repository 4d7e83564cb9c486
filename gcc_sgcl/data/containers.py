"""What the dataset loaders return."""
from __future__ import annotations

from dataclasses import dataclass

import dgl
import numpy as np


@dataclass
class NodeLabelData:
    """One graph with an int64 class label per node (``labels[i]`` is the class of node ``i``, ``-1`` for an
    unlabelled node of a dataset given by path). ``ids[i]`` is node ``i``'s id in the source file (int64 or
    str), for datasets given by path; ``None`` for registered datasets."""

    name: str
    graph: dgl.DGLGraph
    labels: np.ndarray
    ids: np.ndarray | None = None


@dataclass
class GraphLabelData:
    """A list of graphs with an int64 class label ``0..C-1`` per graph (``-1``: unlabelled, datasets given by
    path only)."""

    name: str
    graphs: list[dgl.DGLGraph]
    labels: np.ndarray


@dataclass
class SimilarityPairData:
    """Two graphs and the ``(m, 2)`` int64 array of ground-truth pairs ``(graph_1 node, graph_2 node)``;
    ``ids_1``/``ids_2`` as :attr:`NodeLabelData.ids`."""

    name: str
    graph_1: dgl.DGLGraph
    graph_2: dgl.DGLGraph
    pairs: np.ndarray
    ids_1: np.ndarray | None = None
    ids_2: np.ndarray | None = None
