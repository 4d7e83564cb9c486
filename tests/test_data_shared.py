"""Loaders on the staged benchmark copy (../shared/data) reproduce the MANIFEST's counts."""
import numpy as np
import pytest

from gcc_sgcl.data import (
    DATASETS,
    DatasetNotFoundError,
    check_simple_undirected,
    graphs_of,
    load_any,
    load_graph_dataset,
    load_node_dataset,
    load_pretrain_corpus,
    load_similarity_dataset,
    summarize,
)


@pytest.fixture(autouse=True, scope="module")
def cache_dir(tmp_path_factory):
    """One cache for the module, so the registry check below reuses the parsed graphs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GCC_SGCL_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def _check_conventions(data):
    for g in graphs_of(data):
        check_simple_undirected(g)


@pytest.mark.parametrize(
    "name, graphs, class_sizes, nodes, edges",
    [
        ("imdb-binary", 1000, [500, 500], 19_773, 96_531),
        ("imdb-multi", 1500, [500, 500, 500], 19_502, 98_903),
        ("rdt-b", 2000, [1000, 1000], 859_254, 995_508),
        # The MANIFEST's 12,288,916 edges count COLLAB's 2,837 self-loops, which simple graphs drop.
        ("collab", 5000, [2600, 775, 1625], 372_474, 12_288_916 - 2_837),
    ],
)
def test_graph_datasets_match_manifest(shared_data, name, graphs, class_sizes, nodes, edges):
    data = load_graph_dataset(name, shared_data)
    assert len(data.graphs) == graphs and data.labels.dtype == np.int64
    assert np.bincount(data.labels).tolist() == class_sizes
    assert sum(g.num_nodes() for g in data.graphs) == nodes
    assert sum(g.num_edges() for g in data.graphs) // 2 == edges
    _check_conventions(data)


def test_reddit_multi_5k_is_not_staged(shared_data):
    try:
        data = load_graph_dataset("rdt-5k", shared_data)
    except DatasetNotFoundError:
        pytest.skip("REDDIT-MULTI-5K is not in ../shared/data (fetch it with bash scripts/download.sh rdt-5k)")
    assert len(data.graphs) == 4999 and np.unique(data.labels).size == 5


@pytest.mark.parametrize(
    "name, nodes, edges, class_sizes",
    [
        ("usa_airport", 1_190, 13_599, [297, 297, 297, 299]),
        ("h-index", 5_000, 44_020, [2_637, 2_363]),
        ("h-index-rand1", 5_000, 23_460, None),
        ("h-index-top1", 5_000, 46_358, None),
    ],
)
def test_node_datasets_match_manifest(shared_data, name, nodes, edges, class_sizes):
    data = load_node_dataset(name, shared_data)
    assert data.graph.num_nodes() == nodes == len(data.labels)
    assert data.graph.num_edges() // 2 == edges
    counts = np.bincount(data.labels).tolist()
    assert counts == class_sizes if class_sizes else len(counts) == 2
    _check_conventions(data)


@pytest.mark.parametrize(
    "name, pairs, nodes, edges",
    [
        ("kdd_icdm", 697, (2_867, 2_607), (7_637, 4_774)),
        ("sigir_cikm", 874, (2_851, 3_548), (6_354, 7_076)),
        ("sigmod_icde", 898, (2_616, 2_559), (8_304, 6_668)),
    ],
)
def test_similarity_datasets_match_manifest(shared_data, name, pairs, nodes, edges):
    data = load_similarity_dataset(name, shared_data)
    assert data.pairs.shape == (pairs, 2) and data.pairs.dtype == np.int64
    assert (data.graph_1.num_nodes(), data.graph_2.num_nodes()) == nodes
    assert (data.graph_1.num_edges() // 2, data.graph_2.num_edges() // 2) == edges
    assert len(set(data.pairs[:, 0].tolist())) == len(set(data.pairs[:, 1].tolist())) == pairs
    # every paired author has an edge in both graphs
    assert (data.graph_1.in_degrees()[data.pairs[:, 0]] > 0).all()
    assert (data.graph_2.in_degrees()[data.pairs[:, 1]] > 0).all()
    _check_conventions(data)


@pytest.mark.parametrize(
    "name, nodes, edges",
    [
        ("ca-grqc", 4_158, 13_422),
        ("ca-hepth", 9_877, 25_973),
        ("ca-hepph", 12_008, 118_489),
        ("ca-condmat", 23_133, 93_439),
        ("email-enron", 36_692, 183_831),
    ],
)
def test_pretrain_graphs_match_manifest(shared_data, name, nodes, edges):
    (g,) = load_pretrain_corpus([name], shared_data)
    assert (g.num_nodes(), g.num_edges() // 2) == (nodes, edges)
    check_simple_undirected(g)


def test_registry_expected_counts_agree_with_the_staged_data(shared_data):
    checked = []
    for name, spec in DATASETS.items():
        if spec.files and all((shared_data / f.path).is_file() for f in spec.files):
            counts = summarize(load_any(name, shared_data))
            assert {key: counts[key] for key in spec.expected} == dict(spec.expected), name
            checked.append(name)
    assert len(checked) == 16
