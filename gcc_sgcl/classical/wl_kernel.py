"""The Weisfeiler–Lehman subtree kernel (Shervashidze, Schweitzer, van Leeuwen, Mehlhorn and Borgwardt, JMLR 2011)
as graph rows: the maintained stand-in for the SGCL paper's graph-kernel row (its DGK, Yanardag and Vishwanathan,
KDD 2015, builds on this kernel; no maintained package implements DGK).

The kernel comes from GraKeL (``grakel.kernels.WeisfeilerLehman`` over ``VertexHistogram``, ``n_iter = 5``,
``normalize=True``: ``K(G, G') / sqrt(K(G, G) K(G', G'))``), on the graphs of the dataset together. The graphs
here carry no node labels; each node starts from its degree, as DGK and graph2vec do on these social datasets.
The task CLIs take rows, not a kernel, so the rows are ``X = V Λ^1/2`` from the eigendecomposition ``K = V Λ
V^T`` (eigenvalues below ``1e-9`` of the largest dropped): ``X X^T = K``, a linear classifier on ``X`` is the
kernel machine on ``K``, and the squared distance between two rows is ``2 - 2 K(G, G')``. GCC's graph
classifier, an RBF SVC with ``gamma = 1 / columns``, then works on the WL kernel's distance with a ``gamma`` far
below ``1 / max distance²``, i.e. close to the linear kernel SVC on ``K``. Deterministic: ``rng`` is unused.
"""
from __future__ import annotations

from collections.abc import Sequence

import dgl
import numpy as np

ITERATIONS = 5
RELATIVE_EIGENVALUE_FLOOR = 1e-9


def degree_labelled(g: dgl.DGLGraph):
    """``g`` as a GraKeL graph: adjacency lists, every node (isolated ones too) labelled by its degree."""
    from grakel import Graph  # here: GraKeL is needed by this baseline only

    u, v = (t.numpy() for t in g.edges())
    neighbours: dict[int, list[int]] = {i: [] for i in range(g.num_nodes())}
    for a, b in zip(u.tolist(), v.tolist()):
        neighbours[a].append(b)
    return Graph(neighbours, node_labels={i: len(n) for i, n in neighbours.items()})


def wl_kernel(graphs: Sequence[dgl.DGLGraph], iterations: int = ITERATIONS) -> np.ndarray:
    """The normalised WL subtree kernel matrix of ``graphs`` (GraKeL), ``(len(graphs), len(graphs))``."""
    from grakel.kernels import VertexHistogram, WeisfeilerLehman

    if any(g.num_nodes() == 0 for g in graphs):
        raise ValueError("the WL kernel needs graphs with at least one node")
    kernel = WeisfeilerLehman(n_iter=iterations, normalize=True, base_graph_kernel=VertexHistogram)
    return np.asarray(kernel.fit_transform([degree_labelled(g) for g in graphs]), dtype=np.float64)


def kernel_rows(kernel: np.ndarray) -> np.ndarray:
    """Rows ``X`` with ``X X^T = kernel`` (a positive semi-definite matrix), from its eigendecomposition, the
    numerically null directions dropped.

    >>> k = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> x = kernel_rows(k)
    >>> bool(np.allclose(x @ x.T, k))
    True
    """
    values, vectors = np.linalg.eigh((kernel + kernel.T) / 2)
    keep = values > RELATIVE_EIGENVALUE_FLOOR * values.max()
    return vectors[:, keep][:, ::-1] * np.sqrt(values[keep][::-1])


def embed_graphs(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """One row per graph from the WL subtree kernel of all of ``graphs`` (``hidden`` and ``rng`` are unused)."""
    return kernel_rows(wl_kernel(graphs))
