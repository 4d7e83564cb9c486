"""Laplacian eigen-features of a batch of (sub)graphs: GCC's positional embedding.

A graph with ``n`` nodes gets the eigenvectors of the ``min(n - 2, k)`` smallest eigenvalues of
``L = I - D^-1/2 A D^-1/2`` (columns in ascending eigenvalue, zero-padded to ``k``; ``D`` = in-degrees clipped
at 1). Edges are counted with multiplicity in ``A`` and in ``D`` alike, so a multigraph is normalised
consistently. Graphs up to :data:`DENSE_MAX_NODES` nodes are padded to a multiple of ``bucket`` nodes and
decomposed by one batched ``torch.linalg.eigh`` per size bucket; larger graphs (whole graphs of REDDIT/COLLAB)
by block LOBPCG on the sparse matrix.

Eigenvector signs are arbitrary. GCC calls ARPACK with a random start vector, so every view's columns come with
random signs (an implicit sign-flip augmentation): ``signs`` reproduces that (one ±1 per column per graph);
without it each column's largest-magnitude entry is made positive (a function of the graph).
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import torch
from scipy.sparse.linalg import lobpcg

from gcc_sgcl.sampling.batch import distinct, offsets, positions, ranges, segment_ids

# Above this many nodes the eigenvectors come from block LOBPCG (sparse, k of them) instead of a dense ``eigh``
# (O(n^3)): whole graphs of REDDIT/COLLAB reach thousands of nodes, RWR subgraphs stay far below.
DENSE_MAX_NODES = 512
# Diagonal of the padding in batched decompositions: above the normalised-Laplacian spectrum [0, 2].
PAD_EIGENVALUE = 3.0
BUCKET = 16
# Matrix entries decomposed per batched eigh call: 2**21 (16 MiB of float64 Laplacians) keeps a chunk's transient
# memory ~250 MiB below 2**24's on a 1 M-node graph's views at the same speed; each matrix's eigenpairs do not
# depend on the batch it is in (issue 66).
EIGH_BATCH_ENTRIES = 2**21


def valid_columns(num_nodes: np.ndarray, k: int) -> np.ndarray:
    """GCC's number of real eigenvector columns: ``min(n - 2, k)``, at least 0 (elementwise)."""
    if k < 1:
        raise ValueError(f"k (positional embedding size) must be >= 1, got {k}")
    return np.clip(np.asarray(num_nodes) - 2, 0, k)


def sparse_normalized_adjacency(src: np.ndarray, dst: np.ndarray, n: int) -> sp.csr_matrix:
    """``D^-1/2 A D^-1/2`` of an ``n``-node graph with edges ``src -> dst`` (multi-edges counted in ``A`` and
    ``D``; in-degrees clipped at 1, as GCC) as a float64 CSR matrix."""
    adj = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))  # duplicates are summed
    inv_sqrt = sp.diags(np.bincount(dst, minlength=n).astype(np.float64).clip(1.0) ** -0.5)
    return (inv_sqrt @ adj @ inv_sqrt).tocsr()


def padded_laplacians(
    num_nodes: np.ndarray, num_edges: np.ndarray, src: np.ndarray, dst: np.ndarray, size: int
) -> np.ndarray:
    """``(B, size, size)`` float32 normalised Laplacians of the graphs, each in its top-left block,
    ``PAD_EIGENVALUE`` on the rest of the diagonal (an isolated padding node whose eigenpair sorts after the real
    ones).

    Entry ``(i, j)`` is ``-(a_ij d_i^-1/2) d_j^-1/2`` (``+ 1`` on the diagonal of real nodes) in float64, rounded
    to float32; entries without an edge are ``-0.0``, as that product is. Only the edges' entries are computed
    (one per distinct ``(graph, i, j)``), then scattered into the float32 array: a view's matrix is mostly empty.

    >>> lap = padded_laplacians(np.array([2]), np.array([2]), np.array([0, 1]), np.array([1, 0]), 4)
    >>> lap[0].tolist()
    [[1.0, -1.0, -0.0, -0.0], [-1.0, 1.0, -0.0, -0.0], [-0.0, -0.0, 3.0, -0.0], [-0.0, -0.0, -0.0, 3.0]]
    """
    b = len(num_nodes)
    if b == 0 or num_nodes.max() > size:
        raise ValueError(f"size ({size}) must be at least the largest graph's node count and the batch non-empty")
    graph = segment_ids(num_edges)
    inv_sqrt = np.bincount(graph * size + dst, minlength=b * size).astype(np.float64).clip(1.0) ** -0.5
    cell, count = distinct((graph * size + src) * size + dst, return_counts=True)
    row, col = cell // size, (cell // (size * size)) * size + cell % size  # (graph, i) and (graph, j)
    value = -(count * inv_sqrt[row] * inv_sqrt[col])
    diag = np.arange(size)
    lap = np.full((b, size, size), -0.0, dtype=np.float32)
    lap[:, diag, diag] = np.where(diag[None, :] < num_nodes[:, None], 1.0, PAD_EIGENVALUE)
    loop = row == col
    value[loop] += 1.0  # self-loops of real nodes (a graph's nodes are below its node count)
    lap.reshape(-1)[cell] = value  # float64 -> float32, the rounding of the whole dense matrix's cast
    return lap


