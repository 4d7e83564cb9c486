"""Training-free embeddings: the structural and spectral floors, ProNE, GraphWave, the CLI and baseline.sh."""
import os
import subprocess
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

from gcc_sgcl.classical import METHODS, embed_dataset, graphwave, prone, structural
from gcc_sgcl.classical import spectral_floor as spectral
from gcc_sgcl.classical.__main__ import main as classical_main
from gcc_sgcl.classical.common import normalized_laplacian
from gcc_sgcl.data import load_graph_dataset, load_node_dataset, load_similarity_dataset, simple_undirected_graph

ROOT = Path(__file__).resolve().parents[1]


def _dgl(g: nx.Graph):
    edges = np.asarray(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    return simple_undirected_graph(edges[:, 0], edges[:, 1], g.number_of_nodes())


def _column(features: np.ndarray, columns: tuple, name: str) -> np.ndarray:
    return features[:, columns.index(name)]


@pytest.fixture
def karate_with_isolated_node() -> nx.Graph:
    g = nx.karate_club_graph()
    g.add_node(34)
    return g


def test_structural_node_features_equal_networkx(karate_with_isolated_node):
    g = karate_with_isolated_node
    nodes = range(g.number_of_nodes())
    feats = structural.structural_node_features(_dgl(g))
    cols = structural.NODE_COLUMNS
    assert feats.shape == (35, len(cols))
    degree = np.array([g.degree(v) for v in nodes], dtype=float)
    np.testing.assert_array_equal(_column(feats, cols, "degree"), degree)
    np.testing.assert_allclose(_column(feats, cols, "log_degree"), np.log1p(degree))
    mean_nbr = nx.average_neighbor_degree(g)
    np.testing.assert_allclose(_column(feats, cols, "mean_neighbour_degree"), [mean_nbr[v] for v in nodes])
    max_nbr = [max((g.degree(u) for u in g[v]), default=0) for v in nodes]
    np.testing.assert_array_equal(_column(feats, cols, "max_neighbour_degree"), max_nbr)
    clustering = nx.clustering(g)
    np.testing.assert_allclose(_column(feats, cols, "clustering"), [clustering[v] for v in nodes])
    core = nx.core_number(g)
    np.testing.assert_array_equal(_column(feats, cols, "core_number"), [core[v] for v in nodes])
    two_hop = [len(nx.single_source_shortest_path_length(g, v, cutoff=2)) - 1 for v in nodes]
    np.testing.assert_array_equal(_column(feats, cols, "two_hop_size"), two_hop)
    pagerank = nx.pagerank(g, weight=None)
    np.testing.assert_allclose(_column(feats, cols, "pagerank"), [pagerank[v] for v in nodes], rtol=1e-5)
    assert feats[34].tolist() == [0.0] * 7 + [pagerank[34]]  # the isolated node


def test_structural_graph_features_histogram_and_statistics(karate_with_isolated_node):
    g = karate_with_isolated_node
    feats = structural.structural_graph_features(_dgl(g))
    cols = structural.GRAPH_COLUMNS
    assert feats.shape == (len(cols),) == (24,)
    histogram = feats[: structural.DEGREE_BINS]
    assert histogram.sum() == pytest.approx(1.0)
    degree = np.array([d for _, d in g.degree()])
    for k, (low, high) in enumerate([(0, 1), (1, 2), (2, 4), (4, 8), (8, 16), (16, 32)]):
        assert histogram[k] == pytest.approx(np.mean((degree >= low) & (degree < high)))
    stats = dict(zip(cols, feats))
    assert stats["num_nodes"] == 35 and stats["num_edges"] == 78
    assert stats["density"] == pytest.approx(nx.density(g))
    assert stats["mean_degree"] == pytest.approx(degree.mean()) and stats["max_degree"] == 17
    assert stats["mean_clustering"] == pytest.approx(nx.average_clustering(g))
    assert stats["num_components"] == 2 and stats["degeneracy"] == max(nx.core_number(g).values())


def test_structural_embedders_z_score_each_column():
    graphs = [_dgl(nx.barabasi_albert_graph(40, 2, seed=s)) for s in range(3)]
    emb = structural.embed_nodes(graphs, 64, np.random.default_rng(0))
    assert emb.shape == (120, len(structural.NODE_COLUMNS))
    np.testing.assert_allclose(emb.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(emb.std(axis=0), 1.0)


def test_cycle_spectrum_is_one_minus_cosines():
    n = 10
    eigenvalues = spectral.laplacian_eigenvalues(nx.to_numpy_array(nx.cycle_graph(n)))
    np.testing.assert_allclose(eigenvalues, np.sort(1 - np.cos(2 * np.pi * np.arange(n) / n)), atol=1e-12)


def test_graph_spectral_features_bounds_histogram_and_lambda_2():
    er = nx.gnp_random_graph(60, 0.1, seed=1)
    eigenvalues = spectral.laplacian_eigenvalues(nx.to_numpy_array(er))
    assert eigenvalues.min() >= 0.0 and eigenvalues.max() <= 2.0
    assert eigenvalues.max() > 1.2  # not all squashed into one bin
    two_triangles = nx.disjoint_union(nx.cycle_graph(3), nx.cycle_graph(3))
    for g, connected in [(two_triangles, False), (nx.cycle_graph(7), True), (er, nx.is_connected(er))]:
        feats = spectral.spectral_graph_features(_dgl(g))
        assert feats.shape == (spectral.GRAPH_DIM,)
        assert feats[: spectral.BINS].sum() == pytest.approx(1.0)
        assert (feats[-1] > 1e-9) == connected
    assert spectral.spectral_graph_features(_dgl(two_triangles))[-1] == pytest.approx(0.0, abs=1e-12)


def test_an_eigenvalue_on_a_bin_edge_falls_in_one_bin_whatever_the_node_order():
    # the 20-node star's 18 eigenvalues 1 and K9's 8 eigenvalues 9/8 sit exactly on bin edges (k/16); unrounded,
    # the solver's error sends some of them to the bin below, depending on the node order
    for g, value, copies in [(nx.star_graph(19), 1.0, 18), (nx.complete_graph(9), 9 / 8, 8)]:
        expected = spectral.spectral_graph_features(_dgl(g))
        assert expected[int(value * spectral.BINS / 2)] == pytest.approx(copies / len(g))
        for seed in range(20):
            order = np.random.default_rng(seed).permutation(len(g))
            shuffled = nx.relabel_nodes(g, dict(enumerate(order)))
            np.testing.assert_array_equal(spectral.spectral_graph_features(_dgl(shuffled))[: spectral.BINS],
                                          expected[: spectral.BINS])


def test_node_spectral_features_describe_the_two_hop_ego_net():
    feats = spectral.spectral_node_features(_dgl(nx.path_graph(6)))
    assert feats.shape == (6, spectral.NODE_DIM)
    np.testing.assert_allclose(feats[:, : spectral.BINS].sum(axis=1), 1.0)
    # node 0's 2-hop ego net is the path 0-1-2, with normalised-Laplacian spectrum {0, 1, 2}
    expected = np.zeros(spectral.BINS)
    expected[[0, spectral.BINS // 2, spectral.BINS - 1]] = 1 / 3
    np.testing.assert_allclose(feats[0, : spectral.BINS], expected)
    np.testing.assert_allclose(feats[0, spectral.BINS :], [1.0, 2.0] + [0.0] * (spectral.SMALLEST - 2), atol=1e-12)
    np.testing.assert_allclose(feats[0], feats[5])  # mirror images
    assert not np.allclose(feats[0], feats[2])  # node 2's ego net is the 5-node path 0..4


def _two_communities(seed: int = 0) -> tuple[nx.Graph, np.ndarray]:
    g = nx.stochastic_block_model([60, 60], [[0.3, 0.02], [0.02, 0.3]], seed=seed)
    return g, np.repeat([0, 1], 60)


def test_prone_shape_determinism_and_unit_rows():
    g, _ = _two_communities()
    a = prone.prone_embedding(_dgl(g), 16, np.random.default_rng(3))
    b = prone.prone_embedding(_dgl(g), 16, np.random.default_rng(3))
    assert a.shape == (120, 16)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0)


def test_prone_separates_planted_communities():
    g, labels = _two_communities()
    emb = prone.prone_embedding(_dgl(g), 16, np.random.default_rng(0))
    accuracy = cross_val_score(LogisticRegression(max_iter=1000), emb, labels, cv=5).mean()
    assert accuracy > 0.9


def test_prone_rejects_a_dimension_not_below_the_node_count():
    with pytest.raises(ValueError, match="--hidden"):
        prone.prone_embedding(_dgl(nx.path_graph(8)), 8, np.random.default_rng(0))


def test_graphwave_equivalent_nodes_match_and_hub_differs_from_leaf():
    star = _dgl(nx.star_graph(6))  # node 0 is the hub
    emb = graphwave.graphwave_embedding(star, 32)
    assert emb.shape == (7, 32)
    for leaf in range(2, 7):
        np.testing.assert_allclose(emb[leaf], emb[1], atol=1e-10)
    assert np.linalg.norm(emb[0] - emb[1]) > 1.0
    path = graphwave.graphwave_embedding(_dgl(nx.path_graph(7)), 32)
    np.testing.assert_allclose(path[0], path[6], atol=1e-10)
    np.testing.assert_allclose(path[1], path[5], atol=1e-10)
    assert np.linalg.norm(path[0] - path[3]) > 0.5


def test_graphwave_heat_kernel_matches_the_exact_one():
    g = nx.barabasi_albert_graph(30, 2, seed=0)
    lap = normalized_laplacian(nx.to_numpy_array(g))
    lam, u = np.linalg.eigh(lap)
    polys = graphwave.heat_kernel_polynomials([0.7, 4.0])
    approx = graphwave.heat_wavelets(sp.csr_matrix(lap), np.arange(30), polys)
    for wavelets, s in zip(approx, [0.7, 4.0]):
        np.testing.assert_allclose(wavelets, u @ np.diag(np.exp(-s * lam)) @ u.T, atol=1e-9)


def test_graphwave_rejects_hidden_not_a_multiple_of_four():
    with pytest.raises(ValueError, match="multiple"):
        graphwave.graphwave_embedding(_dgl(nx.path_graph(5)), 30)


@pytest.mark.parametrize("method", ["prone", "graphwave", "rolx", "panther", "struc2vec"])
def test_node_level_methods_reject_graph_datasets_naming_both(method):
    with pytest.raises(ValueError, match=f"'{method}'.*'synthetic-graphs'"):
        embed_dataset(method, "synthetic-graphs")


@pytest.mark.parametrize("method", ["wl-kernel", "graph2vec"])
@pytest.mark.parametrize("dataset", ["synthetic-roles", "synthetic-similarity"])
def test_graph_level_methods_reject_node_and_similarity_datasets_naming_both(method, dataset):
    with pytest.raises(ValueError, match=f"'{method}' embeds graphs only.*'{dataset}'"):
        embed_dataset(method, dataset)


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown training-free method 'node2vec'; choose from \[.*'structural'.*\]"):
        embed_dataset("node2vec", "synthetic-roles")


def test_cli_writes_one_row_per_node_graph_or_node_pair(tmp_path, capsys):
    datasets = ["synthetic-roles", "synthetic-graphs", "synthetic-similarity"]
    paths = classical_main(["--method", "structural", "--dataset", *datasets, "--out-dir", str(tmp_path)])
    assert paths == [tmp_path / f"{name}.npy" for name in datasets]
    pair = load_similarity_dataset("synthetic-similarity")
    rows = [
        load_node_dataset("synthetic-roles").graph.num_nodes(),
        len(load_graph_dataset("synthetic-graphs").graphs),
        pair.graph_1.num_nodes() + pair.graph_2.num_nodes(),
    ]
    widths = [len(structural.NODE_COLUMNS), len(structural.GRAPH_COLUMNS), len(structural.NODE_COLUMNS)]
    printed = capsys.readouterr().out.splitlines()
    for path, n, width, line in zip(paths, rows, widths, printed):
        emb = np.load(path)
        assert emb.shape == (n, width) and emb.dtype == np.float32 and np.isfinite(emb).all()
        assert line.split("\t")[:2] == [str(path), str(width)]


def test_registry_names_the_methods_and_their_levels():
    assert set(METHODS) == {"structural", "spectral", "prone", "graphwave", "wl-kernel", "graph2vec", "rolx",
                            "panther", "struc2vec", "random"}
    assert {name for name, m in METHODS.items() if m.graphs is not None} == {"structural", "spectral", "wl-kernel",
                                                                            "graph2vec", "random"}
    assert {name for name, m in METHODS.items() if m.nodes is None} == {"wl-kernel", "graph2vec"}


def test_baseline_script_runs_prone_end_to_end(tmp_path):
    out = subprocess.run(
        ["bash", str(ROOT / "scripts/baseline.sh"), "64", "prone", "synthetic-roles"],
        cwd=tmp_path, env={**os.environ, "CI": "true"}, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    emb = np.load(tmp_path / "saved/classical/prone-64/synthetic-roles.npy")
    assert emb.shape == (1620, 64)
    assert "synthetic-roles" in out.stdout and "micro_f1" in out.stdout and "±" in out.stdout
    assert (tmp_path / "saved/classical/prone-64/results.csv").is_file()  # another size goes to another folder
    bad = subprocess.run(["bash", str(ROOT / "scripts/baseline.sh"), "64", "pronee", "synthetic-roles"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and "<method> one of graph2vec, graphwave, panther, prone" in bad.stderr
    assert "'pronee'" in bad.stderr and not (tmp_path / "saved/classical/pronee").exists()
