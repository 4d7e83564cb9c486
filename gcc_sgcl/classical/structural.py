"""The handcrafted structural floor: a few classic statistics per node, or per graph.

Node rows (:data:`NODE_COLUMNS`, 8 columns): degree, log(1 + degree), mean and max neighbour degree (0 for
an isolated node), local clustering coefficient, core number, the number of other nodes within two hops,
and PageRank (damping 0.85, networkx). Graph rows (:data:`GRAPH_COLUMNS`, 24 columns): the fraction of nodes
in each of 16 log2-degree bins (bin 0 holds degree 0, bin ``k`` degrees in ``[2^(k-1), 2^k)``, the last bin
is open-ended), then node and edge counts, density, mean and max degree, mean clustering coefficient
(zeros included, as ``networkx.average_clustering``), number of connected components and degeneracy (the
largest core number).

The raw values span many orders of magnitude (PageRank ~1/n, two-hop sizes in the thousands), which a
linear classifier with GCC's ``C=1000``, an RBF SVC and cosine similarity all handle badly, so the
dataset-level embedders :func:`embed_nodes` and :func:`embed_graphs` z-score each column over all rows of
the dataset (label-free; constant columns become 0).

>>> import dgl, torch
>>> g = dgl.to_bidirected(dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0]))))
>>> structural_node_features(g)[:, NODE_COLUMNS.index("clustering")].tolist()
[1.0, 1.0, 1.0]
"""
from __future__ import annotations

from collections.abc import Sequence

import dgl
import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.preprocessing import scale

from gcc_sgcl.classical.common import adjacency

NODE_COLUMNS = (
    "degree",
    "log_degree",
    "mean_neighbour_degree",
    "max_neighbour_degree",
    "clustering",
    "core_number",
    "two_hop_size",
    "pagerank",
)
DEGREE_BINS = 16
GRAPH_COLUMNS = (
    *(f"degree_bin_{k}" for k in range(DEGREE_BINS)),
    "num_nodes",
    "num_edges",
    "density",
    "mean_degree",
    "max_degree",
    "mean_clustering",
    "num_components",
    "degeneracy",
)
PAGERANK_ALPHA = 0.85


def _clustering(adj: sp.csr_matrix, deg: np.ndarray) -> np.ndarray:
    """Local clustering coefficients: closed 2-walks through a node's neighbours over ``d(d - 1)``."""
    closed = np.asarray((adj @ adj).multiply(adj).sum(axis=1)).ravel()  # twice the triangles at each node
    pairs = deg * (deg - 1.0)
    return np.divide(closed, pairs, out=np.zeros_like(closed), where=pairs > 0)


def _core_numbers(adj: sp.csr_matrix) -> np.ndarray:
    cores = nx.core_number(nx.from_scipy_sparse_array(adj))
    return np.array([cores[v] for v in range(adj.shape[0])], dtype=np.float64)


def structural_node_features(g: dgl.DGLGraph) -> np.ndarray:
    """The raw ``(num_nodes, len(NODE_COLUMNS))`` float64 node statistics of ``g`` (not standardised)."""
    adj = adjacency(g)
    n = adj.shape[0]
    deg = np.diff(adj.indptr).astype(np.float64)
    mean_nbr = np.divide(adj @ deg, deg, out=np.zeros(n), where=deg > 0)
    max_nbr = np.zeros(n)
    nonempty = deg > 0
    if nonempty.any():  # reduceat over the start of each non-empty row; empty rows hold no entries
        max_nbr[nonempty] = np.maximum.reduceat(deg[adj.indices], adj.indptr[:-1][nonempty])
    within_two = adj @ adj + adj
    two_hop = np.diff(within_two.indptr) - (within_two.diagonal() > 0)  # the node itself is not counted
    pagerank = nx.pagerank(nx.from_scipy_sparse_array(adj), alpha=PAGERANK_ALPHA)
    return np.column_stack([
        deg,
        np.log1p(deg),
        mean_nbr,
        max_nbr,
        _clustering(adj, deg),
        _core_numbers(adj),
        two_hop.astype(np.float64),
        np.array([pagerank[v] for v in range(n)]),
    ])


def structural_graph_features(g: dgl.DGLGraph) -> np.ndarray:
    """The raw ``(len(GRAPH_COLUMNS),)`` float64 statistics of the whole non-empty graph ``g`` (not
    standardised)."""
    if g.num_nodes() == 0:
        raise ValueError("structural_graph_features needs a graph with at least one node, got an empty graph")
    adj = adjacency(g)
    n = adj.shape[0]
    deg = np.diff(adj.indptr).astype(np.float64)
    # frexp's exponent of d >= 1 is floor(log2 d) + 1, and 0 for d = 0: exactly the bins described above
    bins = np.minimum(np.frexp(deg)[1], DEGREE_BINS - 1)
    histogram = np.bincount(bins, minlength=DEGREE_BINS) / n
    m = adj.nnz / 2
    stats = [
        n,
        m,
        2 * m / (n * (n - 1)) if n > 1 else 0.0,
        deg.mean(),
        deg.max(),
        _clustering(adj, deg).mean(),
        connected_components(adj, directed=False)[0],
        _core_numbers(adj).max(),
    ]
    return np.concatenate([histogram, np.asarray(stats, dtype=np.float64)])


def embed_nodes(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """Z-scored :func:`structural_node_features` of every node of ``graphs``, stacked in order (deterministic:
    ``hidden`` and ``rng`` are unused)."""
    return scale(np.concatenate([structural_node_features(g) for g in graphs]))


def embed_graphs(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """Z-scored :func:`structural_graph_features`, one row per graph (deterministic: ``hidden`` and ``rng``
    are unused)."""
    return scale(np.stack([structural_graph_features(g) for g in graphs]))
