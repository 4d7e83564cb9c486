"""Synthetic datasets built with networkx: the offline default for every task, deterministic under a seed.

Registered names (no data directory needed):

- ``synthetic`` (pretrain): Barabási–Albert, Holme–Kim, Watts–Strogatz and random geometric graphs,
  24k nodes in all at ``scale=1``.
- ``synthetic-roles`` (node): a BA base graph with planted houses, 6-cycles and 5-leaf stars;
  label = structural role (:data:`ROLE_NAMES`, 7 classes, 1,620 nodes).
- ``synthetic-graphs`` (graph): 300 graphs of 20-80 nodes from 4 families of mean degree about 4;
  label = family (:data:`GRAPH_FAMILIES`, balanced).
- ``synthetic-similarity`` (similarity): a 1,000-node graph and a node-permuted copy with 5 % of its
  edges rewired; pairs = the true correspondence.
"""
from __future__ import annotations

import dgl
import networkx as nx
import numpy as np

from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData, SimilarityPairData
from gcc_sgcl.data.graphs import graph_from_networkx, simple_undirected_graph

DEFAULT_SEED = 0

# Role labels of synthetic-roles: the base graph, then each motif position.
ROLE_NAMES = ("base", "house-roof", "house-middle", "house-floor", "cycle", "star-hub", "star-leaf")
# Graph families of synthetic-graphs, all with mean degree about 4.
GRAPH_FAMILIES = ("barabasi-albert", "watts-strogatz", "erdos-renyi", "powerlaw-cluster")


def _seeds(rng: np.random.Generator, k: int) -> list[int]:
    """``k`` integer seeds for networkx generators, drawn from ``rng``."""
    return [int(s) for s in rng.integers(0, 2**31 - 1, size=k)]


def _from_networkx(g: nx.Graph) -> dgl.DGLGraph:
    """The DGL graph of a generated networkx graph (its nodes are ``0..n-1`` in order)."""
    return graph_from_networkx(g)[0]


def _scaled(count: int, scale: float, minimum: int) -> int:
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    return max(minimum, round(count * scale))


def build_pretrain_corpus(seed: int = DEFAULT_SEED, scale: float = 1.0) -> list[dgl.DGLGraph]:
    """Four pre-training graphs from different generators (8k + 6k + 6k + 4k nodes times ``scale``).

    >>> [g.num_nodes() for g in build_pretrain_corpus(seed=1, scale=0.01)]
    [80, 60, 60, 40]
    """
    s = _seeds(np.random.default_rng(seed), 4)
    n_ba, n_hk, n_ws, n_geo = (_scaled(n, scale, 10) for n in (8000, 6000, 6000, 4000))
    return [
        _from_networkx(nx.barabasi_albert_graph(n_ba, 3, seed=s[0])),
        _from_networkx(nx.powerlaw_cluster_graph(n_hk, 3, 0.3, seed=s[1])),
        _from_networkx(nx.connected_watts_strogatz_graph(n_ws, 6, 0.1, seed=s[2])),
        # radius chosen for a mean degree of about 8 in the unit square
        _from_networkx(nx.random_geometric_graph(n_geo, float(np.sqrt(8 / (np.pi * n_geo))), seed=s[3])),
    ]


