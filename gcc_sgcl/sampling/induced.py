"""The one view builder: induced subgraphs of node sets of a parent graph, with their eigen-features.

:class:`GraphIndex` holds a parent graph's out-edge CSR (a pre-training corpus is the disjoint union of its
graphs); :func:`build_views` turns ``B`` node sets into a :class:`~gcc_sgcl.sampling.batch.ViewBatch` with one
vectorised pass over the CSR (induced edges) and batched eigendecompositions (:mod:`.spectral`);
:func:`with_eigen_features` recomputes the eigen-features of views whose structure an augmentation changed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import dgl
import numpy as np
import scipy.sparse as sp

from gcc_sgcl.config import PE_SIGNS, VISIT_BUDGETS
from gcc_sgcl.sampling.batch import NodeSets, ViewBatch, concat, offsets, positions, ranges, runs, segment_ids
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.rwr import max_nodes_per_seed, rwr_visits, view_node_sets
from gcc_sgcl.sampling.spectral import eigen_arrays, random_signs


# Members with more out-neighbours than this are probed for the view's other members instead of having all
# their edges scanned: a hub's thousands of edges would otherwise dominate the cost of its views.
HUB_DEGREE = 64
PROBE_RATIO = 8  # probing a member costs about this many scanned edges (a binary search; measured: 4 and 16 slower)
# cells of the (view, node) lookup table of one chunk of views: 2**22 (16 MiB of int32, ~100 MiB less transient memory
# than 2**24 on a 1 M-node graph's views, no slower; issue 66)
MAX_TABLE_ENTRIES = 2**22


@dataclass(frozen=True)
class GraphIndex:
    """Out-edge CSR of a parent graph (or of the disjoint union of several), heads sorted within each row, with
    in-degrees and the sorted codes ``u * num_nodes + v`` of the out-edges of hubs (``HUB_DEGREE``); ``rows`` is
    the same CSR as a scipy array (sharing ``indptr`` and ``indices``; one byte per edge more), whose row indexing
    gathers the out-edges of many nodes in one compiled loop; ``upper`` each edge once, from its lower-ranked end
    (:func:`oriented_edges`; ``None`` unless the graph is simple and undirected)."""

    indptr: np.ndarray
    indices: np.ndarray
    in_degree: np.ndarray
    node_offsets: np.ndarray  # first union id of each member graph (``[0]`` for one graph)
    hub_codes: np.ndarray
    rows: sp.csr_array
    upper: sp.csr_array | None = None

    @classmethod
    def of(cls, graphs: dgl.DGLGraph | Sequence[dgl.DGLGraph]) -> GraphIndex:
        """The CSR of one graph, or of the disjoint union of ``graphs`` (graph ``i``'s node ``v`` has union id
        ``node_offsets[i] + v``). One graph's CSR arrays are DGL's own, not copied, when already sorted."""
        graphs = [graphs] if isinstance(graphs, dgl.DGLGraph) else list(graphs)
        if not graphs:
            raise ValueError("no graphs given")
        csrs = [tuple(t.numpy().astype(np.int64, copy=False) for t in g.adj_tensors("csr")[:2]) for g in graphs]
        node_off = offsets(np.array([g.num_nodes() for g in graphs], dtype=np.int64))
        if len(graphs) == 1:
            indptr, indices = csrs[0]
        else:
            edge_off = offsets(np.array([len(idx) for _, idx in csrs], dtype=np.int64))
            indptr = np.concatenate([ptr[:-1] + e for (ptr, _), e in zip(csrs, edge_off)] + [edge_off[-1:]])
            indices = np.concatenate([idx + base for (_, idx), base in zip(csrs, node_off)])
        n = int(node_off[-1])
        unsorted = indices[1:] < indices[:-1]
        starts = indptr[1:-1]
        unsorted[starts[(starts > 0) & (starts < len(indices))] - 1] = False  # a new row may start lower
        if unsorted.any():
            indices = indices[np.lexsort((indices, segment_ids(np.diff(indptr))))]
        degree = np.diff(indptr)
        upper = oriented_edges(indptr, indices)
        hubs = np.flatnonzero(degree > HUB_DEGREE)
        hub_codes = np.repeat(hubs, degree[hubs]) * n + indices[ranges(indptr, hubs)]  # sorted: row, then head
        rows = sp.csr_array((np.ones(len(indices), dtype=np.int8), indices, indptr), shape=(n, n))
        return cls(indptr, indices, np.bincount(indices, minlength=n), node_off[:-1], hub_codes, rows, upper)

    @property
    def num_nodes(self) -> int:
        return len(self.indptr) - 1


def oriented_edges(indptr: np.ndarray, indices: np.ndarray) -> sp.csr_array | None:
    """The edges ``u -> v`` of a simple undirected graph (every edge stored both ways, once, no self-loop; heads
    sorted in each row) with ``v`` ranked above ``u`` by degree, then id, as a CSR; ``None`` for any other graph.

    Each edge is kept once, at its lower-ranked end, so a node's list holds only its neighbours of higher degree: a
    hub's is short, and the induced edges of a view are found by scanning a few edges per member
    (:func:`induced_edges`).

    >>> star = oriented_edges(np.array([0, 3, 4, 5, 6]), np.array([1, 2, 3, 0, 0, 0]))  # 0 is the centre
    >>> star.indptr.tolist(), star.indices.tolist()
    ([0, 0, 1, 2, 3], [0, 0, 0])
    >>> oriented_edges(np.array([0, 1, 1]), np.array([1])) is None  # 0 -> 1 without 1 -> 0
    True
    """
    n = len(indptr) - 1
    degree = np.diff(indptr)
    src = segment_ids(degree)
    later = np.ones(len(indices), dtype=bool)
    later[indptr[:-1][degree > 0]] = False  # the first head of each row
    if (src == indices).any() or (later[1:] & (indices[1:] <= indices[:-1])).any():
        return None  # a self-loop, or a repeated edge
    reversed_codes = indices * n + src
    reversed_codes.sort()  # equal to the codes src * n + indices (sorted: rows, then heads) iff symmetric
    for a in range(0, len(indices), 2**22):  # compared a block at a time: a 1 M-node graph's codes are 80 MB
        if not np.array_equal(reversed_codes[a:a + 2**22], src[a:a + 2**22] * n + indices[a:a + 2**22]):
            return None  # an edge one way only
    del reversed_codes
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), degree))] = np.arange(n)
    keep = rank[src] < rank[indices]
    return sp.csr_array((np.ones(int(keep.sum()), dtype=np.int8), indices[keep],
                         offsets(np.bincount(src[keep], minlength=n))), shape=(n, n))


def induced_edges(index: GraphIndex, sets: NodeSets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(num_edges, src, dst)`` of the subgraphs induced on ``B`` node sets (distinct ids within a set).

    Local id ``i`` of view ``b`` is its ``i``-th node; edges come by source, then by head id (the parent's sorted
    CSR order, as ``dgl.node_subgraph``), repeated edges as often as in the parent. Vectorised over chunks of
    views: the out-edges of ordinary members are looked up in a (view, node) -> local id table of the chunk; a
    hub member (more than ``HUB_DEGREE`` out-neighbours, and ``PROBE_RATIO`` times its view's size) is instead
    probed for each member of its view in the hubs' edge codes.
    """
    parts = [_induced_chunk(index, sets.select(rows)) for rows in _table_chunks(sets.num_nodes)]
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return tuple(np.concatenate(arrays) for arrays in zip(*parts))


