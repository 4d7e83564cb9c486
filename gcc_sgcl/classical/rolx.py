"""RolX: structural roles by non-negative factorisation of recursive features (Henderson, Gallagher, Eliassi-Rad,
Tong, Basu, Akoglu, Koutra, Faloutsos and Li, KDD 2012), the node rows being each node's role memberships.

No package that installs here implements it (``graphrole``, the maintained one, pins pandas < 2, which has no
build for this numpy), so it is written from the papers with numpy, scipy and scikit-learn:

1. *ReFeX features* (Henderson et al., KDD 2011). Local and egonet features: degree, edges inside the egonet
   (the node, its neighbours and the edges among them) and edges leaving it. Recursion: every feature added in
   the last round is aggregated over each node's neighbours by sum and by mean, for at most ``MAX_ROUNDS`` rounds.
   Each round, every feature is *vertically log-binned* (the fraction ``p = 0.5`` of nodes with the lowest values
   gets bin 0, half of the rest bin 1, and so on; equal values share a bin) and a new feature is kept only when
   its bins differ from those of every feature kept so far (the papers' pruning at tolerance 0); the recursion
   stops when a round keeps nothing. The binned values, counted from 1, are the feature matrix ``V`` (they put
   features of very different scales, degrees and sums of sums, on one scale of small integers; counting from 1
   leaves no node with an all-zero row, which no role could describe).
2. *Roles.* ``V ≈ G F`` by scikit-learn's NMF (least squares, coordinate descent, NNDSVDa start), as the paper
   factorises, for each number of roles ``r`` in ``2 … MAX_ROLES``; ``r`` minimises the paper's description length
   ``b · r · (n + f) + E``, with ``b`` bits per value of ``G`` and ``F`` (each quantised uniformly to ``2^b``
   levels, ``b`` in ``1 … 8`` chosen with ``r``; the paper quantises by Lloyd-Max) and ``E`` the KL divergence of
   ``V`` from the quantised ``G F``, in bits. The rows are ``G`` of the chosen model (unquantised), ``r`` columns.

The graphs are factorised together (their disjoint union): the roles, and so the columns, are shared, and the
two graphs of a similarity dataset get comparable rows. Deterministic but for the NMF's tie-breaking (``rng``
seeds it).

>>> import dgl, torch
>>> star = dgl.to_bidirected(dgl.graph((torch.zeros(5, dtype=torch.int64), torch.arange(1, 6))))
>>> base_features(star)[:2].tolist()
[[5.0, 5.0, 0.0], [1.0, 1.0, 4.0]]
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import dgl
import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import NMF
from sklearn.exceptions import ConvergenceWarning

from gcc_sgcl.classical.common import adjacency

BIN_FRACTION = 0.5
MAX_ROUNDS = 3
MAX_ROLES = 10
MAX_BITS = 8
NMF_ITERATIONS = 500


def base_features(g: dgl.DGLGraph | sp.csr_matrix) -> np.ndarray:
    """Per node: degree, edges inside its egonet, edges leaving its egonet (float64, ``(n, 3)``)."""
    adj = g if sp.issparse(g) else adjacency(g)
    deg = np.diff(adj.indptr).astype(np.float64)
    triangles2 = np.asarray((adj @ adj).multiply(adj).sum(axis=1)).ravel()  # twice the edges among neighbours
    inside = deg + triangles2 / 2
    leaving = adj @ deg - deg - triangles2  # neighbours' edges that go neither to the node nor to a neighbour
    return np.column_stack([deg, inside, leaving])


def log_bins(values: np.ndarray, fraction: float = BIN_FRACTION) -> np.ndarray:
    """Vertical logarithmic binning of one feature: bin ``b`` holds the nodes whose rank share (smallest first,
    ties at their lowest rank) lies in ``[1 - (1 - p)^b, 1 - (1 - p)^(b+1))``.

    >>> log_bins(np.array([5.0, 1.0, 1.0, 2.0, 9.0, 3.0, 4.0, 8.0])).tolist()
    [1, 0, 0, 0, 3, 0, 1, 2]
    """
    top = float(np.abs(values).max())
    # values equal up to rounding (sums taken in another order, e.g. in a renumbered copy) share their bin
    values = np.round(values / top, 10) if top > 0 else values
    order = np.sort(values)
    share = np.searchsorted(order, values, side="left") / len(values)
    return np.floor(np.log(1.0 - share) / np.log(1.0 - fraction) + 1e-12).astype(np.int64)


def refex(adj: sp.csr_matrix, rounds: int = MAX_ROUNDS) -> np.ndarray:
    """The binned ReFeX features ``V`` of the graph ``adj`` (``(n, f)``, small non-negative integers)."""
    deg = np.diff(adj.indptr).astype(np.float64)
    mean = sp.diags(np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)) @ adj
    kept_raw, kept_bins, seen = [], [], set()

    def keep(columns: np.ndarray) -> list[np.ndarray]:
        added = []
        for column in columns.T:
            bins = log_bins(column)
            if bins.tobytes() not in seen:
                seen.add(bins.tobytes())
                kept_raw.append(column)
                kept_bins.append(bins)
                added.append(column)
        return added

    new = keep(base_features(adj))
    for _ in range(rounds):
        if not new:
            break
        block = np.column_stack(new)
        new = keep(np.hstack([adj @ block, mean @ block]))
    return np.column_stack(kept_bins).astype(np.float64) + 1.0


def quantised(m: np.ndarray, bits: int) -> np.ndarray:
    """``m`` (non-negative) rounded to ``2^bits`` evenly spaced levels from 0 to its largest value."""
    top = float(m.max())
    if top <= 0:
        return m.copy()
    step = top / (2**bits - 1)
    return np.round(m / step) * step


def kl_bits(v: np.ndarray, approx: np.ndarray) -> float:
    """The generalised KL divergence ``Σ v log(v / approx) - v + approx`` in bits (0 log 0 = 0)."""
    approx = np.maximum(approx, 1e-12)
    terms = np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0) / approx), 0.0) - v + approx
    return float(terms.sum() / np.log(2))


def roles(v: np.ndarray, rng: np.random.Generator, max_roles: int = MAX_ROLES) -> np.ndarray:
    """The role memberships ``G`` of the model of least description length (see the module docstring)."""
    n, f = v.shape
    best, best_cost = None, np.inf
    seed = int(rng.integers(2**31 - 1))
    for r in range(2, max(2, min(max_roles, n, f)) + 1):
        model = NMF(n_components=r, init="nndsvda", max_iter=NMF_ITERATIONS, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            g = model.fit_transform(v)
        f_matrix = model.components_
        for bits in range(1, MAX_BITS + 1):
            cost = bits * r * (n + f) + kl_bits(v, quantised(g, bits) @ quantised(f_matrix, bits))
            if cost < best_cost:
                best, best_cost = g, cost
    return best


def embed_nodes(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """RolX role memberships of every node of ``graphs`` (factorised together), rows stacked in order (the number
    of roles is chosen by description length: ``hidden`` is unused)."""
    union = sp.block_diag([adjacency(g) for g in graphs], format="csr")
    return roles(refex(union), rng)
