"""Synthetic datasets: deterministic under the seed, with the designed sizes and classes."""

import numpy as np
import pytest
import torch

from gcc_sgcl.data import check_simple_undirected, graphs_of
from gcc_sgcl.data.synthetic import (
    GRAPH_FAMILIES,
    ROLE_NAMES,
    build_graph_collection,
    build_pretrain_corpus,
    build_role_graph,
    build_similarity_pair,
)


def _same_graphs(a, b):
    return len(a) == len(b) and all(
        x.num_nodes() == y.num_nodes() and all(torch.equal(s, t) for s, t in zip(x.edges(), y.edges()))
        for x, y in zip(a, b)
    )


def _same(a, b):
    for field in ("labels", "pairs"):
        if hasattr(a, field) and not np.array_equal(getattr(a, field), getattr(b, field)):
            return False
    return _same_graphs(graphs_of(a), graphs_of(b))


TINY_BUILDERS = [
    lambda seed: build_pretrain_corpus(seed, scale=0.02),
    lambda seed: build_role_graph(seed, base_nodes=30, motifs_per_type=3),
    lambda seed: build_graph_collection(seed, graphs_per_class=5, min_nodes=10, max_nodes=20),
    lambda seed: build_similarity_pair(seed, num_nodes=60),
]


@pytest.mark.parametrize("build", TINY_BUILDERS, ids=["pretrain", "roles", "graphs", "similarity"])
def test_same_seed_gives_identical_data_and_another_seed_differs(build):
    assert _same(build(3), build(3))
    assert not _same(build(3), build(4))
    for g in graphs_of(build(3)):
        check_simple_undirected(g)


def test_pretrain_corpus_has_four_generators_and_about_24k_nodes():
    graphs = build_pretrain_corpus()
    assert [g.num_nodes() for g in graphs] == [8000, 6000, 6000, 4000]
    mean_degrees = [g.num_edges() / g.num_nodes() for g in graphs]
    assert all(4 < d < 12 for d in mean_degrees)


def test_role_graph_labels_every_motif_position():
    data = build_role_graph(seed=1, base_nodes=100, motifs_per_type=10)
    counts = np.bincount(data.labels, minlength=len(ROLE_NAMES)).tolist()
    # base, roof, middle, floor (house: 1 + 2 + 2), cycle (6), star hub (1) and leaves (5)
    assert counts == [100, 10, 20, 20, 60, 10, 50]
    assert data.graph.num_nodes() == len(data.labels) == 270
    degree = data.graph.in_degrees().numpy()
    # each motif hangs off the base graph by one edge from its first node (a floor, cycle or hub node)
    assert (degree[data.labels == ROLE_NAMES.index("star-hub")] == 6).all()
    assert (degree[data.labels == ROLE_NAMES.index("star-leaf")] == 1).all()
    assert (degree[data.labels == ROLE_NAMES.index("house-roof")] == 2).all()
    assert (degree[data.labels == ROLE_NAMES.index("house-middle")] == 3).all()


def test_default_role_graph_size():
    data = build_role_graph()
    assert data.graph.num_nodes() == 1620 and np.unique(data.labels).size == 7


def test_graph_collection_is_balanced_with_sizes_in_range():
    data = build_graph_collection()
    assert len(data.graphs) == 300
    assert np.bincount(data.labels).tolist() == [75] * len(GRAPH_FAMILIES)
    sizes = [g.num_nodes() for g in data.graphs]
    assert min(sizes) >= 20 and max(sizes) <= 80
    assert data.labels[:20].tolist() != sorted(data.labels[:20].tolist())  # shuffled, not grouped by class


def test_similarity_pair_is_a_permuted_copy_with_five_percent_rewired():
    data = build_similarity_pair(seed=2)
    n = data.graph_1.num_nodes()
    assert n == data.graph_2.num_nodes() == 1000
    assert sorted(data.pairs[:, 0].tolist()) == list(range(n)) == sorted(data.pairs[:, 1].tolist())
    inverse = np.empty(n, dtype=np.int64)
    inverse[data.pairs[:, 1]] = data.pairs[:, 0]
    e1 = {tuple(e) for e in torch.stack(data.graph_1.edges(), 1).tolist()}
    s2, d2 = (t.numpy() for t in data.graph_2.edges())
    e2_in_g1_ids = set(zip(inverse[s2].tolist(), inverse[d2].tolist()))
    m = len(e1) // 2
    assert len(e2_in_g1_ids) == len(e1)
    assert len(e1 - e2_in_g1_ids) // 2 == round(0.05 * m)


@pytest.mark.parametrize(
    "call",
    [
        lambda: build_pretrain_corpus(scale=0),
        lambda: build_role_graph(base_nodes=2),
        lambda: build_graph_collection(min_nodes=50, max_nodes=40),
        lambda: build_similarity_pair(rewire=1.5),
    ],
)
def test_builders_reject_bad_sizes(call):
    with pytest.raises(ValueError):
        call()
