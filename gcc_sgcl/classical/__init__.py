"""Training-free embeddings computed directly on a downstream dataset: the floors and classical baselines.

Methods (:data:`METHODS`), one module each:

- ``structural`` — handcrafted node statistics (8 columns) or graph statistics (24 columns), z-scored
- ``spectral`` — normalised-Laplacian spectrum of each node's 2-hop ego net (40 columns) or of each whole
  graph (33 columns)
- ``prone`` — ProNE (Zhang et al. 2019), ``hidden`` columns, nodes only
- ``graphwave`` — GraphWave (Donnat et al. 2018), ``hidden`` columns, nodes only
- ``wl-kernel`` — Weisfeiler–Lehman subtree kernel (GraKeL) as rows, graphs only
- ``graph2vec`` — graph2vec (gensim's Doc2Vec on WL words), ``hidden`` columns, graphs only
- ``rolx`` — RolX (Henderson et al. 2012) role memberships, as many columns as roles, nodes only
- ``panther`` — Panther++ (Zhang et al. 2015) vectors, ``hidden`` columns, nodes only
- ``struc2vec`` — struc2vec (Ribeiro et al. 2017) skip-gram vectors of structural walks, ``hidden`` columns, nodes
  only
- ``random`` — standard-normal rows, ``hidden`` columns, nodes and graphs

The last six are the SGCL paper's task-specific baselines; their sources and parameters: ``docs/baselines.md``.

Rows follow :mod:`gcc_sgcl.engine.generate`: one per node (node datasets), one per graph (graph datasets),
graph_1's nodes then graph_2's (similarity datasets), so the task CLIs evaluate ``<dir>/<dataset>.npy``
unchanged. ``python -m gcc_sgcl.classical --method prone --dataset usa_airport --out-dir DIR``; wrapped
with the matching task by ``bash scripts/baseline.sh <hidden> <method> <dataset...>``.

>>> emb = embed_dataset("structural", "synthetic-roles")
>>> emb.shape
(1620, 8)
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import dgl
import numpy as np

from gcc_sgcl.classical import (
    graph2vec, graphwave, panther, prone, random_vectors, rolx, spectral_floor, struc2vec, structural, wl_kernel,
)
from gcc_sgcl.data import KINDS, dataset_kind, load_any
from gcc_sgcl.registry import Registry

# (graphs, hidden, rng) -> rows: one per node of each graph in order, or one per graph
Embedder = Callable[[Sequence[dgl.DGLGraph], int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class Method:
    """A training-free method: ``nodes`` embeds every node of the given graphs (``None`` for graph-level methods),
    ``graphs`` each whole graph (``None`` for node-level methods); ``sized``: its number of columns is the
    ``hidden`` it is given."""

    nodes: Embedder | None
    graphs: Embedder | None = None
    sized: bool = False

    def covers(self, per_graph: bool) -> bool:
        """Whether it embeds the rows of a dataset of graphs (``per_graph``) or of nodes."""
        return (self.graphs if per_graph else self.nodes) is not None


METHODS: Registry[Method] = Registry("training-free method", {
    "structural": Method(structural.embed_nodes, structural.embed_graphs),
    "spectral": Method(spectral_floor.embed_nodes, spectral_floor.embed_graphs),
    "prone": Method(prone.embed_nodes, sized=True),
    "graphwave": Method(graphwave.embed_nodes, sized=True),
    "wl-kernel": Method(None, wl_kernel.embed_graphs),
    "graph2vec": Method(None, graph2vec.embed_graphs, sized=True),
    "rolx": Method(rolx.embed_nodes),
    "panther": Method(panther.embed_nodes, sized=True),
    "struc2vec": Method(struc2vec.embed_nodes, sized=True),
    "random": Method(random_vectors.embed_nodes, random_vectors.embed_graphs, sized=True),
})


def method_folder(method: str, hidden: int) -> str:
    """The folder name of ``method``'s embeddings at size ``hidden``: the method, and the size for the methods
    sized by it, so runs at two sizes do not overwrite each other's files.

    >>> method_folder("prone", 32), method_folder("structural", 32)
    ('prone-32', 'structural')
    """
    return f"{method}-{hidden}" if METHODS[method].sized else method


def embed_dataset(
    method: str, dataset: str, data_dir: str | None = None, hidden: int = 64, seed: int = 0
) -> np.ndarray:
    """The float32 ``method`` embedding of ``dataset``, rows laid out as :mod:`gcc_sgcl.engine.generate` writes
    them; ``hidden`` sets the size of the sized methods (the others have fixed or data-chosen sizes) and ``seed``
    the ``numpy.random.default_rng`` every random choice is drawn from."""
    embedder = METHODS[method]
    kind = KINDS[dataset_kind(dataset)]
    if not kind.embedded:
        raise ValueError(f"dataset {dataset!r} is a {kind.name} dataset; classical embeddings cover node, graph "
                         f"and similarity datasets")
    if not embedder.covers(kind.per_graph):
        level, other = ("graph", "nodes") if kind.per_graph else ("node-level", "graphs")
        able = [name for name, m in METHODS.items() if m.covers(kind.per_graph)]
        raise ValueError(f"method {method!r} embeds {other} only, but {dataset!r} is a {level} dataset; such "
                         f"datasets are supported by {', '.join(able)}")
    graphs = kind.graphs(load_any(dataset, data_dir))
    emb = (embedder.graphs if kind.per_graph else embedder.nodes)(graphs, hidden, np.random.default_rng(seed))
    return emb.astype(np.float32)


STRUCTURAL = "structural"
"""The training-free vector joined to an encoder's rows (``<method> ⊕ structural``)."""


def joined(*blocks: np.ndarray) -> np.ndarray:
    """The column blocks side by side, each divided by its mean row norm (label-free), so that every block
    weighs alike in the classifiers' distances and margins whatever its width and scale (an encoder's rows have
    norm 1; the structural vector is z-scored per column).

    >>> joined(np.ones((2, 1)), np.full((2, 4), 3.0)).tolist()
    [[1.0, 0.5, 0.5, 0.5, 0.5], [1.0, 0.5, 0.5, 0.5, 0.5]]
    """
    out = []
    for block in blocks:
        block = np.asarray(block, dtype=np.float64)
        norm = float(np.linalg.norm(block, axis=1).mean())
        out.append(block / norm if norm > 0 else block)
    return np.hstack(out).astype(np.float32)


def structural_vector(graphs: Sequence[dgl.DGLGraph], per_graph: bool) -> np.ndarray:
    """The structural vector of every node of ``graphs`` in order (z-scored over all of them), or of each graph:
    the block :func:`joined` puts beside an encoder's rows in ``⊕ structural`` rows; float32, as
    :func:`embed_dataset` stores it, so that every path to a joined row gives the same bits."""
    method = METHODS[STRUCTURAL]
    return (method.graphs if per_graph else method.nodes)(list(graphs), 0, np.random.default_rng(0)).astype(np.float32)
