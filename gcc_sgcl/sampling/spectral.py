"""Laplacian eigen-features of a (sub)graph: GCC's positional embedding, computed one way for everyone."""
from __future__ import annotations

from dataclasses import dataclass

import dgl
import numpy as np
import scipy.sparse as sp
import torch

from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, PE


@dataclass
class EigenFeatures:
    """Eigen-features of one graph; all arrays have ``k`` columns, the first ``valid`` of them real."""

    pe: np.ndarray  # (n, k) rows L2-normalised
    eigvec: np.ndarray  # (n, k) raw eigenvectors
    eigval: np.ndarray  # (k,) ascending normalised-Laplacian eigenvalues, NaN where padded
    valid: int


def normalized_adjacency(g: dgl.DGLGraph) -> sp.csr_matrix:
    """``D^-1/2 A D^-1/2`` (in-degrees clipped at 1, as GCC) as a float64 CSR matrix (for large graphs)."""
    adj = g.adj_external(transpose=False, scipy_fmt="csr").astype(np.float64)
    deg = np.asarray(g.in_degrees().numpy(), dtype=np.float64).clip(1.0)
    norm = sp.diags(deg**-0.5)
    return (norm @ adj @ norm).tocsr()


def dense_normalized_adjacency(g: dgl.DGLGraph) -> np.ndarray:
    """``D^-1/2 A D^-1/2`` as a dense float64 array (subgraph-sized; ~8× faster than going through scipy)."""
    n = g.num_nodes()
    src, dst = (t.numpy() for t in g.edges())
    a = np.zeros((n, n))
    a[src, dst] = 1.0
    inv_sqrt = np.asarray(g.in_degrees().numpy(), dtype=np.float64).clip(1.0) ** -0.5
    return a * inv_sqrt[:, None] * inv_sqrt[None, :]


def eigen_features(g: dgl.DGLGraph, k: int) -> EigenFeatures:
    """Eigenvectors of the ``min(n - 2, k)`` smallest eigenvalues of ``L = I - D^-1/2 A D^-1/2``.

    As GCC: a graph with ``n`` nodes gets ``min(n - 2, k)`` real columns (none when ``n <= 2``), rows are
    L2-normalised and the rest is zero-padded to ``k``. Dense ``numpy.linalg.eigh`` replaces GCC's ARPACK
    call (same subspaces; much faster on subgraphs of tens of nodes). Eigenvector signs are fixed so that
    the largest-magnitude entry of each column is positive, making the output a function of the graph.

    >>> import dgl, torch
    >>> f = eigen_features(dgl.to_bidirected(dgl.graph((torch.arange(4), torch.arange(1, 5)))), k=8)
    >>> f.pe.shape, f.valid
    ((5, 8), 3)
    """
    if k < 1:
        raise ValueError(f"k (positional embedding size) must be >= 1, got {k}")
    n = g.num_nodes()
    valid = max(0, min(n - 2, k))
    eigvec = np.zeros((n, k), dtype=np.float64)
    eigval = np.full(k, np.nan, dtype=np.float64)
    if valid > 0:
        mu, u = np.linalg.eigh(dense_normalized_adjacency(g))  # ascending in mu, i.e. descending in lambda = 1 - mu
        mu, u = mu[::-1][:valid], u[:, ::-1][:, :valid]
        flip = np.sign(u[np.abs(u).argmax(axis=0), np.arange(valid)])
        eigvec[:, :valid] = u * flip
        eigval[:valid] = 1.0 - mu
    norms = np.linalg.norm(eigvec, axis=1, keepdims=True)
    pe = eigvec / np.where(norms > 0, norms, 1.0)
    return EigenFeatures(pe=pe, eigvec=eigvec, eigval=eigval, valid=valid)


def attach_eigen_features(g: dgl.DGLGraph, k: int) -> dgl.DGLGraph:
    """Store :func:`eigen_features` of ``g`` in ``g.ndata`` (``PE``, ``EIGVEC``, ``EIGVAL``); returns ``g``."""
    f = eigen_features(g, k)
    n = g.num_nodes()
    g.ndata[PE] = torch.from_numpy(f.pe).float()
    g.ndata[EIGVEC] = torch.from_numpy(f.eigvec).float()
    g.ndata[EIGVAL] = torch.from_numpy(np.broadcast_to(f.eigval, (n, k)).copy()).float()
    return g
