"""What the dataset loaders return."""
from __future__ import annotations

from dataclasses import dataclass

import dgl
import numpy as np


@dataclass
class NodeLabelData:
    """One graph with an int64 class label per node (``labels[i]`` is the class of node ``i``)."""

    name: str
    graph: dgl.DGLGraph
    labels: np.ndarray


@dataclass
class GraphLabelData:
    """A list of graphs with an int64 class label ``0..C-1`` per graph."""

    name: str
    graphs: list[dgl.DGLGraph]
    labels: np.ndarray


@dataclass
class SimilarityPairData:
    """Two graphs and the ``(m, 2)`` int64 array of ground-truth pairs ``(graph_1 node, graph_2 node)``."""

    name: str
    graph_1: dgl.DGLGraph
    graph_2: dgl.DGLGraph
    pairs: np.ndarray
