"""Laplacian eigen-features of a (sub)graph: GCC's positional embedding, computed one way for everyone."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import dgl
import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.linalg import lobpcg

from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, PE


# Above this many nodes the eigenvectors come from block LOBPCG (sparse, k of them) instead of a dense ``eigh``
# (O(n^3)): whole graphs of REDDIT/COLLAB reach thousands of nodes, RWR subgraphs stay far below.
DENSE_MAX_NODES = 512


@dataclass
class EigenFeatures:
    """Eigen-features of one graph; all arrays have ``k`` columns, the first ``valid`` of them real."""

    pe: np.ndarray  # (n, k) rows L2-normalised
    eigvec: np.ndarray  # (n, k) raw eigenvectors
    eigval: np.ndarray  # (k,) ascending normalised-Laplacian eigenvalues, NaN where padded
    valid: int


def normalized_adjacency(g: dgl.DGLGraph) -> sp.csr_matrix:
    """``D^-1/2 A D^-1/2`` (in-degrees clipped at 1, as GCC) of ``g`` as a float64 CSR matrix."""
    return sparse_normalized_adjacency(*edge_arrays(g), g.num_nodes())


def sparse_normalized_adjacency(src: np.ndarray, dst: np.ndarray, n: int) -> sp.csr_matrix:
    """:func:`dense_normalized_adjacency` as a sparse CSR matrix (for large graphs)."""
    adj = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    adj.data[:] = 1.0  # duplicate edges collapse, as in the dense version
    inv_sqrt = sp.diags(np.bincount(dst, minlength=n).astype(np.float64).clip(1.0) ** -0.5)
    return (inv_sqrt @ adj @ inv_sqrt).tocsr()


def edge_arrays(g: dgl.DGLGraph) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` of ``g`` as numpy arrays, in edge-id order."""
    src, dst = g.edges(order="eid")
    return src.numpy(), dst.numpy()


def dense_normalized_adjacency(src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    """``D^-1/2 A D^-1/2`` of the ``n``-node graph with edges ``src -> dst`` as a dense float64 array.

    ``D`` holds in-degrees (edges counted with multiplicity, clipped at 1, as GCC); subgraph-sized graphs
    only (~8× faster than going through scipy).
    """
    a = np.zeros((n, n))
    a[src, dst] = 1.0
    inv_sqrt = np.bincount(dst, minlength=n).astype(np.float64).clip(1.0) ** -0.5
    return a * inv_sqrt[:, None] * inv_sqrt[None, :]


def eigen_features(g: dgl.DGLGraph, k: int) -> EigenFeatures:
    """Eigenvectors of the ``min(n - 2, k)`` smallest eigenvalues of ``L = I - D^-1/2 A D^-1/2`` of ``g``.

    As GCC: a graph with ``n`` nodes gets ``min(n - 2, k)`` real columns (none when ``n <= 2``), rows are
    L2-normalised and the rest is zero-padded to ``k``. Dense ``numpy.linalg.eigh`` replaces GCC's ARPACK
    call on subgraphs up to ``DENSE_MAX_NODES`` nodes (same subspaces, much faster at tens of nodes); larger
    graphs use block LOBPCG (see ``_top_eigenpairs``). Eigenvector signs are fixed so that
    the largest-magnitude entry of each column is positive, making the output a function of the graph.

    >>> import dgl, torch
    >>> f = eigen_features(dgl.to_bidirected(dgl.graph((torch.arange(4), torch.arange(1, 5)))), k=8)
    >>> f.pe.shape, f.valid
    ((5, 8), 3)
    """
    return edge_eigen_features(*edge_arrays(g), g.num_nodes(), k)


def edge_eigen_features(src: np.ndarray, dst: np.ndarray, n: int, k: int) -> EigenFeatures:
    """:func:`eigen_features` of the ``n``-node graph with edges ``src -> dst`` (no DGL graph needed)."""
    if k < 1:
        raise ValueError(f"k (positional embedding size) must be >= 1, got {k}")
    valid = max(0, min(n - 2, k))
    eigvec = np.zeros((n, k), dtype=np.float64)
    eigval = np.full(k, np.nan, dtype=np.float64)
    if valid > 0:
        mu, u = _top_eigenpairs(src, dst, n, valid)
        flip = np.sign(u[np.abs(u).argmax(axis=0), np.arange(valid)])
        eigvec[:, :valid] = u * flip
        eigval[:valid] = 1.0 - mu
    norms = np.linalg.norm(eigvec, axis=1, keepdims=True)
    pe = eigvec / np.where(norms > 0, norms, 1.0)
    return EigenFeatures(pe=pe, eigvec=eigvec, eigval=eigval, valid=valid)


def _top_eigenpairs(src: np.ndarray, dst: np.ndarray, n: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` largest eigenpairs of ``D^-1/2 A D^-1/2``, eigenvalues descending.

    Dense ``eigh`` up to ``DENSE_MAX_NODES`` nodes. Above, block LOBPCG (``count + 8`` vectors, start block
    from a fixed seed) on the sparse matrix, kept only if every residual ``||N u − μ u||`` is below 1e-6,
    else dense ``eigh``. GCC's single-vector ARPACK call is not used: it misses copies of repeated
    eigenvalues (e.g. 1 repeated once per connected component), measured on REDDIT-BINARY graphs.
    """
    if n > DENSE_MAX_NODES:
        norm_adj = sparse_normalized_adjacency(src, dst, n)
        start = np.random.default_rng(0).standard_normal((n, count + 8))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # non-convergence is checked below
            mu, u = lobpcg(norm_adj, start, largest=True, tol=1e-9, maxiter=1000)
        order = np.argsort(-mu, kind="stable")[:count]
        mu, u = mu[order], u[:, order]
        if np.linalg.norm(norm_adj @ u - u * mu, axis=0).max() < 1e-6:
            return mu, u
    mu, u = np.linalg.eigh(dense_normalized_adjacency(src, dst, n))  # ascending in mu
    return mu[::-1][:count], u[:, ::-1][:, :count]


def eigen_feature_tensors(f: EigenFeatures) -> dict[str, torch.Tensor]:
    """``{PE, EIGVEC, EIGVAL}`` float32 node features of :class:`EigenFeatures` ``f``."""
    n, k = f.eigvec.shape
    return {
        PE: torch.from_numpy(f.pe).float(),
        EIGVEC: torch.from_numpy(f.eigvec).float(),
        EIGVAL: torch.from_numpy(np.broadcast_to(f.eigval, (n, k)).copy()).float(),
    }


def attach_eigen_features(g: dgl.DGLGraph, k: int) -> dgl.DGLGraph:
    """Store :func:`eigen_features` of ``g`` in ``g.ndata`` (``PE``, ``EIGVEC``, ``EIGVAL``); returns ``g``."""
    g.ndata.update(eigen_feature_tensors(eigen_features(g, k)))
    return g
