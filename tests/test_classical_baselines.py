"""The SGCL paper's task-specific baselines as training-free rows: WL subtree kernel, graph2vec, RolX, Panther++
and Random, on small graphs whose right answers are known, and through embed_dataset on the synthetic datasets."""
import networkx as nx
import numpy as np
import pytest

from gcc_sgcl.classical.common import adjacency
from gcc_sgcl.classical import embed_dataset, graph2vec, panther, random_vectors, rolx, wl_kernel
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
    assert applicable("random", "none", "synthetic-roles") and applicable("random", "none", "synthetic-graphs")
