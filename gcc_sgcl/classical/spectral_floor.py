"""The spectral floor: the normalised-Laplacian spectrum of a node's 2-hop ego net, or of a whole graph.

Eigenvalues are those of ``I - D^-1/2 A D^-1/2`` (isolated nodes contribute 0, so 0 has the multiplicity
of the number of connected components), all of them, from a dense ``numpy.linalg.eigvalsh``, clipped to
``[0, 2]`` against rounding.

- Node rows (:data:`NODE_DIM` = 40 columns): the spectrum of the subgraph induced by the node, its
  neighbours and their neighbours (the 2-hop ego net, not GCC's RWR view) as a :data:`BINS`-bin histogram
  over ``[0, 2]`` normalised by the ego net's size (it sums to 1), then its :data:`SMALLEST` smallest
  eigenvalues after the first (an ego net is connected, so ``λ1 = 0``): ``λ2 .. λ9``, padded with 0 for
  ego nets of fewer than 9 nodes (a connected graph of two or more nodes has ``λ2 > 0``, so 0 marks
  "absent").
- Graph rows (:data:`GRAPH_DIM` = 33 columns): the same histogram of the whole graph's spectrum, then
  ``λ2`` (0 for a disconnected or one-node graph).

Cost is one dense ``O(n^3)`` eigenvalue problem per ego net or graph: hubs' 2-hop ego nets reach most of
a small graph (usa_airport: 300 nodes on average, up to 1,000; h-index: 357 on average, up to 2,489).
Deterministic: the ``hidden`` and ``rng`` arguments of the embedders are unused.
"""
from __future__ import annotations

from collections.abc import Sequence

import dgl
import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from gcc_sgcl.classical.common import adjacency, normalized_laplacian

BINS = 32
SMALLEST = 8
NODE_DIM = BINS + SMALLEST
GRAPH_DIM = BINS + 1
TIE_DECIMALS = 8  # eigenvalues are rounded to this many decimals before the histogram (see spectrum_histogram)


def laplacian_eigenvalues(adj: sp.spmatrix | np.ndarray) -> np.ndarray:
    """All eigenvalues of the normalised Laplacian of the graph with adjacency ``adj``, ascending, in [0, 2]."""
    dense = adj.toarray() if sp.issparse(adj) else np.asarray(adj, dtype=np.float64)
    return np.clip(np.linalg.eigvalsh(normalized_laplacian(dense)), 0.0, 2.0)


def spectrum_histogram(eigenvalues: np.ndarray, bins: int = BINS) -> np.ndarray:
    """The fraction of ``eigenvalues`` in each of ``bins`` equal bins ``[a, b)`` over ``[0, 2]`` (sums to 1).

    Eigenvalues are rounded to :data:`TIE_DECIMALS` decimals first: normalised-Laplacian spectra often sit exactly
    on an edge ``k/16`` (1 for pendant and twin nodes, ``n/(n-1)`` for cliques), and the solver's rounding error
    would otherwise send copies of one eigenvalue to either side of it, depending on the node order and the LAPACK
    build.

    >>> spectrum_histogram(np.array([0.0, 1.0 - 1e-15, 1.0, 2.0]), bins=2).tolist()
    [0.25, 0.75]
    """
    counts, _ = np.histogram(np.round(eigenvalues, TIE_DECIMALS), bins=bins, range=(0.0, 2.0))
    return counts / len(eigenvalues)


def _node_row(eigenvalues: np.ndarray) -> np.ndarray:
    smallest = np.zeros(SMALLEST)
    after_first = eigenvalues[1 : 1 + SMALLEST]
    smallest[: len(after_first)] = after_first
    return np.concatenate([spectrum_histogram(eigenvalues), smallest])


def spectral_node_features(g: dgl.DGLGraph) -> np.ndarray:
    """``(num_nodes, NODE_DIM)``: each node's 2-hop ego-net spectrum summary (see the module docstring)."""
    adj = adjacency(g)
    within_two = (adj @ adj + adj + sp.identity(adj.shape[0], format="csr")).tocsr()
    rows = []
    # many mid-sized eigvalsh calls: one BLAS thread was 8x faster on the shared 2-core machine (6 s vs 52 s)
    with threadpool_limits(limits=1, user_api="blas"):
        for v in range(adj.shape[0]):
            ego = within_two.indices[within_two.indptr[v] : within_two.indptr[v + 1]]
            rows.append(_node_row(laplacian_eigenvalues(adj[ego][:, ego])))
    return np.stack(rows)


def spectral_graph_features(g: dgl.DGLGraph) -> np.ndarray:
    """``(GRAPH_DIM,)``: the spectrum histogram of the whole graph ``g`` and its ``λ2``."""
    if g.num_nodes() == 0:
        raise ValueError("spectral_graph_features needs a graph with at least one node, got an empty graph")
    eigenvalues = laplacian_eigenvalues(adjacency(g))
    lambda_2 = eigenvalues[1] if len(eigenvalues) > 1 else 0.0
    return np.append(spectrum_histogram(eigenvalues), lambda_2)


def embed_nodes(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`spectral_node_features` of every node of ``graphs``, stacked in order."""
    return np.concatenate([spectral_node_features(g) for g in graphs])


def embed_graphs(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`spectral_graph_features`, one row per graph."""
    with threadpool_limits(limits=1, user_api="blas"):  # see spectral_node_features
        return np.stack([spectral_graph_features(g) for g in graphs])
