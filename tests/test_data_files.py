"""Datasets given by path: every format on tiny files, labels and pairs keyed by original ids, clear errors."""
import gzip
import zipfile

import dgl
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import torch

from gcc_sgcl.data import (
    DataFormatError,
    GraphLabelData,
    NodeLabelData,
    check_simple_undirected,
    dataset_kind,
    dataset_name,
    graph_from_networkx,
    graph_from_scipy,
    is_dataset_path,
    load_any,
    load_graph_dataset,
    load_node_dataset,
    load_pretrain_corpus,
    load_similarity_dataset,
)

from datafiles import write_file

# struc2vec's airport layout: a headerless edge list and a labels file with a "node label" header
AIRPORT_EDGES = "10241 10243\n10243 10245\n10245 10241\n10245 10299\n10299 10301\n"
AIRPORT_LABELS = "node label\n10241 1\n10243 2\n10245 0\n10299 2\n10301 3\n"


def _id_edges(data):
    """The undirected edge set of a node dataset in original ids."""
    src, dst = (t.numpy() for t in data.graph.edges())
    return {frozenset((data.ids[u].item(), data.ids[v].item())) for u, v in zip(src, dst)}


def test_airport_edge_list_keeps_original_ids_and_its_header_labels(tmp_path):
    edges = write_file(tmp_path / "usa-airports.edgelist", AIRPORT_EDGES)
    labels = write_file(tmp_path / "labels-usa-airports.txt", AIRPORT_LABELS)
    data = load_node_dataset(str(edges), labels=str(labels))
    check_simple_undirected(data.graph)
    assert data.name == "usa-airports" and dataset_kind(str(edges)) == "node"
    assert data.ids.dtype == np.int64 and data.ids.tolist() == [10241, 10243, 10245, 10299, 10301]
    assert _id_edges(data) == {frozenset(e) for e in [(10241, 10243), (10243, 10245), (10245, 10241),
                                                       (10245, 10299), (10299, 10301)]}
    assert dict(zip(data.ids.tolist(), data.labels.tolist())) == {10241: 1, 10243: 2, 10245: 0, 10299: 2, 10301: 3}


def test_partial_labels_mark_the_unnamed_nodes_unlabelled(tmp_path):
    edges = write_file(tmp_path / "g.edgelist", AIRPORT_EDGES)
    labels = write_file(tmp_path / "some.txt", "10245 b\n10241 a\n")
    data = load_node_dataset(edges, labels=labels)
    assert data.graph.num_nodes() == 5
    assert dict(zip(data.ids.tolist(), data.labels.tolist())) == {10241: 0, 10243: -1, 10245: 1, 10299: -1, 10301: -1}


def test_string_ids_commas_comments_weights_and_gzip_are_read(tmp_path):
    text = "# a comment\n% another\nparis, lyon, 3.5\nlyon,nice\n\nnice marseille 1 2020\n"
    plain = write_file(tmp_path / "cities.csv", text)
    zipped = tmp_path / "cities.txt.gz"
    zipped.write_bytes(gzip.compress(text.encode()))
    for path in (plain, zipped):
        data = load_node_dataset(path)
        assert data.ids.tolist() == ["paris", "lyon", "nice", "marseille"]
        assert _id_edges(data) == {frozenset(e) for e in [("paris", "lyon"), ("lyon", "nice"), ("nice", "marseille")]}
        assert (data.labels == -1).all()
    assert dataset_name(str(zipped)) == "cities" and dataset_name(str(plain)) == "cities"


def test_labels_match_integer_ids_numerically_and_string_labels_are_classes(tmp_path):
    edges = write_file(tmp_path / "g.txt", "1 2\n2 3\n")
    data = load_node_dataset(edges, labels=write_file(tmp_path / "l.txt", "03 x\n1 y\n2 x\n"))
    assert data.labels.tolist() == [1, 0, 0]  # node 1 -> y, node 2 -> x, node 3 ("03") -> x


def test_matrix_market_ids_are_one_based_rows_and_isolated_nodes_stay(tmp_path):
    path = write_file(tmp_path / "m.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 2\n2 1\n3 2\n")
    data = load_node_dataset(path)
    assert data.ids.tolist() == [1, 2, 3, 4] and data.graph.num_nodes() == 4
    assert _id_edges(data) == {frozenset((1, 2)), frozenset((2, 3))}


@pytest.mark.parametrize("suffix, write", [(".graphml", nx.write_graphml), (".gml", nx.write_gml)])
def test_graphml_and_gml_keep_the_file_node_ids(tmp_path, suffix, write):
    g = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    path = tmp_path / f"g{suffix}"
    write(g, path)
    data = load_node_dataset(path)
    check_simple_undirected(data.graph)
    assert data.ids.tolist() == ["a", "b", "c", "d"]
    assert _id_edges(data) == {frozenset(e) for e in g.edges}