def _table_chunks(num_nodes: np.ndarray, max_entries: int = MAX_TABLE_ENTRIES) -> list[np.ndarray]:
    """Consecutive groups of views whose lookup table (views x members) has at most ``max_entries`` cells."""
    chunks, start, members = [], 0, 0
    for b, n in enumerate(num_nodes.tolist()):
        if b > start and (b - start + 1) * (members + n) > max_entries:
            chunks.append(np.arange(start, b))
            start, members = b, 0
        members += n
    if len(num_nodes):
        chunks.append(np.arange(start, len(num_nodes)))
    return chunks


def _induced_chunk(index: GraphIndex, sets: NodeSets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`induced_edges` of one chunk of views (its lookup table within ``MAX_TABLE_ENTRIES`` cells)."""
    if index.upper is not None:
        return _induced_undirected(index, sets)
    num_nodes, nodes = sets.num_nodes, sets.nodes
    n = index.num_nodes
    view = segment_ids(num_nodes)
    local = positions(num_nodes)
    degree = index.indptr[nodes + 1] - index.indptr[nodes]
    hub = (degree > HUB_DEGREE) & (degree > PROBE_RATIO * num_nodes[view])
    # ordinary members: scan their out-edges for members of their view
    scanned = np.flatnonzero(~hub)
    member, other = _edges_within_views(sets, view, scanned, index.rows[nodes[scanned]], n)
    scan = (view[member], local[member], local[other])
    # hub members: probe every member of the view
    hubs = np.flatnonzero(hub)
    size = num_nodes[view[hubs]]
    pair_src = np.repeat(hubs, size)
    pair_dst = runs(offsets(num_nodes)[view[hubs]], size)
    codes = nodes[pair_src] * n + nodes[pair_dst]
    first = np.searchsorted(index.hub_codes, codes, side="left")
    hit = np.flatnonzero(index.hub_codes[np.minimum(first, len(index.hub_codes) - 1)] == codes)  # one search;
    multiplicity = np.searchsorted(index.hub_codes, codes[hit], side="right") - first[hit]  # repeats: hits only
    pair_src, pair_dst = np.repeat(pair_src[hit], multiplicity), np.repeat(pair_dst[hit], multiplicity)
    order = np.lexsort((nodes[pair_dst], pair_src))  # by member, then head id: the CSR order
    pair_src, pair_dst = pair_src[order], pair_dst[order]
    probed = (view[pair_src], local[pair_src], local[pair_dst])
    # scanned edges come member by member already; a hub's probed edges go after those of the members before it
    at = offsets(np.bincount(member, minlength=len(nodes)))[pair_src]
    edge_view, src, dst = (np.insert(a, at, b) for a, b in zip(scan, probed))
    return np.bincount(edge_view, minlength=len(num_nodes)), src, dst


def _edges_within_views(sets: NodeSets, view: np.ndarray, scanned: np.ndarray, out_edges: sp.csr_array,
                        num_parent_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(member, other)`` member rows of ``sets`` (``view``: each member row's view): one pair per edge of
    ``out_edges`` (the CSR rows of the members ``scanned``, in order) whose head is a member of the scanning member's
    view, in edge order. The heads are looked up in the chunk's flat (view, node) -> member row + 1 table, whose
    column 0 (0) answers for nodes of no view."""
    num_nodes, nodes = sets.num_nodes, sets.nodes
    width = len(nodes) + 1  # a column per member row; a node in several views keeps one of its rows' columns
    slot = np.zeros(num_parent_nodes, dtype=np.int32)
    slot[nodes] = np.arange(1, width)
    table = np.zeros(len(num_nodes) * width, dtype=np.int32)
    table[view * width + slot[nodes]] = np.arange(1, width)
    found = table[np.repeat(view[scanned] * width, np.diff(out_edges.indptr)) + slot[out_edges.indices]]
    inside = np.flatnonzero(found)
    return scanned[np.searchsorted(out_edges.indptr, inside, side="right") - 1], found[inside].astype(np.int64) - 1


def _induced_undirected(index: GraphIndex, sets: NodeSets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_induced_chunk` of a simple undirected graph: each member scans its edges to higher-ranked nodes
    (``index.upper``) for members of its view, each edge found gives both directions, and a sort by source member,
    then head id, puts them in the parent's CSR order."""
    num_nodes, nodes = sets.num_nodes, sets.nodes
    view = segment_ids(num_nodes)
    lower, higher = _edges_within_views(sets, view, np.arange(len(nodes)), index.upper[nodes], index.num_nodes)
    src, dst = np.concatenate([lower, higher]), np.concatenate([higher, lower])
    order = np.argsort(src * index.num_nodes + nodes[dst])  # distinct keys: any sort gives this order
    src, dst = src[order], dst[order]
    local = positions(num_nodes)
    return np.bincount(view[src], minlength=len(num_nodes)), local[src], local[dst]


def sign_draws(pe_sign: str, rng: KeyedRandom | None, k: int) -> np.ndarray | None:
    """``(B, k)`` random column signs (``pe_sign="random"``, from ``rng``'s ``"pe_sign"`` stream) or ``None``."""
    if pe_sign not in PE_SIGNS:
        raise ValueError(f"pe_sign must be one of {PE_SIGNS}, got {pe_sign!r}")
    if pe_sign == "canonical":
        return None
    if rng is None:
        raise ValueError("pe_sign='random' needs a KeyedRandom for the signs")
    return random_signs(rng.child("pe_sign").uniform(k))


def flip_signs(views: ViewBatch, signs: np.ndarray) -> ViewBatch:
    """``views`` with the eigenvector columns of view ``b`` multiplied by ``signs[b]`` (``(B, k)`` of ±1): the
    eigen-features of another sign draw, without decomposing again (row norms, hence ``pe``, are unchanged up to
    those signs)."""
    signs = np.asarray(signs)
    if signs.shape != (len(views), views.k):
        raise ValueError(f"signs must have shape {(len(views), views.k)}, got {signs.shape}")
    rows = signs[segment_ids(views.num_nodes)].astype(views.pe.dtype)
    return views.replace(pe=views.pe * rows, eigvec=views.eigvec * rows)


def build_views(
    index: GraphIndex,
    sets: NodeSets,
    k: int,
    pe_sign: str = "canonical",
    rng: KeyedRandom | None = None,
    seed_pos: np.ndarray | None = None,
) -> ViewBatch:
    """Views induced on node sets, with eigen-features.

    ``seed_pos`` is each view's centre (default: its first node, as RWR views). ``pe_sign`` and ``rng``
    choose the eigenvector signs (:func:`sign_draws`, row ``b`` of ``rng`` for view ``b``).
    """
    num_edges, src, dst = induced_edges(index, sets)
    pe, eigvec, eigval = eigen_arrays(sets.num_nodes, num_edges, src, dst, k, sign_draws(pe_sign, rng, k))
    return ViewBatch(
        num_nodes=sets.num_nodes, num_edges=num_edges, src=src, dst=dst, nid=sets.nodes,
        seed_pos=np.zeros(len(sets), dtype=np.int64) if seed_pos is None else np.asarray(seed_pos, np.int64),
        pe=pe, eigvec=eigvec, eigval=eigval, pe_sign=pe_sign,
    )


def rwr_node_sets(
    index: GraphIndex, starts: np.ndarray, rw_hops: int, restart_prob: float, walk_length: int, rng: KeyedRandom,
    budget_power: float = VISIT_BUDGETS["pretrain"],
) -> NodeSets:
    """The node set of one RWR view per start node (row ``b`` of ``rng`` walks from ``starts[b]``; visit budget
    :func:`~gcc_sgcl.sampling.rwr.max_nodes_per_seed` with ``budget_power``)."""
    starts = np.asarray(starts, dtype=np.int64)
    budgets = max_nodes_per_seed(index.in_degree[starts], rw_hops, restart_prob, budget_power)
    counts, visits = rwr_visits(index.indptr, index.indices, starts, budgets, restart_prob, walk_length, rng)
    return NodeSets(*view_node_sets(starts, counts, visits, index.num_nodes))


def with_eigen_features(views: ViewBatch, rows: np.ndarray, rng: KeyedRandom | None) -> ViewBatch:
    """``views`` with the eigen-features of views ``rows`` recomputed from their edges, signs chosen by the
    batch's ``pe_sign`` rule (``rng`` rows align with ``rows``)."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return views
    part = views.select(rows)
    pe, eigvec, eigval = eigen_arrays(part.num_nodes, part.num_edges, part.src, part.dst, views.k,
                                      sign_draws(views.pe_sign, rng, views.k))
    return views.update(rows, part.replace(pe=pe, eigvec=eigvec, eigval=eigval))


def whole_graph_views(
    graphs: Sequence[dgl.DGLGraph],
    k: int,
    pe_sign: str = "canonical",
    rng: KeyedRandom | None = None,
    max_edges: int = 2**21,
) -> ViewBatch:
    """Each graph as one view (GCC's ``entire_graph``), its centre the highest-out-degree node.

    Graphs are built together, in chunks of at most ``max_edges`` edges (row ``i`` of ``rng`` for graph ``i``).
    """
    graphs = list(graphs)
    edges = np.cumsum([g.num_edges() for g in graphs])
    chunk = (edges - 1) // max_edges if len(graphs) else np.zeros(0, dtype=np.int64)
    parts = []
    for c in np.unique(chunk):
        members = np.flatnonzero(chunk == c)
        index = GraphIndex.of([graphs[i] for i in members])
        sizes = np.diff(np.append(index.node_offsets, index.num_nodes))
        out_degree = np.diff(index.indptr)
        seed_pos = np.array([int(np.argmax(out_degree[a:a + n])) if n else 0
                             for a, n in zip(index.node_offsets, sizes)], dtype=np.int64)
        views = build_views(index, NodeSets(sizes, np.arange(index.num_nodes)), k, pe_sign,
                            None if rng is None else rng.take(members), seed_pos)
        parts.append(views.replace(nid=views.nid - np.repeat(index.node_offsets, sizes)))
    return concat(parts)
