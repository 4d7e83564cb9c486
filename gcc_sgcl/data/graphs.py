"""Turning parsed edge arrays into the simple bidirected DGL graphs every loader returns."""
from __future__ import annotations

import dgl
import numpy as np
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
    """Map arbitrary integer ids to ``0..k-1`` in order of first appearance in ``raw_ids`` (any shape).

    Returns ``(new_ids, raw_of_new)``: ``new_ids`` has the shape of ``raw_ids`` and
    ``raw_of_new[new_ids] == raw_ids``.

    >>> reindex_first_appearance(np.array([[30, 10], [10, 20]]))
    (array([[0, 1],
           [1, 2]]), array([30, 10, 20]))
    """
    raw_ids = np.asarray(raw_ids, dtype=np.int64)
    unique, first, inverse = np.unique(raw_ids.ravel(), return_index=True, return_inverse=True)
    by_appearance = np.argsort(first, kind="stable")
    rank = np.empty_like(by_appearance)
    rank[by_appearance] = np.arange(by_appearance.size)
    return rank[inverse].reshape(raw_ids.shape), unique[by_appearance]


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