def test_gml_nodes_without_labels_go_by_their_ids(tmp_path):
    path = write_file(tmp_path / "g.gml", "graph [ node [ id 7 ] node [ id 3 ] edge [ source 7 target 3 ] ]\n")
    data = load_node_dataset(path)
    assert data.ids.tolist() == [7, 3] and _id_edges(data) == {frozenset((7, 3))}


def test_dgl_binary_one_graph_is_a_node_dataset_several_a_labelled_collection(tmp_path):
    single = tmp_path / "one.bin"
    dgl.save_graphs(str(single), [dgl.graph(([0, 1, 1], [1, 2, 2]), num_nodes=4)])
    data = load_node_dataset(single)
    check_simple_undirected(data.graph)
    assert data.graph.num_nodes() == 4 and data.graph.num_edges() == 4 and data.ids.tolist() == [0, 1, 2, 3]
    many = tmp_path / "many.dgl"
    graphs = [dgl.graph(([0], [1])), dgl.graph(([0, 1], [1, 2])), dgl.graph(([0], [2]))]
    dgl.save_graphs(str(many), graphs, {"glabel": torch.tensor([5, 9, 5])})
    assert dataset_kind(str(many)) == "graph"
    collection = load_graph_dataset(many)
    assert collection.labels.tolist() == [0, 1, 0] and [g.num_nodes() for g in collection.graphs] == [2, 3, 3]


def test_gin_text_and_tu_directory_and_zip_are_graph_collections(tmp_path):
    gin = write_file(tmp_path / "tiny.txt", "2\n2 1\n0 1 1\n0 1 0\n3 0\n0 1 1\n0 2 0 2\n0 1 1\n")
    assert dataset_kind(str(gin)) == "graph" and dataset_kind(str(write_file(tmp_path / "e.txt", "1 2\n"))) == "node"
    data = load_graph_dataset(gin)
    assert data.labels.tolist() == [1, 0] and [g.num_edges() for g in data.graphs] == [2, 4]
    tu = tmp_path / "TINY"
    parts = {"A": "1, 2\n2, 1\n3, 4\n4, 5\n", "graph_indicator": "1\n1\n2\n2\n2\n", "graph_labels": "-1\n1\n"}
    for part, text in parts.items():
        write_file(tu / f"TINY_{part}.txt", text)
    with zipfile.ZipFile(tmp_path / "TINY.zip", "w") as archive:
        for part, text in parts.items():
            archive.writestr(f"TINY/TINY_{part}.txt", text)
    for path in (tu, tmp_path / "TINY.zip"):
        data = load_graph_dataset(path)
        assert data.name == "TINY" and data.labels.tolist() == [0, 1]
        assert [g.num_nodes() for g in data.graphs] == [2, 3] and [g.num_edges() for g in data.graphs] == [2, 4]


def test_graph_labels_file_overrides_a_collection_by_graph_index(tmp_path):
    gin = write_file(tmp_path / "tiny.txt", "2\n2 1\n0 1 1\n0 1 0\n2 0\n0 1 1\n0 1 0\n")
    data = load_graph_dataset(gin, labels=write_file(tmp_path / "gl.txt", "graph label\n1 good\n"))
    assert data.labels.tolist() == [-1, 0]


def test_similarity_by_two_paths_maps_pairs_through_original_ids(tmp_path):
    one = write_file(tmp_path / "kdd.edgelist", "alice bob\nbob carol\n")
    two = write_file(tmp_path / "icdm.edgelist", "carol dave\nbob carol\nalice bob\n")
    pairs = write_file(tmp_path / "pairs.txt", "kdd icdm\nalice alice\ncarol carol\n")
    data = load_similarity_dataset((one, two), pairs=pairs)
    assert data.name == "kdd+icdm"
    assert [(data.ids_1[a], data.ids_2[b]) for a, b in data.pairs.tolist()] == [("alice", "alice"), ("carol", "carol")]
    with pytest.raises(ValueError, match="pairs file"):
        load_similarity_dataset((one, two))


def test_pretrain_corpus_mixes_paths_and_registered_names(tmp_path):
    edges = write_file(tmp_path / "g.edgelist", AIRPORT_EDGES)
    gin = write_file(tmp_path / "tiny.txt", "2\n2 1\n0 1 1\n0 1 0\n2 0\n0 1 1\n0 1 0\n")
    graphs = load_pretrain_corpus([str(edges), str(gin), "synthetic"])
    assert [g.num_nodes() for g in graphs[:3]] == [5, 2, 2] and len(graphs) == 3 + 4
    assert isinstance(load_any(str(edges)), NodeLabelData) and isinstance(load_any(str(gin)), GraphLabelData)


