"""Deterministic operations behind the augmentations: no randomness, no mutation of inputs.

The transform classes draw their random parameters and call these; every function returning a view returns
either the input itself (when the operation changes nothing) or a new graph (``view.local_var()`` or an induced
subgraph) with changed features written as new tensors.
Feature names and shapes are documented in :mod:`gcc_sgcl.sampling.view`.
"""
from __future__ import annotations

import dgl
import numpy as np
import scipy.linalg
import torch

from gcc_sgcl.sampling.spectral import edge_arrays, edge_eigen_features, eigen_feature_tensors
from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, PE

Box = tuple[float, float, float, float]
"""``(x_min, x_max, y_min, y_max)`` as rank percentiles in ``[0, 1]`` (``0.2`` means ``R_0.2``)."""

# Coordinate values closer than this (relative to the largest |value|) to a crop threshold count as on it:
# nodes that tie in exact arithmetic (e.g. a grid column) are kept or dropped together.
_TIE_RTOL = 1e-5


def view_eigvals(view: dgl.DGLGraph) -> np.ndarray:
    """``(k,)`` float64 eigenvalue of each PE column of ``view``; NaN marks padded columns."""
    return view.ndata[EIGVAL][0].detach().cpu().numpy().astype(np.float64)


def num_valid(view: dgl.DGLGraph) -> int:
    """Number of real (non-padded) eigen columns of ``view``."""
    return int((~np.isnan(view_eigvals(view))).sum())


def with_features(view: dgl.DGLGraph, **features: torch.Tensor) -> dgl.DGLGraph:
    """New graph with ``view``'s structure and node features, ``features`` replacing or adding columns.

    ``local_var`` shares the (immutable) structure and gives the new graph its own feature frame, so the
    input view is left untouched at a fraction of the cost of ``clone``.
    """
    out = view.local_var()
    for name, value in features.items():
        out.ndata[name] = value
    return out


def fix_signs(u: np.ndarray) -> np.ndarray:
    """Flip columns so that each column's largest-magnitude entry is positive (a function of the graph)."""
    return u * np.sign(u[np.abs(u).argmax(axis=0), np.arange(u.shape[1])])


def normalized_coordinates(view: dgl.DGLGraph) -> tuple[np.ndarray, np.ndarray]:
    """Crop coordinates from the view's own embedding: ``EIGVEC`` columns 1 and 2 (``lambda_2, lambda_3`` of
    ``I - D^-1/2 A D^-1/2``), as the paper's text (no extra eigendecomposition)."""
    u = view.ndata[EIGVEC].detach().cpu().numpy().astype(np.float64)
    return u[:, 1], u[:, 2]


def combinatorial_coordinates(view: dgl.DGLGraph) -> tuple[np.ndarray, np.ndarray]:
    """Crop coordinates: eigenvectors of ``lambda_2, lambda_3`` of the combinatorial Laplacian ``D - A``.

    This is the Laplacian of the paper's product-graph theorem: on a grid the two vectors are exactly the
    two axes, so the crop is an image crop (not true of the normalised Laplacian's eigenvectors, whose
    boundary rows are damped by ``D^1/2``). Costs one dense ``eigh`` of the view.
    """
    a = view.adj_external(transpose=False, scipy_fmt="csr").astype(np.float64)
    a = a.maximum(a.T).toarray()
    np.fill_diagonal(a, 0.0)
    lap = np.diag(a.sum(axis=1)) - a
    _, u = scipy.linalg.eigh(lap, subset_by_index=[0, 2])
    u = fix_signs(u)
    return u[:, 1], u[:, 2]


def box_nodes(x: np.ndarray, y: np.ndarray, box: Box, center: int = 0) -> np.ndarray:
    """Sorted ids of ``center`` and the nodes with ``R_x_min <= x <= R_x_max``, ``R_y_min <= y <= R_y_max``.

    ``R_p`` is the ``p``-quantile (``np.quantile``, linear interpolation) of the coordinate over all nodes.

    >>> box_nodes(np.arange(10.0), np.zeros(10), (0.2, 0.8, 0.0, 1.0))
    array([0, 2, 3, 4, 5, 6, 7])
    """
    xy = np.stack([x, y])
    # one quantile call for both coordinates (the same values as one call each, at about 2/3 of the cost)
    r = np.quantile(xy, box, axis=1)
    lo, hi = np.array([r[0, 0], r[2, 1]]), np.array([r[1, 0], r[3, 1]])
    tol = _TIE_RTOL * np.abs(xy).max(axis=1)
    keep = ((xy >= (lo - tol)[:, None]) & (xy <= (hi + tol)[:, None])).all(axis=0)
    keep[center] = True
    return np.flatnonzero(keep)


