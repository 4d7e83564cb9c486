"""Global node embedding ``E_t`` of a whole graph, used by alignment and filtering.

The paper takes ``E_t`` from DeepWalk / LINE / node2vec; here it is NetMF (Qiu et al., WSDM 2018), the
closed-form matrix those random-walk methods factorise implicitly, in its *small-window* form computed
exactly with sparse matrices (see :func:`netmf`). NetMF's large-window form (top-``h`` eigenpairs of
``D^-1/2 A D^-1/2``, then an element-wise log) needs the dense ``n x n`` matrix -- 11 GB at 37 k nodes --
so it is not offered.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dgl
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh

from gcc_sgcl.augment import functional as F
from gcc_sgcl.fileio import atomic_target
from gcc_sgcl.registry import Registry

# Below this many nodes a dense eigh is both faster and more robust than ARPACK.
_DENSE_MAX_NODES = 1024

GLOBAL_EMBEDDINGS: Registry[Callable[..., np.ndarray]] = Registry("global embedding method")
"""``method`` name -> ``f(adj, dim, seed, **options) -> (n, dim) float64``."""


def undirected_adjacency(g: dgl.DGLGraph) -> sp.csr_matrix:
    """Symmetric 0/1 float64 adjacency of ``g`` as a simple undirected graph (self-loops dropped)."""
    a = g.adj_external(transpose=False, scipy_fmt="csr")
    a = (a + a.T).tocsr()
    a.setdiag(0)
    a.eliminate_zeros()
    a.data[:] = 1.0
    return a.astype(np.float64)


@GLOBAL_EMBEDDINGS.register("netmf")
def netmf(adj: sp.csr_matrix, dim: int, seed: int, window: int = 1, negative: float = 1.0) -> np.ndarray:
    """NetMF embedding, small-window form, exact on sparse matrices.

    With ``P = D^-1 A``, window ``T`` and ``b`` negative samples:
    ``F = log(max(vol(G) / (b T) * sum_{r=1..T} P^r D^-1, 1))`` -- symmetric and sparse (non-zero only
    between nodes at most ``T`` hops apart). The embedding is ``U_d |S_d|^1/2`` from the ``d`` eigenpairs of
    ``F`` of largest ``|eigenvalue|``, i.e. its rank-``d`` truncated SVD (``F`` is symmetric), found with
    ARPACK (``scipy.sparse.linalg.eigsh``, start vector from ``numpy.random.default_rng(seed)``) or, up to
    1024 nodes, dense ``eigh``. Column signs are fixed (largest-magnitude entry positive). Rows of isolated
    nodes are zero (degrees are clipped at 1), and so are the columns beyond ``n`` when ``dim > n``.

    ``T = 1`` is LINE's matrix and costs ``O(|E|)``; the cost of ``T > 1`` grows with the number of
    ``T``-hop pairs (``T = 2`` on Email-Enron: 21 M non-zeros instead of 0.37 M).
    """
    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    if negative <= 0:
        raise ValueError(f"negative must be > 0, got {negative}")
    n = adj.shape[0]
    deg = np.asarray(adj.sum(axis=1)).ravel()
    out = np.zeros((n, dim))
    if deg.sum() == 0:
        return out
    d_inv = sp.diags(1.0 / deg.clip(1.0))
    step = (d_inv @ adj).tocsr()
    power, total = step, step
    for _ in range(window - 1):
        power = power @ step
        total = total + power
    m = (deg.sum() / (negative * window)) * (total @ d_inv)
    m = (0.5 * (m + m.T)).tocsr()  # symmetric in exact arithmetic; remove round-off before eigsh
    m.data = np.log(np.maximum(m.data, 1.0))
    m.eliminate_zeros()
    if m.nnz == 0:
        return out
    if n <= _DENSE_MAX_NODES or dim >= n - 1:
        w, u = np.linalg.eigh(m.toarray())
    else:
        w, u = eigsh(m, k=dim, which="LM", v0=np.random.default_rng(seed).standard_normal(n))
    top = np.argsort(-np.abs(w), kind="stable")[:dim]
    emb = F.fix_signs(u[:, top] * np.sqrt(np.abs(w[top])))
    out[:, : emb.shape[1]] = emb
    return out


def global_embedding(
    g: dgl.DGLGraph, dim: int, seed: int, method: str = "netmf", **options: Any
) -> np.ndarray:
    """``(n, dim)`` float32 global embedding of ``g`` (treated as simple and undirected).

    ``method`` is a key of :data:`GLOBAL_EMBEDDINGS`; ``options`` go to it (``window``, ``negative`` for
    ``"netmf"``). Deterministic given ``seed``.

    >>> import dgl, torch
    >>> g = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 3])), num_nodes=5)
    >>> global_embedding(g, dim=2, seed=0).shape
    (5, 2)
    """
    return GLOBAL_EMBEDDINGS[method](undirected_adjacency(g), dim, seed, **options).astype(np.float32)


def graph_fingerprint(g: dgl.DGLGraph) -> str:
    """Hex digest of the node count, edge count and edge arrays (in edge-id order) of ``g``."""
    src, dst = g.edges(order="eid")
    h = hashlib.blake2b(digest_size=16)
    h.update(np.array([g.num_nodes(), g.num_edges()], dtype=np.int64).tobytes())
    h.update(src.numpy().astype(np.int64).tobytes())
    h.update(dst.numpy().astype(np.int64).tobytes())
    return h.hexdigest()


def cached_global_embedding(
    g: dgl.DGLGraph,
    dim: int,
    seed: int,
    cache_dir: str | os.PathLike,
    method: str = "netmf",
    **options: Any,
) -> np.ndarray:
    """:func:`global_embedding` stored in ``cache_dir`` as ``.npy``, reused when graph and parameters match.

    The file name holds a hash of :func:`graph_fingerprint` and all parameters, so a changed graph or
    parameter misses the cache (the old file is left alone). Files are written to a temporary name in the same
    folder and moved into place (:func:`~gcc_sgcl.fileio.atomic_target`), so concurrent writers never expose a
    partial file.
    """
    params = json.dumps({"method": method, "dim": dim, "seed": seed, **options}, sort_keys=True)
    key = hashlib.blake2b((graph_fingerprint(g) + params).encode(), digest_size=12).hexdigest()
    path = Path(cache_dir) / f"{method}-d{dim}-seed{seed}-{key}.npy"
    if path.exists():
        return np.load(path)
    emb = global_embedding(g, dim, seed, method, **options)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(path) as tmp, open(tmp, "wb") as f:
        np.save(f, emb)
    return emb
