"""Laplacian eigen-features of a (sub)graph: GCC's positional embedding.

Views get theirs from :func:`edge_eigen_features` (dense ``eigh``, block LOBPCG for large graphs). Two more
paths give the same eigenvalues and subspaces: :func:`arpack_eigen_features`, GCC's one-graph ARPACK call
kept as the reference, and :func:`batched_eigen_features`, many small graphs padded into one batched ``eigh``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import dgl
import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.linalg import ArpackError, eigsh, lobpcg

from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, PE


# Above this many nodes the eigenvectors come from block LOBPCG (sparse, k of them) instead of a dense ``eigh``
# (O(n^3)): whole graphs of REDDIT/COLLAB reach thousands of nodes, RWR subgraphs stay far below.
DENSE_MAX_NODES = 512
# Diagonal of the padding in batched decompositions: above the normalised-Laplacian spectrum [0, 2].
PAD_EIGENVALUE = 3.0


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
    valid = _valid_columns(n, k)
    if valid == 0:
        return _assemble(np.zeros((1, n, 0)), np.zeros((1, 0)), [n], k)[0]
    mu, u = _top_eigenpairs(src, dst, n, valid)
    return _assemble(u[None], (1.0 - mu)[None], [n], k)[0]


def _valid_columns(n: int, k: int) -> int:
    """GCC's number of real eigenvector columns of an ``n``-node graph: ``min(n - 2, k)``, at least 0."""
    if k < 1:
        raise ValueError(f"k (positional embedding size) must be >= 1, got {k}")
    return max(0, min(n - 2, k))


def _assemble(vec: np.ndarray, eigval: np.ndarray, sizes: Sequence[int], k: int) -> list[EigenFeatures]:
    """:class:`EigenFeatures` of a batch from eigenvectors ``vec`` (B, N, c) and eigenvalues ``eigval`` (B, c).

    Graph ``b`` owns the first ``sizes[b]`` rows and its first ``min(sizes[b] - 2, k)`` columns (ascending
    Laplacian eigenvalue); the rest is dropped. Each kept column's sign is fixed so that its largest-magnitude
    entry is positive; columns past ``valid`` are zero (eigenvalue NaN) and rows are L2-normalised into ``pe``.
    """
    batch, rows, cols = vec.shape
    cols = min(cols, k)
    sizes = np.asarray(sizes, dtype=np.int64)
    valid = np.array([_valid_columns(int(n), k) for n in sizes], dtype=np.int64).reshape(batch)
    kept_cols = np.arange(cols)[None, :] < valid[:, None]
    kept = (np.arange(rows)[None, :, None] < sizes[:, None, None]) & kept_cols[:, None, :]
    u = np.where(kept, vec[:, :, :cols], 0.0)
    flip = np.sign(np.take_along_axis(u, np.abs(u).argmax(axis=1)[:, None, :], axis=1))
    eigvec = np.zeros((batch, rows, k), dtype=np.float64)
    eigvec[:, :, :cols] = u * flip
    padded_eigval = np.full((batch, k), np.nan, dtype=np.float64)
    padded_eigval[:, :cols] = np.where(kept_cols, eigval[:, :cols], np.nan)
    norms = np.linalg.norm(eigvec, axis=2, keepdims=True)
    pe = eigvec / np.where(norms > 0, norms, 1.0)
    return [
        EigenFeatures(pe=pe[b, :n], eigvec=eigvec[b, :n], eigval=padded_eigval[b], valid=int(valid[b]))
        for b, n in enumerate(sizes)
    ]


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


def arpack_eigen_features(
    src: np.ndarray, dst: np.ndarray, n: int, k: int, rng: np.random.Generator, retries: int = 10
) -> EigenFeatures:
    """GCC's own path, kept as the reference: ARPACK ``eigsh`` on one graph's ``D^-1/2 A D^-1/2``.

    As GCC's ``eigen_decomposision``: the ``min(n - 2, k)`` largest-algebraic eigenpairs with
    ``ncv = min(n, max(2k + 1, 20))`` and a uniform random start vector (here drawn from ``rng``), ``ncv``
    doubled on an ARPACK error up to ``retries`` attempts. Unlike GCC, columns are returned in this module's
    convention (ascending Laplacian eigenvalue, signs fixed, see :func:`eigen_features`) so the two paths
    compare directly; ARPACK may return fewer copies of a repeated eigenvalue than its multiplicity.
    """
    valid = _valid_columns(n, k)
    if valid == 0:
        return _assemble(np.zeros((1, n, 0)), np.zeros((1, 0)), [n], k)[0]
    norm_adj = sparse_normalized_adjacency(src, dst, n)
    ncv = min(n, max(2 * valid + 1, 20))
    v0 = rng.random(n)
    for attempt in range(retries):
        try:
            mu, u = eigsh(norm_adj, k=valid, which="LA", ncv=ncv, v0=v0)
            break
        except ArpackError:
            if attempt + 1 == retries:
                raise
            ncv = min(2 * ncv, n)
    order = np.argsort(-mu, kind="stable")
    return _assemble(u[None, :, order], (1.0 - mu[order])[None], [n], k)[0]