def induced_view(view: dgl.DGLGraph, nodes: np.ndarray, recompute_pe: bool, k: int) -> dgl.DGLGraph:
    """The view induced on sorted ``nodes`` (so node 0 stays the centre), parent ids kept.

    With ``recompute_pe`` the eigen features are computed afresh for the smaller graph (``k`` columns);
    otherwise the rows of the old ``PE``/``EIGVEC``/``EIGVAL`` are kept (an ablation). Structure and other
    features are those of ``dgl.node_subgraph(view, nodes, store_ids=False)`` (edges by source, then edge
    id), built from the edge arrays without DGL's subgraph machinery.
    """
    src, dst = edge_arrays(view)
    local = np.full(view.num_nodes(), -1)
    local[nodes] = np.arange(len(nodes))
    eids = np.flatnonzero((local[src] >= 0) & (local[dst] >= 0))
    eids = eids[np.argsort(src[eids], kind="stable")]
    sub_src, sub_dst = local[src[eids]], local[dst[eids]]
    n = len(nodes)
    sub = dgl.graph((torch.from_numpy(sub_src), torch.from_numpy(sub_dst)), num_nodes=n, idtype=view.idtype)
    fresh = eigen_feature_tensors(edge_eigen_features(sub_src, sub_dst, n, k)) if recompute_pe else {}
    index = torch.as_tensor(nodes, dtype=torch.int64)
    features = {  # features recomputed for the crop are not sliced from the view
        name: fresh[name] if name in fresh else t.index_select(0, index) for name, t in view.ndata.items()
    }
    sub.ndata.update({**features, **fresh})
    sub.edata.update({name: t.index_select(0, torch.from_numpy(eids)) for name, t in view.edata.items()})
    return sub


