"""struc2vec: node vectors from structural identity (Ribeiro, Saverese and Figueiredo, KDD 2017).

No PyPI package implements it, so it is written here from the paper with numpy/scipy and gensim's ``Word2Vec``:

1. *Rings.* ``R_k(u)``, the nodes at hop distance exactly ``k`` from ``u``, for ``k = 0 … K`` with ``K = LAYERS``
   = 3 (the paper's OPT3: a fixed number of layers instead of the diameter; 3 is this project's choice). Found by a
   breadth-first search limited to ``K`` hops (scipy's ``dijkstra`` with ``unweighted=True`` on the CSR
   adjacency). Each ring is described by its ordered degree sequence, compressed as the paper's OPT1 into
   ``(degree, count)`` pairs in increasing degree.
2. *Structural distance.* ``f_k(u, v) = f_{k-1}(u, v) + g(s(R_k(u)), s(R_k(v)))``, ``f_{-1} = 0``, defined while
   both rings are non-empty; ``g`` is the dynamic-time-warping distance (the paper's) with OPT1's element cost
   ``(max(a, b) / min(a, b) - 1) · max(count_a, count_b)``. A degree 0 (an isolated node's ``R_0``, where the
   paper's ratio is undefined) is taken as ``ISOLATED_DEGREE`` = ½ in the cost: isolated nodes are at distance 0
   from each other and at least 1 from any other node; no other degree is changed (this project's choice). The
   DTW runs over batches of pairs at once, one numpy step per anti-diagonal of the dynamic programme, on padded
   sequences; no sequence is truncated.
3. *Candidate pairs* (the paper's OPT2: about ``log n`` nodes of nearest degree on each side). The exact rule
   here: sort the nodes by degree (ties by node number) and pair each node with the ``L = ⌈log2 n⌉`` nodes
   before and after it in that order, so a node has at most ``2L`` candidates and there are fewer than ``n L``
   pairs.
4. *Multilayer graph* (the paper's). Layer ``k`` joins the candidate pairs whose ``f_k`` is defined, with weight
   ``w_k(u, v) = exp(-f_k(u, v))``. Between layers, ``u_k → u_{k+1}`` weighs ``log(Γ_k(u) + e)`` and
   ``u_k → u_{k-1}`` weighs 1, ``Γ_k(u)`` being the number of ``u``'s layer-``k`` edges heavier than the mean
   edge weight of layer ``k`` (over the layer's edges: the candidate pairs, as OPT2 leaves them). ``u_{k+1}`` is
   reachable only where ``u`` has layer-``k+1`` edges; there is no layer below 0 nor above ``K`` (the paper's
   edges), so the layer change from layer 0 always goes up and from the top always down.
5. *Biased walks* (the paper's). A walk starts at its node in layer 0; each step it stays in its layer with
   probability ``STAY`` = 0.3 and moves to a neighbour ``v`` with probability ``∝ w_k(u, v)``, recording ``v``;
   otherwise it changes layer, up or down in proportion to the two cross-layer weights, recording nothing (the
   paper: a node enters the context only on steps within a layer). The paper gives no value of ``q``; 0.3 is
   ``ge``'s documented default (``stay_prob=0.3``) and this project's choice. A walk that cannot change layer
   steps within it. ``WALK_LENGTH`` = 80 recorded nodes, ``WALKS_PER_NODE`` = 10 (the paper's); the walks of
   one round start at every node in an order drawn from ``rng``; all walkers advance together (numpy).
6. *Skip-gram.* gensim's ``Word2Vec``: ``sg=1``, window ``WINDOW`` = 5 (the window of the authors' README
   command), ``hidden`` dimensions, ``min_count`` 0 (every node gets a row), gensim's defaults otherwise
   (negative sampling 5, 5 epochs, learning rate 0.025), one worker and a seed drawn from ``rng`` so that
   the rows are reproducible. One float32 row per node, in node order.

Several graphs (the two of a similarity dataset) are embedded as their disjoint union: rings stay within each
graph, but the structural distance is defined between nodes of different graphs, candidate pairs cross graphs
and one skip-gram model embeds every node, so the rows of the two graphs are comparable.

>>> star = sp.csr_matrix(([1.0] * 8, ([0, 0, 0, 0, 1, 2, 3, 4], [1, 2, 3, 4, 0, 0, 0, 0])), shape=(5, 5))
>>> [(p[:3].tolist(), d[:2].tolist(), c[:2].tolist()) for p, d, c in rings(star, 1)]
[([0, 1, 2], [4, 1], [1, 1]), ([0, 1, 2], [1, 4], [4, 1])]
>>> pairs, f = structural_distances(star, 1)
>>> hub = (pairs == 0).any(axis=1)
>>> float(f[~hub].max()), f[hub].min(axis=0).tolist()
(0.0, [3.0, 15.0])
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import dgl
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from gcc_sgcl.classical.common import adjacency

LAYERS = 3
STAY = 0.3
WALK_LENGTH = 80
WALKS_PER_NODE = 10
WINDOW = 5
ISOLATED_DEGREE = 0.5
DTW_CELLS = 2**22  # cells of one batch's dynamic programme (memory, not a cap on the sequences)

Ring = tuple[np.ndarray, np.ndarray, np.ndarray]  # (ptr, degrees, counts): node u's pairs at ptr[u]:ptr[u+1]


def rings(adj: sp.csr_matrix, layers: int = LAYERS) -> list[Ring]:
    """For each ``k = 0 … layers``, every node's compressed ordered degree sequence of ``R_k`` (CSR-like)."""
    n = adj.shape[0]
    deg = np.diff(adj.indptr).astype(np.int64)
    base = int(deg.max(initial=0)) + 1
    parts: list[list[np.ndarray]] = [[] for _ in range(layers + 1)]
    chunk = max(1, DTW_CELLS // max(n, 1))
    for start in range(0, n, chunk):
        sources = np.arange(start, min(n, start + chunk))
        dist = dijkstra(adj, directed=False, indices=sources, unweighted=True, limit=layers)
        for k in range(layers + 1):
            rows, cols = np.nonzero(dist == k)
            parts[k].append((rows + start) * base + deg[cols])
    out = []
    for k in range(layers + 1):
        keys, counts = np.unique(np.concatenate(parts[k]), return_counts=True)  # by node, then degree
        ptr = np.zeros(n + 1, dtype=np.int64)
        ptr[1:] = np.cumsum(np.bincount(keys // base, minlength=n))
        out.append((ptr, keys % base, counts))
    return out


def element_cost(a: np.ndarray, count_a: np.ndarray, b: np.ndarray, count_b: np.ndarray) -> np.ndarray:
    """OPT1's cost of matching the compressed elements ``(a, count_a)`` and ``(b, count_b)``.

    >>> element_cost(np.array([1, 4]), np.array([3, 1]), np.array([2, 4]), np.array([1, 5])).tolist()
    [3.0, 0.0]
    """
    a = np.maximum(a, ISOLATED_DEGREE)
    b = np.maximum(b, ISOLATED_DEGREE)
    return (np.maximum(a, b) / np.minimum(a, b) - 1.0) * np.maximum(count_a, count_b)


def batched_dtw(a: np.ndarray, count_a: np.ndarray, len_a: np.ndarray,
                b: np.ndarray, count_b: np.ndarray, len_b: np.ndarray) -> np.ndarray:
    """DTW distances of ``B`` pairs of compressed sequences, padded to ``(B, LA)`` and ``(B, LB)`` (the first
    ``len_a[i]`` / ``len_b[i]`` entries of row ``i`` are used): ``D[i, j] = c(i, j) + min(D[i-1, j], D[i, j-1],
    D[i-1, j-1])``, each anti-diagonal of ``D`` computed for the whole batch at once."""
    size, la, lb = a.shape[0], a.shape[1], b.shape[1]
    cost = element_cost(a.T[:, None, :], count_a.T[:, None, :], b.T[None, :, :], count_b.T[None, :, :])
    d = np.full((la + 1, lb + 1, size), np.inf)
    d[0, 0] = 0.0
    for s in range(2, la + lb + 1):
        i = np.arange(max(1, s - lb), min(la, s - 1) + 1)
        j = s - i
        best = np.minimum(np.minimum(d[i - 1, j], d[i, j - 1]), d[i - 1, j - 1])
        d[i, j] = cost[i - 1, j - 1] + best
    return d[len_a, len_b, np.arange(size)]


def _padded(ring: Ring, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ring sequences of ``nodes``, padded (degree 1, count 0: cost 0) to the longest, and their lengths."""
    ptr, degrees, counts = ring
    length = ptr[nodes + 1] - ptr[nodes]
    pos = ptr[nodes][:, None] + np.arange(int(length.max()))
    inside = pos < ptr[nodes + 1][:, None]
    pos = np.minimum(pos, len(degrees) - 1)
    return np.where(inside, degrees[pos], 1), np.where(inside, counts[pos], 0), length


def ring_dtw(ring: Ring, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``g(s(R_k(u)), s(R_k(v)))`` for each pair (both rings non-empty), in batches of similar lengths."""
    ptr = ring[0]
    longest = np.maximum(ptr[u + 1] - ptr[u], ptr[v + 1] - ptr[v])
    order = np.argsort(longest, kind="stable")
    out = np.empty(len(u))
    start = 0
    while start < len(order):
        end = start + 1
        for _ in range(2):  # size the batch by the longest sequence it will hold
            end = min(len(order), start + max(1, DTW_CELLS // (int(longest[order[end - 1]]) + 1) ** 2))
        batch = order[start:end]
        out[batch] = batched_dtw(*_padded(ring, u[batch]), *_padded(ring, v[batch]))
        start = end
    return out


def candidate_pairs(deg: np.ndarray) -> np.ndarray:
    """OPT2's pairs ``(p, 2)``: each node with the ``⌈log2 n⌉`` nodes on each side of it in degree order."""
    n = len(deg)
    order = np.lexsort((np.arange(n), deg))
    reach = max(1, math.ceil(math.log2(n))) if n > 1 else 0
    pairs = [np.column_stack([order[:-j], order[j:]]) for j in range(1, min(reach, n - 1) + 1)]
    return np.concatenate(pairs) if pairs else np.empty((0, 2), dtype=np.int64)


def structural_distances(adj: sp.csr_matrix, layers: int = LAYERS) -> tuple[np.ndarray, np.ndarray]:
    """The candidate pairs and their ``f_k``, ``(p, layers + 1)``, NaN where a ring is empty."""
    ring_list = rings(adj, layers)
    pairs = candidate_pairs(np.diff(adj.indptr))
    f = np.full((len(pairs), layers + 1), np.nan)
    defined = np.ones(len(pairs), dtype=bool)
    previous = np.zeros(len(pairs))
    for k, ring in enumerate(ring_list):
        length = np.diff(ring[0])
        defined &= (length[pairs[:, 0]] > 0) & (length[pairs[:, 1]] > 0)
        idx = np.flatnonzero(defined)
        previous[idx] += ring_dtw(ring, pairs[idx, 0], pairs[idx, 1])
        f[idx, k] = previous[idx]
    return pairs, f


class Multilayer:
    """The multilayer graph: per layer a CSR of in-layer transitions (cumulative probabilities ``∝ w_k``, offset by
    the row number so one ``searchsorted`` samples every walker) and the cross-layer weights ``up[k, u]``,
    ``down[k, u]`` (0 where that move does not exist)."""

    def __init__(self, n: int, pairs: np.ndarray, f: np.ndarray):
        layers = f.shape[1]
        self.ptr, self.cols, self.keys = [], [], []
        gamma = np.zeros((layers, n))
        has_edges = np.zeros((layers, n), dtype=bool)
        for k in range(layers):
            keep = ~np.isnan(f[:, k])
            u, v, dist = pairs[keep, 0], pairs[keep, 1], f[keep, k]
            if len(dist):
                weight = np.exp(-dist)
                heavy = weight > weight.mean()
                gamma[k] = np.bincount(u[heavy], minlength=n) + np.bincount(v[heavy], minlength=n)
            rows, cols, dist = np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([dist, dist])
            order = np.lexsort((cols, rows))
            rows, cols, dist = rows[order], cols[order], dist[order]
            ptr = np.zeros(n + 1, dtype=np.int64)
            ptr[1:] = np.cumsum(np.bincount(rows, minlength=n))
            has_edges[k] = np.diff(ptr) > 0
            # exp(-f) shifted by each row's smallest f: the same probabilities, without underflow to 0 / 0
            nearest = np.full(n, np.inf)
            np.minimum.at(nearest, rows, dist)
            p = np.exp(-(dist - nearest[rows]))
            p /= np.bincount(rows, weights=p, minlength=n)[rows]
            within = np.cumsum(p) - np.repeat(np.concatenate([[0.0], np.cumsum(p)])[ptr[:-1]], np.diff(ptr))
            within[ptr[1:][has_edges[k]] - 1] = 1.0
            self.ptr.append(ptr)
            self.cols.append(cols)
            self.keys.append(rows + within)
        self.up = np.zeros((layers, n))
        self.up[:-1] = np.where(has_edges[1:], np.log(gamma[:-1] + math.e), 0.0)
        self.down = np.zeros((layers, n))
        self.down[1:] = 1.0

    def step(self, k: int, u: np.ndarray, r: np.ndarray) -> np.ndarray:
        """The neighbours in layer ``k`` that uniforms ``r`` pick for nodes ``u`` (a node without any stays)."""
        ptr = self.ptr[k]
        if len(self.cols[k]) == 0:
            return u
        idx = np.searchsorted(self.keys[k], u + r, side="right")
        idx = np.clip(idx, ptr[u], np.maximum(ptr[u + 1] - 1, ptr[u]))
        return np.where(ptr[u + 1] > ptr[u], self.cols[k][np.minimum(idx, len(self.cols[k]) - 1)], u)


def biased_walks(graph: Multilayer, n: int, rng: np.random.Generator, walks_per_node: int = WALKS_PER_NODE,
                 length: int = WALK_LENGTH, stay: float = STAY) -> np.ndarray:
    """``(walks_per_node · n, length)`` walks on the multilayer graph, all walkers advanced together."""
    starts = np.concatenate([rng.permutation(n) for _ in range(walks_per_node)])
    walks = np.empty((len(starts), length), dtype=np.int64)
    walks[:, 0] = starts
    node, layer = starts.copy(), np.zeros(len(starts), dtype=np.int64)
    filled = np.ones(len(starts), dtype=np.int64)
    while True:
        active = np.flatnonzero(filled < length)
        if not len(active):
            return walks
        u, k = node[active], layer[active]
        up, down = graph.up[k, u], graph.down[k, u]
        within = (rng.random(len(active)) < stay) | (up + down == 0)
        moving = ~within
        rises = rng.random(int(moving.sum())) * (up[moving] + down[moving]) < up[moving]
        layer[active[moving]] += np.where(rises, 1, -1)
        r = rng.random(int(within.sum()))
        walkers, at, their_layer = active[within], u[within], k[within]
        for level in np.unique(their_layer):
            sel = their_layer == level
            node[walkers[sel]] = graph.step(int(level), at[sel], r[sel])
        walks[walkers, filled[walkers]] = node[walkers]
        filled[walkers] += 1


def struc2vec(adj: sp.csr_matrix, hidden: int, rng: np.random.Generator, layers: int = LAYERS,
              walks_per_node: int = WALKS_PER_NODE) -> np.ndarray:
    """The ``(n, hidden)`` struc2vec rows of the graph ``adj`` (see the module docstring)."""
    # imported here: only the skip-gram baselines need gensim
    from gensim.models import Word2Vec

    if hidden < 1:
        raise ValueError(f"struc2vec needs hidden >= 1, got {hidden}")
    n = adj.shape[0]
    pairs, f = structural_distances(adj, layers)
    walks = biased_walks(Multilayer(n, pairs, f), n, rng, walks_per_node)
    names = [str(i) for i in range(n)]
    sentences = [[names[x] for x in walk] for walk in walks.tolist()]
    model = Word2Vec(sentences, vector_size=hidden, window=WINDOW, min_count=0, sg=1, workers=1,
                     seed=int(rng.integers(2**31 - 1)))
    return np.stack([model.wv[name] for name in names]).astype(np.float32)


def embed_nodes(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """struc2vec rows of every node of ``graphs``, embedded together as their disjoint union, stacked in order."""
    return struc2vec(sp.block_diag([adjacency(g) for g in graphs], format="csr"), hidden, rng)
