"""The SGCL paper's task-specific baselines as training-free rows: WL subtree kernel, graph2vec, RolX, Panther++,
struc2vec and Random, on small graphs whose right answers are known, and through embed_dataset on the synthetic
datasets."""
import networkx as nx
import numpy as np
import pytest

from gcc_sgcl.classical.common import adjacency
from gcc_sgcl.classical import embed_dataset, graph2vec, panther, random_vectors, rolx, struc2vec, wl_kernel
from gcc_sgcl.data import load_graph_dataset, load_node_dataset, load_similarity_dataset, simple_undirected_graph


def _dgl(g: nx.Graph):
    g = nx.convert_node_labels_to_integers(g, ordering="sorted")  # keeps 0 … n-1 as they are
    edges = np.asarray(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    return simple_undirected_graph(edges[:, 0], edges[:, 1], g.number_of_nodes())


def _relabelled(g: nx.Graph, seed: int = 0) -> nx.Graph:
    order = np.random.default_rng(seed).permutation(g.number_of_nodes())
    return nx.relabel_nodes(g, {v: int(order[i]) for i, v in enumerate(g.nodes)})


def test_wl_kernel_rows_reproduce_the_kernel_and_ignore_the_node_numbering():
    graphs = [nx.cycle_graph(6), _relabelled(nx.cycle_graph(6)), nx.path_graph(6), nx.star_graph(5)]
    dgl_graphs = [_dgl(g) for g in graphs]
    k = wl_kernel.wl_kernel(dgl_graphs)
    np.testing.assert_allclose(np.diag(k), 1.0)
    x = wl_kernel.embed_graphs(dgl_graphs, 0, np.random.default_rng(0))
    np.testing.assert_allclose(x @ x.T, k, atol=1e-9)
    assert np.allclose(x[0], x[1]) and not np.allclose(x[0], x[2]) and not np.allclose(x[2], x[3])


def test_wl_kernel_counts_isolated_nodes():
    with_isolated = nx.path_graph(3)
    with_isolated.add_node(3)
    k = wl_kernel.wl_kernel([_dgl(nx.path_graph(3)), _dgl(with_isolated)])
    assert k[0, 1] < 1.0


def test_graph2vec_words_ignore_the_node_numbering_and_deepen_with_each_iteration():
    g = nx.karate_club_graph()
    a, b = graph2vec.wl_documents([_dgl(g), _dgl(_relabelled(g))])
    assert sorted(a) == sorted(b) and len(a) == 3 * g.number_of_nodes()
    assert {w.split("-")[0] for w in a} == {"0", "1", "2"}


def test_graph2vec_rows_are_sized_by_hidden_and_reproducible_from_the_seed():
    graphs = load_graph_dataset("synthetic-graphs").graphs[:40]
    first = graph2vec.embed_graphs(graphs, 16, np.random.default_rng(3))
    again = graph2vec.embed_graphs(graphs, 16, np.random.default_rng(3))
    assert first.shape == (40, 16) and np.isfinite(first).all()
    np.testing.assert_array_equal(first, again)


def test_rolx_egonet_features_match_networkx():
    g = nx.karate_club_graph()
    feats = rolx.base_features(_dgl(g))
    for v in range(g.number_of_nodes()):
        ego = set(g[v]) | {v}
        inside = g.subgraph(ego).number_of_edges()
        leaving = sum(1 for u in ego for w in g[u] if w not in ego)
        assert feats[v].tolist() == [g.degree(v), inside, leaving]


def test_rolx_gives_equivalent_nodes_equal_rows_and_a_hub_another_role_than_its_leaves():
    g = nx.disjoint_union(nx.star_graph(6), nx.star_graph(6))
    g.add_edge(0, 7)  # two hubs joined: hubs, leaves
    rows = rolx.embed_nodes([_dgl(g)], 0, np.random.default_rng(0))
    assert rows.shape[0] == 14 and rows.shape[1] >= 2 and (rows >= 0).all()
    np.testing.assert_allclose(rows[1], rows[8], atol=1e-9)  # a leaf of each star
    np.testing.assert_allclose(rows[0], rows[7], atol=1e-9)  # the two hubs
    assert np.argmax(rows[0]) != np.argmax(rows[1])


def test_rolx_factorises_the_graphs_together_so_a_node_and_its_copy_in_the_other_graph_get_equal_rows():
    g = nx.karate_club_graph()
    order = np.random.default_rng(0).permutation(34)
    copy = nx.relabel_nodes(g, {v: int(order[v]) for v in g})
    rows = rolx.embed_nodes([_dgl(g), _dgl(copy)], 0, np.random.default_rng(0))
    assert rows.shape[0] == 68
    np.testing.assert_allclose(rows[:34], rows[34:][order], atol=1e-6)


def test_panther_similarity_is_higher_within_a_clique_than_across_a_bridge():
    g = nx.barbell_graph(6, 0)  # two 6-cliques joined by one edge (5 - 6)
    s = panther.panther_similarity(adjacency(_dgl(g)), 20000, panther.PATH_LENGTH, np.random.default_rng(0))
    assert s[0, 1] > s[0, 11] and s[0, 0] == 0 and np.allclose(s.toarray(), s.toarray().T)


def test_panther_vectors_hold_each_nodes_largest_similarities_in_decreasing_order():
    g = _dgl(nx.karate_club_graph())
    v = panther.panther_vectors(g, 8, np.random.default_rng(0), paths=5000)
    assert v.shape == (34, 8) and (np.diff(v, axis=1) <= 0).all() and (v >= 0).all()
    s = panther.panther_similarity(adjacency(g), 5000, panther.PATH_LENGTH, np.random.default_rng(0)).toarray()
    np.testing.assert_allclose(v[0], np.sort(s[0])[::-1][:8])


def _reference_dtw(a, count_a, b, count_b):
    d = np.full((len(a) + 1, len(b) + 1), np.inf)
    d[0, 0] = 0.0
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = (max(a[i - 1], b[j - 1]) / min(a[i - 1], b[j - 1]) - 1) * max(count_a[i - 1], count_b[j - 1])
            d[i, j] = cost + min(d[i - 1, j], d[i, j - 1], d[i - 1, j - 1])
    return d[-1, -1]


def test_struc2vec_batched_dtw_equals_the_plain_dynamic_programme_on_random_sequences():
    rng = np.random.default_rng(0)
    seqs = [(rng.integers(1, 30, size=m), rng.integers(1, 5, size=m)) for m in rng.integers(1, 12, size=24)]
    ptr = np.concatenate([[0], np.cumsum([len(d) for d, _ in seqs])])
    ring = (ptr, np.concatenate([d for d, _ in seqs]), np.concatenate([c for _, c in seqs]))
    u, v = np.arange(0, 24, 2), np.arange(1, 24, 2)
    got = struc2vec.ring_dtw(ring, u, v)
    want = [_reference_dtw(*seqs[i], *seqs[j]) for i, j in zip(u, v)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_struc2vec_compressed_cost_weighs_the_degree_ratio_by_the_larger_count():
    # (2, 3) against (6, 1): (6 / 2 - 1) * 3; a sequence against itself costs nothing
    assert struc2vec.element_cost(np.array([2]), np.array([3]), np.array([6]), np.array([1])).tolist() == [6.0]
    ring = (np.array([0, 2, 3]), np.array([1, 3, 2]), np.array([2, 1, 5]))  # node 0: 1 x2, 3 x1; node 1: 2 x5
    # DTW matches (1, 2) and (3, 1) both with (2, 5): (2/1 - 1) * 5 + (3/2 - 1) * 5
    assert struc2vec.ring_dtw(ring, np.array([0]), np.array([1])).tolist() == [7.5]


def test_struc2vec_rings_hold_the_degrees_at_each_hop_distance():
    g = nx.path_graph(5)  # degrees 1 2 2 2 1
    ptr, degrees, counts = struc2vec.rings(adjacency(_dgl(g)), 3)[2]
    assert degrees[ptr[0]:ptr[1]].tolist() == [2] and counts[ptr[0]:ptr[1]].tolist() == [1]
    assert degrees[ptr[2]:ptr[3]].tolist() == [1] and counts[ptr[2]:ptr[3]].tolist() == [2]


def test_struc2vec_candidates_are_the_nearest_in_degree_order():
    deg = np.array([5, 1, 3, 1, 2, 4, 1, 1, 2])
    pairs = struc2vec.candidate_pairs(deg)
    order = np.lexsort((np.arange(9), deg))
    rank = np.argsort(order)
    gaps = np.abs(rank[pairs[:, 0]] - rank[pairs[:, 1]])
    assert len(pairs) == sum(9 - j for j in range(1, 5)) and gaps.min() == 1 and gaps.max() == 4  # ⌈log2 9⌉


def test_struc2vec_gives_equivalent_nodes_distance_zero_at_every_layer_and_a_hub_and_leaf_a_positive_one():
    pairs, f = struc2vec.structural_distances(adjacency(_dgl(nx.star_graph(6))), 3)  # hub 0, leaves 1 … 6
    leaves, hub = (pairs > 0).all(axis=1), (pairs == 0).any(axis=1)
    assert leaves.any() and (f[leaves, :3] == 0).all() and np.isnan(f[:, 3]).all()  # no node sees 3 hops
    assert hub.any() and (f[hub, 0] > 0).all() and (f[hub, 1] > f[hub, 0]).all() and np.isnan(f[hub, 2]).all()


def test_struc2vec_puts_a_node_and_its_copy_in_another_graph_at_distance_zero():
    g, order = nx.karate_club_graph(), np.random.default_rng(1).permutation(34)
    union = nx.Graph(list(g.edges) + [(34 + int(order[a]), 34 + int(order[b])) for a, b in g.edges])
    pairs, f = struc2vec.structural_distances(adjacency(_dgl(union)), 3)
    twins = (pairs[:, 0] < 34) & (order[pairs[:, 0] % 34] + 34 == pairs[:, 1])  # v's copy: 34 + order[v]
    twins |= (pairs[:, 1] < 34) & (order[pairs[:, 1] % 34] + 34 == pairs[:, 0])
    assert twins.sum() >= 5 and not np.isnan(f[twins, 0]).any()
    defined = ~np.isnan(f[twins])
    assert (f[twins][defined] == 0).all() and (f[~twins][~np.isnan(f[~twins])] > 0).any()


def _cosine(x, a, b):
    return float(x[a] @ x[b] / np.linalg.norm(x[a]) / np.linalg.norm(x[b]))


def test_struc2vec_rows_are_finite_reproducible_and_put_mirror_nodes_of_a_barbell_together():
    g = nx.barbell_graph(8, 6)  # cliques 0-7 and 14-21 (7 and 14 hold the path 8-13); mirror: v <-> 21 - v
    adj = adjacency(_dgl(g))
    rows = struc2vec.struc2vec(adj, 16, np.random.default_rng(0), walks_per_node=40)
    assert rows.shape == (22, 16) and rows.dtype == np.float32 and np.isfinite(rows).all()
    np.testing.assert_array_equal(rows, struc2vec.struc2vec(adj, 16, np.random.default_rng(0), walks_per_node=40))
    mirror = [_cosine(rows, v, 21 - v) for v in (8, 9, 10, 7)]  # path nodes and a bridge clique node
    other = [_cosine(rows, 8, 10), _cosine(rows, 9, 0), _cosine(rows, 7, 10), _cosine(rows, 0, 9)]
    assert min(mirror) > max(other) + 0.1


def test_struc2vec_embeds_the_graphs_of_a_pair_together():
    graphs = [_dgl(nx.karate_club_graph()), _dgl(nx.path_graph(6))]
    rows = struc2vec.embed_nodes(graphs, 8, np.random.default_rng(0))
    assert rows.shape == (40, 8) and np.isfinite(rows).all()


def test_random_rows_depend_on_the_seed_only():
    graphs = [_dgl(nx.path_graph(4)), _dgl(nx.cycle_graph(5))]
    a = random_vectors.embed_nodes(graphs, 6, np.random.default_rng(1))
    assert a.shape == (9, 6)
    np.testing.assert_array_equal(a, random_vectors.embed_nodes(graphs, 6, np.random.default_rng(1)))
    assert not np.allclose(a, random_vectors.embed_nodes(graphs, 6, np.random.default_rng(2)))
    assert random_vectors.embed_graphs(graphs, 6, np.random.default_rng(1)).shape == (2, 6)


@pytest.mark.parametrize("method, dataset, width", [
    ("wl-kernel", "synthetic-graphs", None), ("graph2vec", "synthetic-graphs", 16), ("random", "synthetic-graphs", 16),
    ("panther", "synthetic-roles", 16), ("random", "synthetic-similarity", 16),
    ("panther", "synthetic-similarity", 16),
])
def test_each_baseline_writes_one_finite_row_per_node_or_graph(method, dataset, width):
    emb = embed_dataset(method, dataset, hidden=16)
    if dataset == "synthetic-graphs":
        n = len(load_graph_dataset(dataset).graphs)
    elif dataset == "synthetic-roles":
        n = load_node_dataset(dataset).graph.num_nodes()
    else:
        pair = load_similarity_dataset(dataset)
        n = pair.graph_1.num_nodes() + pair.graph_2.num_nodes()
    assert emb.shape[0] == n and emb.dtype == np.float32 and np.isfinite(emb).all()
    assert width is None or emb.shape[1] == width


def test_the_sweep_skips_the_datasets_a_training_free_method_does_not_cover():
    from gcc_sgcl.experiments.sweep import applicable

    assert applicable("wl-kernel", "none", "synthetic-graphs")
    assert not applicable("wl-kernel", "none", "synthetic-roles")
    assert not applicable("graph2vec", "none", "synthetic-similarity")
    assert applicable("rolx", "none", "synthetic-similarity") and not applicable("rolx", "none", "synthetic-graphs")
    assert applicable("struc2vec", "none", "synthetic-similarity")
    assert not applicable("struc2vec", "none", "synthetic-graphs")
    assert applicable("random", "none", "synthetic-roles") and applicable("random", "none", "synthetic-graphs")