def valid_permutation(eigvals: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Full column permutation: the valid columns taken in ``order`` (positions among them), padding last.

    >>> valid_permutation(np.array([0.0, 0.5, 1.0, np.nan]), np.array([2, 0, 1]))
    array([2, 0, 1, 3])
    """
    valid = ~np.isnan(eigvals)
    return np.concatenate([np.flatnonzero(valid)[order], np.flatnonzero(~valid)])


def reorder_permutation(eigvals: np.ndarray, r: int) -> np.ndarray:
    """Column order sorting the valid columns by ``sum_{j=1..r} (1 - lambda)^j``, descending (stable).

    ``1 - lambda`` are the eigenvalues of ``D^-1/2 A D^-1/2``; the key is the eigenvalue of the r-th order
    diffusion matrix, so the result is the embedding NetMF's window-``r`` matrix would give. For odd ``r``
    the key is increasing in ``1 - lambda`` and the order does not change.

    >>> lam = np.array([0.0, 1.5, 1.8, np.nan])
    >>> reorder_permutation(lam, 1), reorder_permutation(lam, 2)
    (array([0, 1, 2, 3]), array([0, 2, 1, 3]))
    """
    if r < 1:
        raise ValueError(f"r must be >= 1, got {r}")
    mu = 1.0 - eigvals[~np.isnan(eigvals)]
    key = np.power.outer(mu, np.arange(1, r + 1)).sum(axis=1)
    return valid_permutation(eigvals, np.argsort(-key, kind="stable"))


def masked_columns(eigvals: np.ndarray, z: int) -> np.ndarray:
    """Sorted indices of the columns of the ``z`` largest valid eigenvalues (``z`` clipped to their count).

    >>> masked_columns(np.array([0.0, 0.7, 0.3, np.nan]), 2)
    array([1, 2])
    """
    valid = np.flatnonzero(~np.isnan(eigvals))
    z = min(z, valid.size)
    return np.sort(valid[np.argsort(-eigvals[valid], kind="stable")[:z]])


def permute_columns(view: dgl.DGLGraph, perm: np.ndarray) -> dgl.DGLGraph:
    """New view whose ``PE``, ``EIGVEC`` and ``EIGVAL`` columns are taken in order ``perm`` (``view`` itself
    when ``perm`` keeps the order, as reorder's permutation does for every odd ``r``)."""
    if np.array_equal(perm, np.arange(len(perm))):
        return view
    index = torch.as_tensor(perm, dtype=torch.int64, device=view.device)
    permuted = {name: view.ndata[name].index_select(1, index) for name in (PE, EIGVEC, EIGVAL)}
    return with_features(view, **permuted)


def mask_columns(view: dgl.DGLGraph, columns: np.ndarray) -> dgl.DGLGraph:
    """New view whose ``PE`` has ``columns`` set to zero (``view`` itself when ``columns`` is empty)."""
    if len(columns) == 0:
        return view
    pe = view.ndata[PE]
    index = torch.as_tensor(columns, dtype=torch.int64, device=pe.device)
    return with_features(view, **{PE: pe.index_fill(1, index, 0)})


def procrustes(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Orthogonal ``Q`` minimising ``||x Q - n||_F``: ``U V^T`` from the SVD ``x^T n = U S V^T``.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(6, 3)); q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    >>> bool(np.allclose(procrustes(x, x @ q), q))
    True
    """
    if x.ndim != 2 or x.shape != n.shape:
        raise ValueError(f"x and n must be matrices of the same shape, got {x.shape} and {n.shape}")
    u, _, vt = np.linalg.svd(x.T @ n)
    return u @ vt


def rotate_pe(view: dgl.DGLGraph, q: np.ndarray) -> dgl.DGLGraph:
    """New view whose ``PE`` is ``PE @ q``."""
    pe = view.ndata[PE]
    return with_features(view, **{PE: pe @ torch.as_tensor(q, dtype=pe.dtype, device=pe.device)})


def view_similarity(emb_q_rows: np.ndarray, emb_k_rows: np.ndarray) -> float:
    """Cosine between the sums of the two views' global-embedding rows (0 when a sum is the zero vector).

    >>> view_similarity(np.array([[1.0, 0.0]]), np.array([[1.0, 1.0], [2.0, 3.0]]))
    0.6
    """
    a, b = emb_q_rows.sum(axis=0), emb_k_rows.sum(axis=0)
    denom = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / denom if denom > 0 else 0.0


# ------------------------------------------------------------------------------------------------------------
# Operations behind the re-implemented baselines (GraphCL, GRACE, MVGRL, GCA): edge lists, PPR, centralities.


def stochastic_count(x: float, u: float) -> int:
    """``floor(x + u)``: for ``u ~ U[0, 1)`` an integer with expectation ``x`` (so a rate holds on tiny views,
    where ``int(x)`` would round a 20 % rate down to nothing below 5 nodes).

    >>> stochastic_count(4.6, 0.3), stochastic_count(4.6, 0.5)
    (4, 5)
    """
    return int(np.floor(x + u))


def undirected_pairs(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(u, v)`` with ``u < v``: each pair of distinct endpoints once, sorted by ``u`` then ``v``.

    >>> undirected_pairs(np.array([2, 0, 1, 1]), np.array([0, 2, 1, 0]))
    (array([0, 0]), array([1, 2]))
    """
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    u, v = np.minimum(src, dst), np.maximum(src, dst)
    keep = u != v
    n = int(v.max()) + 1 if v.size else 1
    codes = np.unique(u[keep] * n + v[keep])
    return codes // n, codes % n


def undirected_edges(view: dgl.DGLGraph) -> tuple[np.ndarray, np.ndarray]:
    """The undirected edges of the (bidirected) ``view`` as :func:`undirected_pairs`; self-loops are dropped."""
    return undirected_pairs(*edge_arrays(view))


def non_edges(u: np.ndarray, v: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` with ``a < b``: the node pairs of an ``n``-node graph that are not among the edges ``(u, v)``.

    >>> non_edges(np.array([0]), np.array([1]), 3)
    (array([0, 1]), array([2, 2]))
    """
    present = np.zeros((n, n), dtype=bool)
    present[u, v] = True
    a, b = np.triu_indices(n, 1)
    absent = ~present[a, b]
    return a[absent], b[absent]


def edge_view(view: dgl.DGLGraph, u: np.ndarray, v: np.ndarray, k: int) -> dgl.DGLGraph:
    """New view on ``view``'s nodes with the undirected edges ``(u, v)`` and fresh eigen features.

    Both directions of every edge are stored, sorted by source then destination; ``PE``/``EIGVEC``/``EIGVAL``
    are those of the new graph (``k`` columns), the other node features are ``view``'s. Edge features are not
    carried over (sampled views have none).
    """
    u, v = np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)
    src, dst = np.concatenate([u, v]), np.concatenate([v, u])
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    n = view.num_nodes()
    out = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=n, idtype=view.idtype)
    out.ndata.update({**view.ndata, **eigen_feature_tensors(edge_eigen_features(src, dst, n, k))})
    return out


def grow_subgraph(view: dgl.DGLGraph, target: int, draws: np.ndarray) -> np.ndarray:
    """Sorted ids of a connected node set grown from node 0 (the centre) up to ``target`` nodes.

    Each step adds the node at position ``floor(draws[t] * f)`` of the sorted frontier (the ``f`` neighbours of
    the set not yet in it); growth stops early when the frontier is empty (the centre's component is used up).
    ``draws`` holds at least ``target - 1`` numbers in ``[0, 1)``.
    """
    indptr, indices, _ = view.adj_tensors("csr")
    indptr, indices = indptr.numpy(), indices.numpy()
    selected = {0}
    frontier = set(indices[indptr[0]:indptr[1]].tolist()) - selected
    for t in range(target - 1):
        if not frontier:
            break
        options = sorted(frontier)
        node = options[int(draws[t] * len(options))]
        selected.add(node)
        frontier |= set(indices[indptr[node]:indptr[node + 1]].tolist())
        frontier -= selected
    return np.array(sorted(selected), dtype=np.int64)


def mask_rows(view: dgl.DGLGraph, rows: np.ndarray) -> dgl.DGLGraph:
    """New view whose ``PE`` rows ``rows`` are replaced by the mean ``PE`` row of ``view`` (GraphCL's mask token);
    ``view`` itself when ``rows`` is empty."""
    if len(rows) == 0:
        return view
    pe = view.ndata[PE]
    index = torch.as_tensor(rows, dtype=torch.int64, device=pe.device)
    token = pe.mean(dim=0, keepdim=True).expand(len(rows), -1)
    return with_features(view, **{PE: pe.index_copy(0, index, token)})


def ppr_matrix(u: np.ndarray, v: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """``(n, n)`` personalised PageRank of every node: ``Pi = alpha (I - (1 - alpha) D^-1 A)^-1``.

    ``A`` is the undirected graph with edges ``(u, v)`` plus a self-loop on every node (MVGRL's ``A + I``, so
    isolated nodes keep their mass), ``D`` its row sums. Row ``i`` is the PPR distribution of seed ``i``
    (teleport probability ``alpha``): every row sums to 1 and ``Pi = alpha I + (1 - alpha) D^-1 A Pi``.

    >>> bool(np.allclose(ppr_matrix(np.array([0]), np.array([1]), 3, 0.2).sum(axis=1), 1.0))
    True
    """
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    a = np.eye(n)
    a[u, v] = a[v, u] = 1.0
    walk = a / a.sum(axis=1, keepdims=True)
    return np.linalg.solve(np.eye(n) - (1.0 - alpha) * walk, alpha * np.eye(n))


def topk_targets(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, cols)``: per row the columns of its ``k`` largest positive off-diagonal scores (ties: lower column
    first); fewer where a row has fewer positive off-diagonal scores.

    >>> topk_targets(np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.0, 0.0, 1.0]]), 1)
    (array([0, 1]), array([1, 2]))
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    off = scores.copy()
    np.fill_diagonal(off, 0.0)
    top = np.argsort(-off, axis=1, kind="stable")[:, :k]
    rows = np.repeat(np.arange(off.shape[0]), top.shape[1])
    cols = top.ravel()
    keep = off[rows, cols] > 0
    return rows[keep], cols[keep]


def threshold_targets(scores: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, cols)`` of the off-diagonal scores ``>= eps`` (``eps > 0``), row by row.

    >>> threshold_targets(np.array([[0.7, 0.3], [0.05, 0.95]]), 0.1)
    (array([0]), array([1]))
    """
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    keep = scores >= eps
    np.fill_diagonal(keep, False)
    return np.nonzero(keep)


def centrality_drop_probabilities(s: np.ndarray, p: float, p_tau: float) -> np.ndarray:
    """GCA's drop probabilities from (log-)centralities ``s``: ``min(p (s_max - s) / (s_max - mean s), p_tau)``.

    The normalised weights average to 1, so uncapped probabilities average to ``p``; the least central items
    are dropped most. When all ``s`` are equal (the formula's 0/0) every probability is ``min(p, p_tau)``.

    >>> centrality_drop_probabilities(np.array([0.0, 1.0, 2.0]), 0.3, 0.5)
    array([0.5, 0.3, 0. ])
    """
    if np.ptp(s) == 0:
        return np.full(s.shape, min(p, p_tau))
    return np.minimum(p * (s.max() - s) / (s.max() - s.mean()), p_tau)


def edge_drop_probabilities(
    u: np.ndarray, v: np.ndarray, degree: np.ndarray, p: float, p_tau: float
) -> np.ndarray:
    """GCA's degree-centrality edge-drop probabilities of the undirected edges ``(u, v)``.

    Edge centrality is the mean degree of the two endpoints (GCA's rule for undirected graphs), taken as
    ``s = log(1 + centrality)`` (the ``+ 1`` of GCA's code), then :func:`centrality_drop_probabilities`.
    """
    return centrality_drop_probabilities(np.log1p((degree[u] + degree[v]) / 2.0), p, p_tau)


def feature_drop_probabilities(x: np.ndarray, degree: np.ndarray, p: float, p_tau: float) -> np.ndarray:
    """GCA's drop probability of each column of the dense features ``x`` (``(n, d)``, here ``PE`` columns).

    Column weight ``w_j = log(1 + sum_u |x_uj| degree_u)`` (GCA's ``feature_drop_weights_dense``: features
    carried by central nodes weigh more), then :func:`centrality_drop_probabilities` of ``w``.
    """
    return centrality_drop_probabilities(np.log1p(np.abs(x).T @ degree), p, p_tau)
