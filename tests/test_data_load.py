"""Public loaders of gcc_sgcl.data on tiny data roots: registry, conventions, missing data, cache."""
import dataclasses
import gzip
import os
import zipfile

import numpy as np
import pytest
import torch

from gcc_sgcl.data import (
    ALLOW_MODIFIED_ENV,
    DATASETS,
    DataFormatError,
    DatasetNotFoundError,
    GraphLabelData,
    NodeLabelData,
    SimilarityPairData,
    check_simple_undirected,
    dataset_kind,
    graphs_of,
    load_graph_dataset,
    load_node_dataset,
    load_pretrain_corpus,
    load_similarity_dataset,
    resolve_data_dir,
)
from gcc_sgcl.data.paths import resolve_cache_dir

from datafiles import edge_set, undirected, write_file


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Every test caches parsed graphs in its own directory, never in the repository. The tiny files written
    under registered names are deliberately modified copies, so the registry's counts are not checked
    (tests of that check unset the variable)."""
    path = tmp_path / "cache"
    monkeypatch.setenv("GCC_SGCL_CACHE", str(path))
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    return path


def _all_simple(data):
    for g in graphs_of(data):
        check_simple_undirected(g)


# ---------------------------------------------------------------------------------------------------------
# registry and paths


def test_every_registered_name_has_a_valid_kind_and_files_with_urls():
    assert {spec.kind for spec in DATASETS.values()} == {"node", "graph", "similarity", "pretrain"}
    for name, spec in DATASETS.items():
        assert dataset_kind(name) == spec.kind
        assert bool(spec.files) != name.startswith("synthetic")
        for remote in spec.files:
            assert remote.url.startswith("https://") and not remote.path.startswith("/")
            assert remote.sha256 is None or len(remote.sha256) == 64


def test_brief_dataset_names_are_registered():
    names = {
        "imdb-binary", "imdb-multi", "collab", "rdt-b", "rdt-5k", "usa_airport", "h-index", "h-index-rand1",
        "h-index-top1", "kdd_icdm", "sigir_cikm", "sigmod_icde", "ca-grqc", "ca-hepth", "ca-hepph", "ca-condmat",
        "email-enron", "dblp-snap", "livejournal", "academia", "synthetic", "synthetic-roles", "synthetic-graphs",
        "synthetic-similarity",
    }
    assert names <= set(DATASETS)


def test_unknown_name_raises_value_error_listing_valid_names():
    with pytest.raises(ValueError, match="unknown dataset 'nope'; valid names: .*imdb-binary.*usa_airport"):
        dataset_kind("nope")


def test_loading_with_the_wrong_kind_says_what_the_dataset_is():
    with pytest.raises(ValueError, match="'imdb-binary' is a graph dataset, not a node dataset"):
        load_node_dataset("imdb-binary")


def test_data_dir_resolution_prefers_argument_then_environment_then_cwd(monkeypatch, tmp_path):
    monkeypatch.setenv("GCC_SGCL_DATA", str(tmp_path / "env"))
    assert resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert resolve_data_dir() == tmp_path / "env"
    monkeypatch.delenv("GCC_SGCL_DATA")
    assert str(resolve_data_dir()) == "data"
    monkeypatch.delenv("GCC_SGCL_CACHE")
    assert resolve_cache_dir().parts == ("data", "cache")


def test_missing_dataset_names_expected_files_and_download_command(tmp_path):
    with pytest.raises(DatasetNotFoundError) as info:
        load_similarity_dataset("kdd_icdm", tmp_path)
    message = str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    for file in ("similarity_search/panther/kdd.graph", "kdd.dict", "icdm.graph", "icdm.dict"):
        assert file in message
    assert "bash scripts/download.sh" in message and "python -m gcc_sgcl.data.download" in message
    assert message.rstrip(".").endswith("kdd_icdm`)")


def test_missing_dataset_with_alternatives_lists_them(tmp_path):
    with pytest.raises(DatasetNotFoundError, match=r"ca-GrQc-SNAP.txtu.lpm.lscc, or pretrain/ca-GrQc/ca-GrQc.txt.gz"):
        load_pretrain_corpus(["ca-grqc"], tmp_path)


@pytest.mark.parametrize("name", ["dblp-snap", "livejournal", "academia"])
def test_download_only_pretrain_graphs_raise_the_missing_data_error_offline(tmp_path, name):
    with pytest.raises(DatasetNotFoundError, match=f"download.sh --data-dir .* {name}`"):
        load_pretrain_corpus([name], tmp_path)


# ---------------------------------------------------------------------------------------------------------
# loaders on tiny files in the registry layout

GIN = "2\n3 0\n0 2 1 2\n0 1 0\n0 1 0\n2 2\n0 1 1\n0 1 0\n"


def test_graph_loader_remaps_labels_to_sorted_ranks(tmp_path):
    write_file(tmp_path / "graph_classification/IMDB-BINARY/IMDBBINARY.txt", GIN)
    data = load_graph_dataset("imdb-binary", tmp_path)
    assert isinstance(data, GraphLabelData) and data.name == "imdb-binary"
    assert data.labels.tolist() == [0, 1] and data.labels.dtype == np.int64
    assert [g.num_nodes() for g in data.graphs] == [3, 2]
    _all_simple(data)


def test_graph_loader_reads_the_zipped_member(tmp_path):
    archive = tmp_path / "graph_classification/REDDIT-BINARY/REDDIT-BINARY.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("REDDIT-BINARY/REDDIT-BINARY.txt", GIN)
        z.writestr("REDDIT-BINARY/10fold_idx/test_idx-1.txt", "0\n")
    assert load_graph_dataset("rdt-b", tmp_path).labels.tolist() == [0, 1]


def test_tu_loader_reads_reddit_multi_5k_layout(tmp_path):
    archive = tmp_path / "graph_classification/REDDIT-MULTI-5K/REDDIT-MULTI-5K.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("REDDIT-MULTI-5K/REDDIT-MULTI-5K_A.txt", "1, 2\n2, 1\n3, 4\n4, 3\n")
        z.writestr("REDDIT-MULTI-5K/REDDIT-MULTI-5K_graph_indicator.txt", "1\n1\n2\n2\n")
        z.writestr("REDDIT-MULTI-5K/REDDIT-MULTI-5K_graph_labels.txt", "5\n3\n")
    data = load_graph_dataset("rdt-5k", tmp_path)
    assert data.labels.tolist() == [1, 0] and [g.num_edges() for g in data.graphs] == [2, 2]


AIRPORT = "node_classification/struc2vec-airports/"


def test_node_loader_renumbers_by_first_appearance_and_keeps_labelled_isolated_nodes(tmp_path):
    # raw ids are non-contiguous; 30-30 is a self-loop, 10-20 is listed twice, 99 only has a label
    write_file(tmp_path / AIRPORT / "usa-airports.edgelist", "30 10\n10 20\n20 10\n30 30\n")
    write_file(tmp_path / AIRPORT / "labels-usa-airports.txt", "node label\n10 3\n20 1\n30 3\n99 0\n")
    data = load_node_dataset("usa_airport", tmp_path)
    assert isinstance(data, NodeLabelData) and data.graph.num_nodes() == 4  # 30, 10, 20, then isolated 99
    assert edge_set(data.graph) == undirected((0, 1), (1, 2))
    assert data.labels.tolist() == [2, 2, 1, 0]
    _all_simple(data)


def test_node_loader_accepts_gcc_nodelabel_without_header(tmp_path):
    write_file(tmp_path / AIRPORT / "usa-airports.edgelist", "5 6\n")
    write_file(tmp_path / AIRPORT / "usa-airports.nodelabel", "5 1\n6 0\n")
    assert load_node_dataset("usa_airport", tmp_path).labels.tolist() == [1, 0]


def test_node_loader_names_both_files_when_a_node_has_no_label(tmp_path):
    edges = write_file(tmp_path / AIRPORT / "usa-airports.edgelist", "5 6\n6 7\n")
    labels = write_file(tmp_path / AIRPORT / "labels-usa-airports.txt", "node label\n5 1\n6 0\n")
    with pytest.raises(DataFormatError, match=f"{labels}: 1 node.* of {edges} have no label, e.g. node 7"):
        load_node_dataset("usa_airport", tmp_path)


def test_hindex_labels_are_above_median_indicators(tmp_path):
    stem = "node_classification/hindex/aminer_hindex_rand20intop200_5000"
    write_file(tmp_path / f"{stem}.edgelist", "7 8\n8 9\n9 10\n")
    write_file(tmp_path / f"{stem}.nodelabel", "10 5\n9 1\n8 2\n7 9\n")  # median 3.5
    data = load_node_dataset("h-index", tmp_path)
    assert data.labels.tolist() == [1, 0, 0, 1]


PANTHER = "similarity_search/panther/"


def test_similarity_loader_pairs_authors_present_in_both_edge_lists(tmp_path):
    write_file(tmp_path / PANTHER / "kdd.graph", "5 2\n0 1 2\n1 2 1\n")
    write_file(tmp_path / PANTHER / "kdd.dict", "ann\t0\nbo\t1\ncy\t2\ndee\t4\n")
    write_file(tmp_path / PANTHER / "icdm.graph", "4 2\n3 2 1\n2 0 1\n")
    write_file(tmp_path / PANTHER / "icdm.dict", "bo\t3\nann\t2\ndee\t0\ncy\t1\n")
    data = load_similarity_dataset("kdd_icdm", tmp_path)
    # cy has no edge in icdm, dee none in kdd (node 4 is isolated but kept: ids follow the dict)
    assert isinstance(data, SimilarityPairData)
    assert data.pairs.tolist() == [[0, 2], [1, 3]] and data.pairs.dtype == np.int64
    assert data.graph_1.num_nodes() == 5 and data.graph_2.num_nodes() == 4
    _all_simple(data)


def test_ca_grqc_loads_lpm_lscc_and_falls_back_to_the_snap_largest_component(tmp_path):
    lscc_root, snap_root = tmp_path / "a", tmp_path / "b"
    lscc = "*Vertices 3\n0 5\n1 9\n2 4\n*Edges 2\n0 1 1\n1 2 1\n"
    write_file(lscc_root / "pretrain/ca-GrQc/ca-GrQc-SNAP.txtu.lpm.lscc", lscc)
    (g,) = load_pretrain_corpus(["ca-grqc"], lscc_root)
    assert edge_set(g) == undirected((0, 1), (1, 2))
    snap = snap_root / "pretrain/ca-GrQc/ca-GrQc.txt.gz"
    snap.parent.mkdir(parents=True)
    snap.write_bytes(gzip.compress(b"# SNAP\n5\t9\n9\t4\n4\t4\n70\t71\n"))
    (g,) = load_pretrain_corpus(["ca-grqc"], snap_root)
    assert g.num_nodes() == 3 and edge_set(g) == undirected((0, 1), (1, 2))


def test_snap_loader_reads_gzip_edge_lists_and_corpus_concatenates_names(tmp_path):
    for folder, file in (("CA-HepTh", "CA-HepTh.txt.gz"), ("Email-Enron", "Email-Enron.txt.gz")):
        path = tmp_path / "pretrain" / folder / file
        path.parent.mkdir(parents=True)
        path.write_bytes(gzip.compress(b"# Directed graph\n# FromNodeId\tToNodeId\n100\t200\n200\t100\n200\t200\n"))
    graphs = load_pretrain_corpus(["ca-hepth", "email-enron", "synthetic"], tmp_path)
    assert len(graphs) == 2 + 4
    assert [g.num_nodes() for g in graphs[:2]] == [2, 2] and [g.num_edges() for g in graphs[:2]] == [2, 2]
    for g in graphs:
        check_simple_undirected(g)


def test_academia_loader_reads_matrix_market_from_the_zip(tmp_path):
    archive = tmp_path / "pretrain/soc-academia/soc-academia.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("soc-academia.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 2\n1 2\n3 2\n")
    (g,) = load_pretrain_corpus(["academia"], tmp_path)
    assert g.num_nodes() == 4 and edge_set(g) == undirected((0, 1), (2, 1))


def test_pretrain_corpus_rejects_a_bare_string():
    with pytest.raises(TypeError, match="sequence of dataset names"):
        load_pretrain_corpus("synthetic")


def test_synthetic_names_need_no_data_dir(tmp_path, cache_dir):
    assert len(load_pretrain_corpus(["synthetic"], tmp_path / "nowhere")) == 4
    assert load_node_dataset("synthetic-roles").name == "synthetic-roles"
    assert load_graph_dataset("synthetic-graphs").name == "synthetic-graphs"
    assert load_similarity_dataset("synthetic-similarity").name == "synthetic-similarity"
    assert not cache_dir.exists()


# ---------------------------------------------------------------------------------------------------------
# cache


def test_second_load_reads_the_cache_and_gives_an_identical_dataset(tmp_path, cache_dir, monkeypatch):
    write_file(tmp_path / "graph_classification/IMDB-BINARY/IMDBBINARY.txt", GIN)
    first = load_graph_dataset("imdb-binary", tmp_path)
    (entry,) = cache_dir.glob("imdb-binary-*.bin")  # one file per entry
    assert [p.name for p in cache_dir.iterdir() if p.name.endswith(".tmp")] == []

    def parse_again(name, paths):
        raise AssertionError("parsed again instead of reading the cache")

    spec = DATASETS["imdb-binary"]
    monkeypatch.setitem(DATASETS, "imdb-binary", dataclasses.replace(spec, parse=parse_again))
    second = load_graph_dataset("imdb-binary", tmp_path)
    assert second.labels.tolist() == first.labels.tolist() and second.labels.dtype == np.int64
    for a, b in zip(first.graphs, second.graphs):
        assert a.num_nodes() == b.num_nodes() and a.idtype == b.idtype == torch.int64
        assert all(torch.equal(x, y) for x, y in zip(a.edges(), b.edges()))


def test_a_changed_source_invalidates_the_cache(tmp_path):
    path = write_file(tmp_path / "graph_classification/IMDB-BINARY/IMDBBINARY.txt", GIN)
    assert len(load_graph_dataset("imdb-binary", tmp_path).graphs) == 2
    path.write_text("1\n2 5\n0 1 1\n0 1 0\n")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    data = load_graph_dataset("imdb-binary", tmp_path)
    assert len(data.graphs) == 1 and data.labels.tolist() == [0]


def test_a_different_data_root_does_not_reuse_the_cache(tmp_path):
    write_file(tmp_path / "a" / "graph_classification/IMDB-BINARY/IMDBBINARY.txt", GIN)
    write_file(tmp_path / "b" / "graph_classification/IMDB-BINARY/IMDBBINARY.txt", "1\n2 0\n0 1 1\n0 1 0\n")
    assert len(load_graph_dataset("imdb-binary", tmp_path / "a").graphs) == 2
    assert len(load_graph_dataset("imdb-binary", tmp_path / "b").graphs) == 1


def test_node_and_similarity_datasets_round_trip_through_the_cache(tmp_path):
    write_file(tmp_path / AIRPORT / "usa-airports.edgelist", "30 10\n10 20\n")
    write_file(tmp_path / AIRPORT / "labels-usa-airports.txt", "node label\n10 3\n20 1\n30 3\n")
    write_file(tmp_path / PANTHER / "kdd.graph", "2 1\n0 1 1\n")
    write_file(tmp_path / PANTHER / "kdd.dict", "ann\t0\nbo\t1\n")
    write_file(tmp_path / PANTHER / "icdm.graph", "2 1\n1 0 1\n")
    write_file(tmp_path / PANTHER / "icdm.dict", "ann\t1\nbo\t0\n")
    for _ in range(2):
        node = load_node_dataset("usa_airport", tmp_path)
        pair = load_similarity_dataset("kdd_icdm", tmp_path)
        assert node.labels.tolist() == [1, 1, 0] and node.graph.num_edges() == 4
        assert pair.pairs.tolist() == [[0, 1], [1, 0]] and pair.graph_2.num_nodes() == 2