def _sparse_eigenpairs(src: np.ndarray, dst: np.ndarray, n: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` smallest Laplacian eigenpairs (ascending) of one large graph.

    Block LOBPCG (``count + 8`` vectors, start block from a fixed seed) on ``D^-1/2 A D^-1/2``, kept only if every
    residual is below 1e-6, else dense ``eigh``. GCC's single-vector ARPACK call is not used: it misses copies of
    repeated eigenvalues (e.g. 1 repeated once per connected component), measured on REDDIT-BINARY graphs.
    """
    norm_adj = sparse_normalized_adjacency(src, dst, n)
    start = np.random.default_rng(0).standard_normal((n, count + 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # non-convergence and ill-conditioning: the residual
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)  # check below decides, dense eigh otherwise
        mu, u = lobpcg(norm_adj, start, largest=True, tol=1e-9, maxiter=1000)
    order = np.argsort(-mu, kind="stable")[:count]
    mu, u = mu[order], u[:, order]
    if np.linalg.norm(norm_adj @ u - u * mu, axis=0).max() >= 1e-6:
        mu, u = np.linalg.eigh(norm_adj.toarray())
        mu, u = mu[::-1][:count], u[:, ::-1][:, :count]
    return 1.0 - mu, u


def eigen_arrays(
    num_nodes: np.ndarray,
    num_edges: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    k: int,
    signs: np.ndarray | None = None,
    bucket: int = BUCKET,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(pe, eigvec, eigval)`` of ``B`` graphs given as concatenated local edge lists (see ``ViewBatch``).

    ``pe`` and ``eigvec`` are ``(N, k)`` float32 (rows L2-normalised in ``pe``), ``eigval`` ``(B, k)`` float32 with
    NaN for padded columns. Each column's sign is first fixed so that its largest-magnitude entry is positive,
    then multiplied by ``signs`` (``(B, k)`` of ±1) when given.

    >>> path = np.array([0, 1, 1, 2, 2, 3]), np.array([1, 0, 2, 1, 3, 2])
    >>> pe, vec, lam = eigen_arrays(np.array([4]), np.array([6]), *path, k=3)
    >>> pe.shape, int(np.isnan(lam).sum()), abs(round(float(lam[0, 0]), 6))
    ((4, 3), 1, 0.0)
    """
    if bucket < 1:
        raise ValueError(f"bucket (padding granularity) must be >= 1, got {bucket}")
    num_nodes, num_edges = np.asarray(num_nodes, np.int64), np.asarray(num_edges, np.int64)
    b, total = len(num_nodes), int(num_nodes.sum())
    node_ptr, edge_ptr = offsets(num_nodes), offsets(num_edges)
    valid = valid_columns(num_nodes, k)
    eigvec = np.zeros((total, k), dtype=np.float32)
    eigval = np.full((b, k), np.nan, dtype=np.float32)
    sizes = -(-num_nodes // bucket) * bucket
    dense = (valid > 0) & (num_nodes <= DENSE_MAX_NODES)
    signs = None if signs is None else _check_signs(signs, b, k)
    for rows, size in _bucket_chunks(sizes, dense):  # float32 throughout: eigh's output, signs are exact
        lam, vec = _bucket_eigh(num_nodes, num_edges, src, dst, edge_ptr, rows, size, min(k, size))
        cols = lam.shape[1]
        keep = np.arange(cols)[None, :] < valid[rows][:, None]
        if not keep.all():
            vec = np.where(keep[:, None, :], vec, np.float32(0.0))
        factor = _canonical_signs(vec)  # then the drawn signs: each column's sign is their product
        if signs is not None:
            factor *= signs[rows, :cols].astype(np.float32)
        eigval[rows, :cols] = np.where(keep, lam, np.float32(np.nan))
        member_nodes = num_nodes[rows]
        member, pos = segment_ids(member_nodes), positions(member_nodes)
        eigvec[np.repeat(node_ptr[rows], member_nodes) + pos, :cols] = vec[member, pos] * factor[member]
    sparse = np.flatnonzero((valid > 0) & ~dense)
    exact = {}  # sparse rows' float64 vectors: pe is normalised in float64
    for row in sparse:
        lo, hi = edge_ptr[row], edge_ptr[row + 1]
        lam, vec = _sparse_eigenpairs(src[lo:hi], dst[lo:hi], int(num_nodes[row]), int(valid[row]))
        vec = vec * _canonical_signs(vec[None])[0] * (1.0 if signs is None else signs[row, : len(lam)])
        eigval[row, : len(lam)] = lam
        eigvec[node_ptr[row]:node_ptr[row + 1], : len(lam)] = vec
        exact[row] = vec
    return _normalised_rows(eigvec, node_ptr, exact), eigvec, eigval


def _normalised_rows(eigvec: np.ndarray, node_ptr: np.ndarray, exact: dict[int, np.ndarray],
                     block: int = 4096) -> np.ndarray:
    """``eigvec``'s rows divided by their L2 norms (zero rows kept), in float64 then rounded to float32; graph
    ``g``'s rows from ``exact[g]`` (float64, wider than ``eigvec``'s columns may be) where given. Blocks of
    ``block`` rows keep the float64 temporaries in cache."""
    pe = np.empty_like(eigvec)
    for a in range(0, len(eigvec), block):
        rows = eigvec[a:a + block].astype(np.float64)
        for g, vec in exact.items():
            lo, hi = max(node_ptr[g], a), min(node_ptr[g + 1], a + block)
            if lo < hi:
                rows[lo - a:hi - a] = 0.0
                rows[lo - a:hi - a, : vec.shape[1]] = vec[lo - node_ptr[g]:hi - node_ptr[g]]
        norms = np.sqrt(np.add.reduce(rows * rows, axis=1, keepdims=True))  # np.linalg.norm's sum, 5x faster
        pe[a:a + block] = rows / np.where(norms > 0, norms, 1.0)
    return pe


def _bucket_chunks(sizes: np.ndarray, dense: np.ndarray,
                   max_entries: int = EIGH_BATCH_ENTRIES) -> list[tuple[np.ndarray, int]]:
    """``(rows, size)`` groups of graphs padded to the same size, at most ``max_entries`` matrix entries each."""
    groups = []
    for size in np.unique(sizes[dense]):
        rows = np.flatnonzero(dense & (sizes == size))
        step = max(1, max_entries // int(size) ** 2)
        groups += [(rows[i:i + step], int(size)) for i in range(0, len(rows), step)]
    return groups


def _bucket_eigh(num_nodes, num_edges, src, dst, edge_ptr, rows, size, cols):
    """Ascending eigenvalues ``(R, cols)`` and eigenvectors ``(R, size, cols)`` of the padded Laplacians of ``rows``.

    Decomposed in float32 (the features are float32; 2-4x faster than float64 at view sizes).
    """
    edge_idx = ranges(edge_ptr, rows)
    lap = padded_laplacians(num_nodes[rows], num_edges[rows], src[edge_idx], dst[edge_idx], size)
    lam, vec = torch.linalg.eigh(torch.from_numpy(lap))
    return lam[:, :cols].numpy(), vec[:, :, :cols].numpy()


def _check_signs(signs: np.ndarray, b: int, k: int) -> np.ndarray:
    signs = np.asarray(signs, dtype=np.float64)
    if signs.shape != (b, k):
        raise ValueError(f"signs must have shape {(b, k)}, got {signs.shape}")
    return signs


def _canonical_signs(vec: np.ndarray) -> np.ndarray:
    """``(R, c)`` signs making each column's largest-magnitude entry positive (``vec`` is ``(R, n, c)``)."""
    top = np.take_along_axis(vec, np.abs(vec).argmax(axis=1)[:, None, :], axis=1)[:, 0, :]
    return np.where(top < 0, -1.0, 1.0).astype(vec.dtype)


def random_signs(u: np.ndarray) -> np.ndarray:
    """``±1`` from uniforms ``u`` (``u < 0.5`` gives ``-1``)."""
    return np.where(np.asarray(u) < 0.5, -1.0, 1.0)
