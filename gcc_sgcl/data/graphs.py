"""Turning parsed edge arrays into the simple bidirected DGL graphs every loader returns."""
from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence

import dgl
import networkx as nx
import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import connected_components


def simple_undirected_graph(src: np.ndarray, dst: np.ndarray, num_nodes: int) -> dgl.DGLGraph:
    """A bidirected graph on nodes ``0..num_nodes-1`` with one edge each way per undirected pair.

    Edge direction, duplicates and self-loops in the input are ignored; edges come out sorted by
    ``(src, dst)`` so the result is a function of the edge set alone.

    >>> g = simple_undirected_graph(np.array([0, 1, 1, 2]), np.array([1, 0, 1, 0]), num_nodes=4)
    >>> g.num_nodes(), g.edges()[0].tolist(), g.edges()[1].tolist()
    (4, [0, 0, 1, 2], [1, 2, 0, 0])
    """
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    if src.shape != dst.shape:
        raise ValueError(f"src and dst differ in length: {src.size} vs {dst.size}")
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= num_nodes):
        raise ValueError(f"edge endpoints must lie in [0, {num_nodes})")
    keep = src != dst
    src, dst = src[keep], dst[keep]
    # one sorted key per directed edge; sort + neighbour comparison is much faster than np.unique here
    key = np.concatenate([src * num_nodes + dst, dst * num_nodes + src])
    key.sort()
    key = np.concatenate([key[:1], key[1:][key[1:] != key[:-1]]])
    return dgl.graph(
        (torch.from_numpy(key // num_nodes), torch.from_numpy(key % num_nodes)),
        num_nodes=num_nodes,
        idtype=torch.int64,
    )


def reindex_first_appearance(raw_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map arbitrary ids (integers or strings) to ``0..k-1`` in order of first appearance in ``raw_ids`` (any
    shape).

    Returns ``(new_ids, raw_of_new)``: ``new_ids`` has the shape of ``raw_ids`` and
    ``raw_of_new[new_ids] == raw_ids``.

    >>> reindex_first_appearance(np.array([[30, 10], [10, 20]]))
    (array([[0, 1],
           [1, 2]]), array([30, 10, 20]))
    >>> reindex_first_appearance(np.array(["b", "a", "b"]))[1].tolist()
    ['b', 'a']
    """
    raw_ids = np.asarray(raw_ids)
    unique, first, inverse = np.unique(raw_ids.ravel(), return_index=True, return_inverse=True)
    by_appearance = np.argsort(first, kind="stable")
    rank = np.empty_like(by_appearance)
    rank[by_appearance] = np.arange(by_appearance.size)
    return rank[inverse].reshape(raw_ids.shape), unique[by_appearance]


def id_array(ids: Sequence[Hashable]) -> np.ndarray:
    """Node ids as an array: int64 when every id is an integer, else the ids' strings.

    >>> id_array([3, 1]).dtype, id_array(["a", 2]).tolist()
    (dtype('int64'), ['a', '2'])
    """
    ids = list(ids)
    if all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in ids):
        return np.asarray(ids, dtype=np.int64)
    return np.asarray([str(i) for i in ids], dtype=str)


def graph_from_networkx(g: nx.Graph) -> tuple[dgl.DGLGraph, np.ndarray]:
    """``(graph, ids)``: the simple bidirected graph of any networkx graph (directed, multi- and self-loop
    edges are simplified away), node ``i`` being ``ids[i]``, the ``i``-th node of ``g.nodes``.

    >>> g, ids = graph_from_networkx(nx.Graph([("a", "b"), ("b", "c")]))
    >>> g.num_nodes(), g.num_edges(), ids.tolist()
    (3, 4, ['a', 'b', 'c'])
    """
    nodes = list(g.nodes)
    if not nodes:  # networkx has no adjacency matrix of an empty graph
        return simple_undirected_graph(np.empty(0, np.int64), np.empty(0, np.int64), 0), id_array(nodes)
    adj = nx.to_scipy_sparse_array(g, nodelist=nodes, weight=None, format="coo")
    return simple_undirected_graph(adj.row, adj.col, len(nodes)), id_array(nodes)


def graph_from_scipy(adj: sp.spmatrix | sp.sparray) -> tuple[dgl.DGLGraph, np.ndarray]:
    """``(graph, ids)``: the simple bidirected graph of a square sparse adjacency matrix (any non-zero entry
    is an edge, either direction; an explicit zero is none, as in a ``.mtx`` file; NaN, inf and complex entries are
    refused), ``ids = 0..n-1``.

    >>> g, ids = graph_from_scipy(sp.csr_array(np.array([[0, 1, 0], [0, 0, 0], [0, 0, 0]])))
    >>> g.num_nodes(), g.num_edges(), ids.tolist()
    (3, 2, [0, 1, 2])
    """
    coo = sp.coo_array(adj)
    if coo.ndim != 2 or coo.shape[0] != coo.shape[1]:
        raise ValueError(f"an adjacency matrix must be square, got shape {coo.shape}")
    if coo.dtype.kind not in "biuf":
        raise ValueError(f"an adjacency matrix has real entries, got {coo.dtype} (a complex matrix's imaginary parts "
                         f"would be lost)")
    bad = int(coo.data.size - np.count_nonzero(np.isfinite(coo.data)))
    if bad:
        raise ValueError(f"the adjacency matrix holds {bad} entries that are NaN or inf: an entry is an edge (not 0) "
                         f"or none (0)")
    edge = coo.data != 0
    n = coo.shape[0]
    return simple_undirected_graph(coo.row[edge], coo.col[edge], n), np.arange(n, dtype=np.int64)


def remap_labels(raw: np.ndarray) -> np.ndarray:
    """Labels ``0..C-1`` assigned in sorted order of the distinct raw values (e.g. ``{0, 2} -> {0, 1}``)."""
    _, labels = np.unique(np.asarray(raw, dtype=np.int64), return_inverse=True)
    return labels.astype(np.int64).ravel()


def largest_component(g: dgl.DGLGraph) -> dgl.DGLGraph:
    """The largest connected component of an undirected ``g``, nodes renumbered in their original order."""
    _, component = connected_components(g.adj_external(scipy_fmt="csr"), directed=False)
    keep = np.flatnonzero(component == np.bincount(component).argmax())
    return dgl.node_subgraph(g, torch.from_numpy(keep), store_ids=False)


def num_undirected_edges(g: dgl.DGLGraph) -> int:
    """Number of undirected edges of a bidirected graph."""
    return g.num_edges() // 2


def check_simple_undirected(g: dgl.DGLGraph, what: str = "graph") -> None:
    """Raise ``ValueError`` unless ``g`` follows the loader conventions: int64 ids, every edge present in
    both directions, no self-loops, no duplicate edges."""
    if g.idtype != torch.int64:
        raise ValueError(f"{what}: node ids are {g.idtype}, expected torch.int64")
    src, dst = (t.numpy() for t in g.edges())
    n = g.num_nodes()
    if (src == dst).any():
        raise ValueError(f"{what}: has self-loops")
    forward = np.sort(src * n + dst)
    if (forward[1:] == forward[:-1]).any():
        raise ValueError(f"{what}: has duplicate edges")
    if not np.array_equal(forward, np.sort(dst * n + src)):
        raise ValueError(f"{what}: not bidirected (some edge lacks its reverse)")


def graphs_digest(graphs: Sequence[dgl.DGLGraph]) -> str:
    """sha256 of the graphs' node and edge counts and their edges sorted by ``(src, dst)``, in order: equal for
    equal graphs (the same nodes numbered alike and the same edges, whatever their edge ids), different for any
    edited edge. The loaders' graphs are sorted already (:func:`simple_undirected_graph`) and hashed as they are;
    others are sorted first.

    >>> a = dgl.graph(([0, 1, 1], [1, 0, 2]))
    >>> reordered, fewer = dgl.graph(([1, 0, 1], [2, 1, 0])), dgl.graph(([0, 1], [1, 0]), num_nodes=3)
    >>> graphs_digest([a]) == graphs_digest([reordered]), graphs_digest([a]) == graphs_digest([fewer])
    (True, False)
    """
    digest = hashlib.sha256()
    for g in graphs:
        digest.update(np.array([g.num_nodes(), g.num_edges()], dtype=np.int64))
        src, dst = (ends.numpy().astype(np.int64) for ends in g.edges())
        key = src * max(g.num_nodes(), 1) + dst
        if np.any(key[1:] < key[:-1]):
            order = np.argsort(key, kind="stable")
            src, dst = src[order], dst[order]
        digest.update(np.ascontiguousarray(src))
        digest.update(np.ascontiguousarray(dst))
    return digest.hexdigest()