def test_a_name_is_a_path_only_when_it_looks_like_one(tmp_path):
    assert not is_dataset_path("usa_airport") and not is_dataset_path("typo-name")
    assert is_dataset_path("g.edgelist") and is_dataset_path(tmp_path) and is_dataset_path("dir/g")
    with pytest.raises(ValueError, match="unknown dataset 'typo-name'"):
        load_node_dataset("typo-name")
    with pytest.raises(FileNotFoundError, match="missing.edgelist"):
        load_node_dataset(str(tmp_path / "missing.edgelist"))


def test_kind_mismatches_and_labels_for_registered_names_are_refused(tmp_path):
    edges = write_file(tmp_path / "g.edgelist", AIRPORT_EDGES)
    with pytest.raises(ValueError, match="single graph"):
        load_graph_dataset(edges)
    with pytest.raises(ValueError, match="labels file applies to a dataset given by path"):
        load_node_dataset("synthetic-roles", labels=edges)


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("bad.edgelist", "1 2\n3\n", r"bad.edgelist line 2: expected an edge 'u v'"),
        ("empty.csv", "# nothing\n", r"empty.csv: no edges"),
        ("loops.edgelist", "1 1\n2 2\n", r"loops.edgelist: dataset 'loops' has no edges: all 2 nodes are isolated"),
        ("void.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 0\n",
         r"void.mtx: dataset 'void' has no edges"),
        ("bad.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 3\n", r"bad.mtx line 3: index out"),
        ("bad.graphml", "<graphml><graph>", r"bad.graphml: not a valid GraphML file"),
        ("bad.gml", "graph [ node [ id 0 ] edge [ source 0 ]", r"bad.gml: not a valid GML file"),
        ("bad.bin", "not a dgl file", r"bad.bin: not a DGL binary"),
        ("bad.txt", "2\n1 0\n0 0\n", r"bad.txt line 4: expected 'n label' of graph 1"),
        ("graph.xyz", "1 2\n", r"unknown graph file type '.xyz'"),
    ],
)
def test_bad_graph_files_raise_an_error_naming_file_line_and_expectation(tmp_path, name, text, message):
    path = write_file(tmp_path / name, text)
    with pytest.raises(DataFormatError, match=message):
        load_any(str(path))


@pytest.mark.parametrize(
    "text, message",
    [
        ("node label\n10241 1\n99 2\n", r"l.txt line 3: '99' is not a node id of"),
        ("99 2\n10241 1\n", r"l.txt line 1: '99' is not a node id of"),
        ("1_0241 2\n", r"l.txt line 1: '1_0241' is not a node id of"),
        ("10241.0 2\n", r"l.txt line 1: '10241.0' is not a node id of"),
        ("10241 1\n10241 2\n", r"l.txt line 2: node '10241' labelled twice"),
        ("10241 1 extra\n", r"l.txt line 1: expected 'node label' \(two fields\)"),
        ("node label\n", r"l.txt: no labels"),
    ],
)
def test_bad_labels_files_raise_at_the_offending_line(tmp_path, text, message):
    edges = write_file(tmp_path / "g.edgelist", AIRPORT_EDGES)
    with pytest.raises(DataFormatError, match=message):
        load_node_dataset(edges, labels=write_file(tmp_path / "l.txt", text))


def test_networkx_and_scipy_graphs_convert_with_their_ids():
    karate = nx.karate_club_graph()
    g, ids = graph_from_networkx(karate)
    check_simple_undirected(g)
    assert ids.tolist() == list(range(34)) and g.num_edges() == 2 * karate.number_of_edges()
    directed = sp.coo_array((np.array([1.0, 2.0, 0.0]), (np.array([0, 2, 1]), np.array([1, 0, 2]))), shape=(4, 4))
    g, ids = graph_from_scipy(directed)
    check_simple_undirected(g)
    assert g.num_nodes() == 4 and g.num_edges() == 4  # the explicit zero (1, 2) is not an edge


def test_usa_airport_by_path_equals_the_registered_dataset(shared_data):
    folder = shared_data / "node_classification" / "struc2vec-airports"
    by_path = load_node_dataset(folder / "usa-airports.edgelist", labels=folder / "labels-usa-airports.txt")
    registered = load_node_dataset("usa_airport", shared_data)
    assert by_path.graph.num_nodes() == registered.graph.num_nodes() == 1190
    assert torch.equal(torch.stack(by_path.graph.edges()), torch.stack(registered.graph.edges()))
    assert np.array_equal(by_path.labels, registered.labels)


