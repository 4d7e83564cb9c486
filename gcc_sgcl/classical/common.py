"""What the classical methods share: a graph's adjacency and normalised Laplacian as scipy matrices."""
from __future__ import annotations

import dgl
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import laplacian


def adjacency(g: dgl.DGLGraph) -> sp.csr_matrix:
    """The 0/1 adjacency matrix of a simple bidirected graph (the loaders' convention), float64 CSR."""
    adj = g.adj_external(transpose=False, scipy_fmt="csr").astype(np.float64)
    adj.data[:] = 1.0
    return adj


def normalized_laplacian(adj: sp.spmatrix | np.ndarray) -> sp.csr_matrix | np.ndarray:
    """``I - D^-1/2 A D^-1/2`` with Chung's convention for isolated nodes (their diagonal entry is 0), so the
    multiplicity of the eigenvalue 0 is the number of connected components; dense in, dense out."""
    return laplacian(adj, normed=True)