def batched_eigen_features(
    subgraphs: Sequence[tuple[np.ndarray, np.ndarray, int]], k: int, bucket: int = 16
) -> list[EigenFeatures]:
    """:func:`edge_eigen_features` of many small ``(src, dst, n)`` graphs with a few batched ``eigh`` calls.

    Graphs are grouped by ``n`` rounded up to a multiple of ``bucket``; each group's normalised Laplacians
    ``L = I - D^-1/2 A D^-1/2`` are padded to that size and decomposed by one ``torch.linalg.eigh`` call
    (float64). A padded row/column is an isolated node whose diagonal entry is ``PAD_EIGENVALUE`` (> 2 ≥ every
    normalised-Laplacian eigenvalue), so its eigenpair sorts after the real ones and exactly decouples from
    them; only the first ``min(n - 2, k)`` eigenpairs, restricted to the first ``n`` rows, are kept. Same
    eigenvalues and eigen-subspaces as :func:`edge_eigen_features` up to rounding (vectors inside a repeated
    eigenvalue may differ by a rotation); graphs with at most 2 or more than ``DENSE_MAX_NODES`` nodes go
    through :func:`edge_eigen_features` one by one.

    >>> path = (np.array([0, 1, 1, 2, 2, 3]), np.array([1, 0, 2, 1, 3, 2]), 4)
    >>> [f.valid for f in batched_eigen_features([path, path], k=8)]
    [2, 2]
    """
    if bucket < 1:
        raise ValueError(f"bucket (padding granularity) must be >= 1, got {bucket}")
    features: list[EigenFeatures | None] = [None] * len(subgraphs)
    groups: dict[int, list[int]] = {}
    for i, (src, dst, n) in enumerate(subgraphs):
        if _valid_columns(n, k) == 0 or n > DENSE_MAX_NODES:
            features[i] = edge_eigen_features(src, dst, n, k)
        else:
            groups.setdefault(-(-n // bucket) * bucket, []).append(i)
    for size, members in groups.items():
        group = [subgraphs[i] for i in members]
        lam, vec = padded_laplacian_eigh(group, size)
        for i, f in zip(members, _assemble(vec, lam, [n for _, _, n in group], k)):
            features[i] = f
    return features


def padded_laplacian_eigh(
    subgraphs: Sequence[tuple[np.ndarray, np.ndarray, int]], size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (B, size), ascending, and eigenvectors (B, size, size) of the padded Laplacians.

    Graph ``b``'s normalised Laplacian fills the top-left ``n_b × n_b`` block (in-degrees clipped at 1 and
    duplicate edges collapsed, as :func:`dense_normalized_adjacency`); the rest of the diagonal holds
    ``PAD_EIGENVALUE``.
    """
    sizes = np.array([n for _, _, n in subgraphs], dtype=np.int64)
    if sizes.size == 0 or sizes.max() > size:
        raise ValueError(f"size ({size}) must be at least the largest graph's node count and the batch non-empty")
    batch = np.repeat(np.arange(len(subgraphs)), [len(src) for src, _, _ in subgraphs])
    src = np.concatenate([s for s, _, _ in subgraphs]).astype(np.int64)
    dst = np.concatenate([d for _, d, _ in subgraphs]).astype(np.int64)
    inv_sqrt = np.bincount(batch * size + dst, minlength=len(subgraphs) * size).reshape(-1, size)
    inv_sqrt = inv_sqrt.astype(np.float64).clip(1.0) ** -0.5
    lap = np.zeros((len(subgraphs), size, size))
    lap[batch, src, dst] = 1.0
    lap *= -(inv_sqrt[:, :, None] * inv_sqrt[:, None, :])
    diag = np.arange(size)
    lap[:, diag, diag] += np.where(diag[None, :] < sizes[:, None], 1.0, PAD_EIGENVALUE)
    lam, vec = torch.linalg.eigh(torch.from_numpy(lap))
    return lam.numpy(), vec.numpy()


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