def test_a_byte_order_mark_and_an_uppercase_gz_suffix_are_read(tmp_path):
    bom = b"\xef\xbb\xbf"
    edges = tmp_path / "excel.csv"
    edges.write_bytes(bom + b"1,2\r\n2,3\r\n3,1\r\n3,4\r\n")
    labels = tmp_path / "labels.txt"
    labels.write_bytes(bom + b"1 a\r\n2 b\r\n3 a\r\n")
    data = load_node_dataset(edges, labels=labels)
    assert data.ids.tolist() == [1, 2, 3, 4] and data.labels.tolist() == [0, 1, 0, -1]
    upper = tmp_path / "g.edgelist.GZ"
    upper.write_bytes(gzip.compress(AIRPORT_EDGES.encode()))
    assert load_node_dataset(upper).ids.tolist() == [10241, 10243, 10245, 10299, 10301]


def test_an_edge_list_header_is_skipped_above_integer_ids_and_ids_keep_how_they_are_written(tmp_path):
    data = load_node_dataset(write_file(tmp_path / "h.csv", "source,target,weight\n1,2,0.5\n2,3,1\n"))
    assert data.ids.tolist() == [1, 2, 3] and _id_edges(data) == {frozenset((1, 2)), frozenset((2, 3))}
    words = load_node_dataset(write_file(tmp_path / "w.csv", "src,dst\na,b\n"))  # a header cannot be told from an edge
    assert words.ids.tolist() == ["src", "dst", "a", "b"]
    padded = load_node_dataset(write_file(tmp_path / "zip.edgelist", "01 1\n1 2\n"))
    assert padded.ids.tolist() == ["01", "1", "2"] and padded.graph.num_edges() == 4


def test_a_comma_separated_txt_is_an_edge_list_and_a_one_number_txt_a_gin_collection(tmp_path):
    data = load_any(str(write_file(tmp_path / "comma.txt", "1,2\n2,3\n3,4\n")))
    assert isinstance(data, NodeLabelData) and data.ids.tolist() == [1, 2, 3, 4]
    assert isinstance(load_any(str(write_file(tmp_path / "gin.txt", "1\n2 0\n0 1 1\n0 1 0\n"))), GraphLabelData)


def test_a_pairs_line_naming_an_unknown_node_is_an_error_also_on_the_first_line(tmp_path):
    one = write_file(tmp_path / "a.edgelist", "100 101\n101 102\n")
    two = write_file(tmp_path / "b.edgelist", "100 101\n")
    for text, bad in (("999 100\n100 101\n", "'999' is not a node id of"),
                      ("100 999\n100 101\n", "'999' is not a node id of")):
        with pytest.raises(DataFormatError, match=f"p.txt line 1: {bad}"):
            load_similarity_dataset((one, two), pairs=write_file(tmp_path / "p.txt", text))
    data = load_similarity_dataset((one, two), pairs=write_file(tmp_path / "p.txt", "id_1 id_2\n100 101\n"))
    assert data.pairs.tolist() == [[0, 1]]


def test_labels_name_padded_string_ids_as_written_and_label_values_compare_as_numbers(tmp_path):
    edges = write_file(tmp_path / "pad.edgelist", "01 2\n2 3\n3 4\n")
    with pytest.raises(DataFormatError, match=r"l.txt line 1: '1' is not a node id of"):
        load_node_dataset(edges, labels=write_file(tmp_path / "l.txt", "1 a\n2 b\n"))
    data = load_node_dataset(edges, labels=write_file(tmp_path / "l.txt", "node class\n01 9\n2 10\n3 09\n"))
    assert data.ids.tolist() == ["01", "2", "3", "4"] and data.labels.tolist() == [0, 1, 0, -1]


def test_graphml_and_gml_read_gzip_of_any_case_and_a_byte_order_mark(tmp_path):
    g = nx.Graph([("a", "b"), ("b", "c")])
    nx.write_graphml(g, tmp_path / "g.graphml")
    nx.write_gml(g, tmp_path / "g.gml")
    (tmp_path / "z.graphml.GZ").write_bytes(gzip.compress((tmp_path / "g.graphml").read_bytes()))
    (tmp_path / "b.gml").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "g.gml").read_bytes())
    for name in ("z.graphml.GZ", "b.gml"):
        data = load_node_dataset(tmp_path / name)
        assert _id_edges(data) == {frozenset("ab"), frozenset("bc")}