def build_role_graph(seed: int = DEFAULT_SEED, base_nodes: int = 600, motifs_per_type: int = 60) -> NodeLabelData:
    """A Barabási–Albert base graph with houses, 6-cycles and 5-leaf stars attached by one edge each.

    Labels are :data:`ROLE_NAMES` indices; node ids are randomly permuted so they carry no role information.
    """
    if base_nodes < 3 or motifs_per_type < 1:
        raise ValueError(f"need base_nodes >= 3 and motifs_per_type >= 1, got {base_nodes}, {motifs_per_type}")
    rng = np.random.default_rng(seed)
    base = nx.barabasi_albert_graph(base_nodes, 2, seed=_seeds(rng, 1)[0])
    edges = list(base.edges())
    labels = [0] * base_nodes
    # motif: (edges among its nodes, role of each node); its node 0 is attached to the base graph
    house = ([(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (3, 4)], [3, 3, 2, 2, 1])
    cycle = ([(i, (i + 1) % 6) for i in range(6)], [4] * 6)
    star = ([(0, i) for i in range(1, 6)], [5] + [6] * 5)
    for motif_edges, roles in [house, cycle, star] * motifs_per_type:
        offset = len(labels)
        edges.extend((offset + u, offset + v) for u, v in motif_edges)
        edges.append((offset, int(rng.integers(base_nodes))))
        labels.extend(roles)
    n = len(labels)
    perm = rng.permutation(n)
    edges = perm[np.asarray(edges, dtype=np.int64)]
    permuted_labels = np.empty(n, dtype=np.int64)
    permuted_labels[perm] = labels
    return NodeLabelData("synthetic-roles", simple_undirected_graph(edges[:, 0], edges[:, 1], n), permuted_labels)


def build_graph_collection(
    seed: int = DEFAULT_SEED, graphs_per_class: int = 75, min_nodes: int = 20, max_nodes: int = 80
) -> GraphLabelData:
    """``4 * graphs_per_class`` graphs, label = index in :data:`GRAPH_FAMILIES`, in a shuffled order."""
    if not 4 <= min_nodes <= max_nodes:
        raise ValueError(f"need 4 <= min_nodes <= max_nodes, got {min_nodes}, {max_nodes}")
    rng = np.random.default_rng(seed)
    generators = (
        lambda n, s: nx.barabasi_albert_graph(n, 2, seed=s),
        lambda n, s: nx.watts_strogatz_graph(n, 4, 0.1, seed=s),
        lambda n, s: nx.gnp_random_graph(n, 4 / (n - 1), seed=s),
        lambda n, s: nx.powerlaw_cluster_graph(n, 2, 0.6, seed=s),
    )
    labels = np.repeat(np.arange(len(generators), dtype=np.int64), graphs_per_class)
    rng.shuffle(labels)
    sizes = rng.integers(min_nodes, max_nodes + 1, size=labels.size)
    seeds = _seeds(rng, labels.size)
    graphs = [_from_networkx(generators[c](int(n), s)) for c, n, s in zip(labels, sizes, seeds)]
    return GraphLabelData("synthetic-graphs", graphs, labels)


def build_similarity_pair(seed: int = DEFAULT_SEED, num_nodes: int = 1000, rewire: float = 0.05) -> SimilarityPairData:
    """A Holme–Kim graph and a copy with nodes permuted and a ``rewire`` fraction of edges moved.

    ``pairs[i] = (i, perm[i])`` is the true correspondence for every node.
    """
    if num_nodes < 5 or not 0 <= rewire <= 1:
        raise ValueError(f"need num_nodes >= 5 and 0 <= rewire <= 1, got {num_nodes}, {rewire}")
    rng = np.random.default_rng(seed)
    g1 = nx.powerlaw_cluster_graph(num_nodes, 3, 0.3, seed=_seeds(rng, 1)[0])
    edges = {(min(u, v), max(u, v)) for u, v in g1.edges()}
    k = round(rewire * len(edges))
    ordered = sorted(edges)
    for i in rng.choice(len(ordered), size=k, replace=False):
        edges.remove(ordered[i])
    added = 0
    while added < k:  # g1 is sparse, so a random pair is almost always a new edge
        u, v = (int(x) for x in rng.integers(num_nodes, size=2))
        pair = (min(u, v), max(u, v))
        if u != v and pair not in edges and not g1.has_edge(u, v):
            edges.add(pair)
            added += 1
    perm = rng.permutation(num_nodes)
    e2 = perm[np.asarray(sorted(edges), dtype=np.int64)]
    return SimilarityPairData(
        "synthetic-similarity",
        _from_networkx(g1),
        simple_undirected_graph(e2[:, 0], e2[:, 1], num_nodes),
        np.stack([np.arange(num_nodes), perm], axis=1).astype(np.int64),
    )
