"""Deterministic operations behind the augmentations: no randomness, no mutation of inputs.

Batch operations take a :class:`~gcc_sgcl.sampling.batch.ViewBatch` (or its arrays) and return new arrays or a
new batch; per-view helpers (used by the baselines' structural edits) take one view's edge arrays. The transform
classes draw their random parameters and call these.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
import torch

from gcc_sgcl.config import Box
from gcc_sgcl.sampling.batch import ViewBatch, distinct, offsets, positions, segment_ids
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.induced import with_eigen_features

# Coordinate values closer than this (relative to the view's largest |value|) to a crop threshold count as on
# it: nodes that tie in exact arithmetic (e.g. a grid column) are kept or dropped together.
_TIE_RTOL = 1e-5


def fix_signs(u: np.ndarray) -> np.ndarray:
    """Flip columns so that each column's largest-magnitude entry is positive (a function of the matrix)."""
    return u * np.sign(u[np.abs(u).argmax(axis=0), np.arange(u.shape[1])])


# ------------------------------------------------------------------------------------------------------------
# Crop


def segment_quantiles(values: np.ndarray, counts: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``(B, Q)`` quantiles ``q`` (``(B, Q)`` or ``(Q,)`` in [0, 1]) of each segment of ``values``, computed as
    ``np.quantile``'s default (linear interpolation between order statistics). Segments must be non-empty.

    >>> segment_quantiles(np.array([3.0, 1.0, 2.0, 10.0, 20.0]), np.array([3, 2]), np.array([0.0, 0.5, 1.0]))
    array([[ 1.,  2.,  3.],
           [10., 15., 20.]])
    """
    b = len(counts)
    q = np.broadcast_to(np.asarray(q, dtype=np.float64), (b,) + np.shape(q)[-1:])
    padded = np.full((b, int(counts.max(initial=1))), np.inf)
    padded[segment_ids(counts), positions(counts)] = values
    padded.sort(axis=1)
    h = (counts[:, None] - 1) * q
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, counts[:, None] - 1)
    a, c = np.take_along_axis(padded, lo, axis=1), np.take_along_axis(padded, hi, axis=1)
    return a + (h - lo) * (c - a)


def box_keep(x: np.ndarray, y: np.ndarray, views: ViewBatch, box: Box) -> np.ndarray:
    """``(N,)`` whether each node lies in its view's percentile box (``R_x_min <= x <= R_x_max`` and the same for
    ``y``, ``R_p`` the ``p``-quantile of the view's values, ties within ``_TIE_RTOL``); centres are always kept."""
    n = views.num_nodes
    view = views.node_view
    rx = segment_quantiles(x, n, np.array(box[:2]))
    ry = segment_quantiles(y, n, np.array(box[2:]))
    scale = np.maximum.reduceat(np.abs(np.stack([x, y], axis=1)), views.node_ptr[:-1], axis=0)
    tol = _TIE_RTOL * scale[view]
    keep = ((x >= rx[view, 0] - tol[:, 0]) & (x <= rx[view, 1] + tol[:, 0])
            & (y >= ry[view, 0] - tol[:, 1]) & (y <= ry[view, 1] + tol[:, 1]))
    keep[views.node_ptr[:-1] + views.seed_pos] = True
    return keep


def normalized_coordinates(views: ViewBatch) -> tuple[np.ndarray, np.ndarray]:
    """Crop coordinates from the views' own embedding: ``EIGVEC`` columns 1 and 2 (``lambda_2, lambda_3`` of
    ``I - D^-1/2 A D^-1/2``, signs as drawn), as the paper's text (no extra eigendecomposition)."""
    return views.eigvec[:, 1].astype(np.float64), views.eigvec[:, 2].astype(np.float64)


def combinatorial_coordinates(views: ViewBatch) -> tuple[np.ndarray, np.ndarray]:
    """Crop coordinates: eigenvectors of ``lambda_2, lambda_3`` of the combinatorial Laplacian ``D - A`` (of the
    symmetrised simple graph), signs fixed; one dense ``eigh`` per view.

    This is the Laplacian of the paper's product-graph theorem: on a grid the two vectors are exactly the two
    axes, so the crop is an image crop.
    """
    x, y = np.zeros(int(views.num_nodes.sum())), np.zeros(int(views.num_nodes.sum()))
    ptr = views.node_ptr
    for b in range(len(views)):
        n = int(views.num_nodes[b])
        if n < 3:
            continue
        src, dst = views.edges_of(b)
        a = np.zeros((n, n))
        a[src, dst] = a[dst, src] = 1.0
        np.fill_diagonal(a, 0.0)
        _, u = scipy.linalg.eigh(np.diag(a.sum(axis=1)) - a, subset_by_index=[0, 2])
        u = fix_signs(u)
        x[ptr[b]:ptr[b + 1]], y[ptr[b]:ptr[b + 1]] = u[:, 1], u[:, 2]
    return x, y


def random_keep(views: ViewBatch, keep_counts: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``(N,)`` mask keeping each view's centre and ``keep_counts[b] - 1`` other nodes: those with the smallest
    ``u`` (one uniform per node), i.e. a uniformly random subset."""
    score = np.asarray(u, dtype=np.float64).copy()
    score[views.node_ptr[:-1] + views.seed_pos] = -1.0
    order = np.lexsort((score, views.node_view))
    rank = np.empty(len(score), dtype=np.int64)
    rank[order] = positions(views.num_nodes)
    return rank < np.repeat(keep_counts, views.num_nodes)


def crop_views(views: ViewBatch, keep: np.ndarray, recompute_pe: bool, sign_rng: KeyedRandom | None) -> ViewBatch:
    """Views induced on ``keep``; the eigen-features of changed views recomputed (``recompute_pe``) with
    signs as the batch draws them (``sign_rng`` rows align with the views), else sliced from the old ones."""
    changed = np.flatnonzero(np.bincount(views.node_view[~keep], minlength=len(views)) > 0)
    out = views.induce(keep)
    if not recompute_pe or len(changed) == 0:
        return out
    return with_eigen_features(out, changed, None if sign_rng is None else sign_rng.take(changed))


# ------------------------------------------------------------------------------------------------------------
# Columns: reorder, mask, alignment


def valid_order(eigval: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``(B, k)`` column permutations: valid columns by ascending ``key`` (stable), padded (NaN) columns last."""
    return np.argsort(np.where(np.isnan(eigval), np.inf, key), axis=1, kind="stable")


def reorder_permutations(eigval: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``(B, k)``: each view's valid columns sorted by ``sum_{j=1..r_b} (1 - lambda)^j``, descending (stable).

    ``1 - lambda`` are the eigenvalues of ``D^-1/2 A D^-1/2``; the key is the eigenvalue of the r-th order
    diffusion matrix, so the result is the embedding NetMF's window-``r`` matrix would give. For odd ``r`` the
    key is increasing in ``1 - lambda`` and the order does not change.

    >>> lam = np.array([[0.0, 1.5, 1.8, np.nan]] * 2)
    >>> reorder_permutations(lam, np.array([1, 2]))
    array([[0, 1, 2, 3],
           [0, 2, 1, 3]])
    """
    r = np.asarray(r, dtype=np.int64)
    if (r < 1).any():
        raise ValueError(f"r must be >= 1, got {r.min()}")
    mu = 1.0 - np.nan_to_num(eigval.astype(np.float64))
    powers = mu[:, :, None] ** np.arange(1, int(r.max(initial=1)) + 1)
    key = (powers * (np.arange(1, powers.shape[2] + 1) <= r[:, None, None])).sum(axis=2)
    return valid_order(eigval, -key)


def masked_columns(eigval: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``(B, k)`` bool: each view's columns of its ``z_b`` largest valid eigenvalues (``z`` clipped to their count).

    >>> masked_columns(np.array([[0.0, 0.7, 0.3, np.nan]]), np.array([2]))
    array([[False,  True,  True, False]])
    """
    order = valid_order(eigval, -np.nan_to_num(eigval.astype(np.float64)))
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(order.shape[1])[None, :].repeat(len(order), 0), axis=1)
    return (rank < np.asarray(z)[:, None]) & ~np.isnan(eigval)


def permute_columns(views: ViewBatch, perm: np.ndarray) -> ViewBatch:
    """Views whose ``PE``, ``EIGVEC`` and ``EIGVAL`` columns are taken in order ``perm`` (``(B, k)``)."""
    node_perm = perm[views.node_view]
    return views.replace(
        pe=np.take_along_axis(views.pe, node_perm, axis=1),
        eigvec=np.take_along_axis(views.eigvec, node_perm, axis=1),
        eigval=np.take_along_axis(views.eigval, perm, axis=1),
    )


def mask_columns(views: ViewBatch, mask: np.ndarray) -> ViewBatch:
    """Views whose ``PE`` columns ``mask`` (``(B, k)`` bool) are zero."""
    return views.replace(pe=np.where(mask[views.node_view], np.float32(0), views.pe))


def procrustes(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Orthogonal ``Q`` minimising ``||x Q - n||_F`` per batch entry: ``U V^T`` from the SVD ``x^T n = U S V^T``
    (``x``, ``n``: ``(..., rows, k)``; one batched ``torch.linalg.svd``).

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(6, 3)); q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    >>> bool(np.allclose(procrustes(x, x @ q), q))
    True
    """
    if x.shape != n.shape or x.ndim < 2:
        raise ValueError(f"x and n must be matrices of the same shape, got {x.shape} and {n.shape}")
    u, _, vt = torch.linalg.svd(torch.from_numpy(np.swapaxes(x, -1, -2) @ n))
    return (u @ vt).numpy()


def align_views(views: ViewBatch) -> ViewBatch:
    """Views whose ``PE`` is rotated by the Procrustes ``Q`` onto their global-embedding rows."""
    if views.global_rows is None:
        raise ValueError("Align needs the global embedding rows of the views (ViewBatch.global_rows)")
    if views.global_rows.shape[1] != views.k:
        raise ValueError(
            f"Align needs the global embedding size to equal the positional embedding size, "
            f"got d={views.global_rows.shape[1]} and k={views.k}"
        )
    x = views.padded(views.pe)
    rotated = np.matmul(x, procrustes(x, views.padded(views.global_rows)).astype(np.float32))
    return views.replace(pe=rotated[views.node_view, positions(views.num_nodes)])


def view_similarity(sum_q: np.ndarray, sum_k: np.ndarray) -> np.ndarray:
    """Row-wise cosine between summed global-embedding rows (0 where a sum is the zero vector), clipped to
    [-1, 1] so that rounding never lets a pair pass ``cos > 1 - c`` at c = 0.

    >>> view_similarity(np.array([[1.0, 0.0]]), np.array([[3.0, 4.0]]))
    array([0.6])
    """
    denom = np.linalg.norm(sum_q, axis=1) * np.linalg.norm(sum_k, axis=1)
    dots = (sum_q * sum_k).sum(axis=1)
    return np.clip(np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0), -1.0, 1.0)


def segment_sums(x: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(B, d)`` sums of consecutive row segments of ``x`` (``counts`` rows each)."""
    counts = np.asarray(counts)
    if len(counts) == 0:
        return np.zeros((0, x.shape[1]))
    if (counts == 0).any():
        raise ValueError("segment_sums needs non-empty segments")
    return np.add.reduceat(np.asarray(x, dtype=np.float64), offsets(counts)[:-1], axis=0)


# ------------------------------------------------------------------------------------------------------------
# Structural edits of the re-implemented baselines (GraphCL, GRACE, MVGRL, GCA): one view's edge arrays.


def with_edges(
    views: ViewBatch, rows: np.ndarray, edges: list[tuple[np.ndarray, np.ndarray]], sign_rng: KeyedRandom | None
) -> ViewBatch:
    """Views ``rows`` with new undirected edge lists ``(u, v)`` (stored in both directions, sorted by source
    then destination) and recomputed eigen-features; node sets and the other views unchanged."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return views
    part = views.select(rows)
    pairs = [_both_directions(u, v) for u, v in edges]
    part = part.replace(num_edges=np.array([len(s) for s, _ in pairs], dtype=np.int64),
                        src=np.concatenate([s for s, _ in pairs]), dst=np.concatenate([d for _, d in pairs]))
    part = with_eigen_features(part, np.arange(len(rows)), sign_rng)
    return views.update(rows, part)


def _both_directions(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u, v = np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)
    src, dst = np.concatenate([u, v]), np.concatenate([v, u])
    order = np.lexsort((dst, src))
    return src[order], dst[order]


def stochastic_count(x: np.ndarray | float, u: np.ndarray | float) -> np.ndarray:
    """``floor(x + u)``: for ``u ~ U[0, 1)`` an integer with expectation ``x`` (so a rate holds on tiny views,
    where ``int(x)`` would round a 20 % rate down to nothing below 5 nodes).

    >>> stochastic_count(4.6, 0.3), stochastic_count(4.6, 0.5)
    (4, 5)
    """
    out = np.floor(np.asarray(x) + np.asarray(u)).astype(np.int64)
    return int(out) if out.ndim == 0 else out


def undirected_pairs(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(u, v)`` with ``u < v``: each pair of distinct endpoints once, sorted by ``u`` then ``v``.

    >>> undirected_pairs(np.array([2, 0, 1, 1]), np.array([0, 2, 1, 0]))
    (array([0, 0]), array([1, 2]))
    """
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    u, v = np.minimum(src, dst), np.maximum(src, dst)
    keep = u != v
    n = int(v.max()) + 1 if v.size else 1
    codes = distinct(u[keep] * n + v[keep])
    return codes // n, codes % n


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


def grow_subgraph(src: np.ndarray, dst: np.ndarray, n: int, center: int, target: int, draws: np.ndarray) -> np.ndarray:
    """Sorted ids of a connected node set grown from ``center`` up to ``target`` nodes in an ``n``-node view.

    Each step adds the node at position ``floor(draws[t] * f)`` of the sorted frontier (the ``f`` neighbours of
    the set not yet in it); growth stops early when the frontier is empty (the centre's component is used up).
    ``draws`` holds at least ``target - 1`` numbers in ``[0, 1)``.
    """
    order = np.argsort(src, kind="stable")
    indptr, indices = offsets(np.bincount(src, minlength=n)), dst[order]
    selected = {center}
    frontier = set(indices[indptr[center]:indptr[center + 1]].tolist()) - selected
    for t in range(target - 1):
        if not frontier:
            break
        options = sorted(frontier)
        node = options[int(draws[t] * len(options))]
        selected.add(node)
        frontier |= set(indices[indptr[node]:indptr[node + 1]].tolist())
        frontier -= selected
    return np.array(sorted(selected), dtype=np.int64)


def ppr_matrix(u: np.ndarray, v: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """``(n, n)`` MVGRL's personalised-PageRank diffusion ``alpha (I - (1 - alpha) D^-1/2 A D^-1/2)^-1``
    (kavehhassani/mvgrl ``utils.compute_ppr``), symmetric.

    ``A`` is the undirected graph with edges ``(u, v)`` plus a self-loop on every node (MVGRL's ``A + I``, so
    isolated nodes keep their mass), ``D`` its row sums. ``D^-1/2 Pi D^1/2`` is the row-stochastic PPR whose
    row ``i`` is seed ``i``'s distribution (teleport probability ``alpha``).

    >>> p = ppr_matrix(np.array([0]), np.array([1]), 3, 0.2)
    >>> bool(np.allclose(p, p.T)), round(float(p[2, 2]), 6)
    (True, 1.0)
    """
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    a = np.eye(n)
    a[u, v] = a[v, u] = 1.0
    scale = 1.0 / np.sqrt(a.sum(axis=1))
    sym = scale[:, None] * a * scale[None, :]
    return np.linalg.solve(np.eye(n) - (1.0 - alpha) * sym, alpha * np.eye(n))


def heat_matrix(u: np.ndarray, v: np.ndarray, n: int, t: float) -> np.ndarray:
    """``(n, n)`` MVGRL's heat diffusion ``exp(t (A D^-1 - I))`` (Kondor & Lafferty's heat kernel on the random
    walk; MVGRL's paper, eq. 3), a matrix exponential (scipy ``expm``).

    ``A`` is the undirected graph with edges ``(u, v)`` plus a self-loop on every node, as :func:`ppr_matrix`'s, ``D``
    its degrees. Columns sum to 1 (``A D^-1`` is column-stochastic). kavehhassani/mvgrl ``utils.compute_heat``
    applies ``np.exp`` element by element instead, which leaves the entries of non-adjacent nodes at ``e^-t`` and so
    ranks the graph's own edges first: the matrix exponential is the diffusion the paper defines.

    >>> h = heat_matrix(np.array([0, 1]), np.array([1, 2]), 4, 5.0)
    >>> bool(np.allclose(h.sum(axis=0), 1.0)), round(float(h[3, 3]), 6), bool(h[0, 2] > 0)
    (True, 1.0, True)
    """
    from scipy.linalg import expm

    if t <= 0:
        raise ValueError(f"t must be > 0, got {t}")
    a = np.eye(n)
    a[u, v] = a[v, u] = 1.0
    return expm(t * (a / a.sum(axis=0)[None, :] - np.eye(n)))


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
    if s.size == 0 or np.ptp(s) == 0:
        return np.full(s.shape, min(p, p_tau))
    return np.minimum(p * (s.max() - s) / (s.max() - s.mean()), p_tau)


def edge_drop_probabilities(u: np.ndarray, v: np.ndarray, degree: np.ndarray, p: float, p_tau: float) -> np.ndarray:
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

