"""Format readers and graph helpers of gcc_sgcl.data, on tiny files written to tmp_path."""
import gzip
import re
import zipfile

import dgl
import numpy as np
import pytest
import torch

from gcc_sgcl.data import DataFormatError, check_simple_undirected, reindex_first_appearance, simple_undirected_graph
from gcc_sgcl.data.graphs import largest_component, remap_labels
from gcc_sgcl.data.readers import (
    find_zip_member,
    read_edge_list,
    read_gin_graphs,
    read_lpm_lscc,
    read_matrix_market,
    read_node_labels,
    read_panther_dict,
    read_panther_graph,
    read_tu_graphs,
)

from datafiles import edge_set, undirected, write_file


def _located(path, line):
    """Regex for an error message located at ``path`` line ``line``."""
    return rf"^{re.escape(str(path))} line {line}: .*"


# ---------------------------------------------------------------------------------------------------------
# graph helpers


def test_simple_undirected_graph_drops_direction_duplicates_and_self_loops():
    g = simple_undirected_graph(np.array([0, 1, 1, 2, 2, 3]), np.array([1, 0, 1, 0, 0, 3]), num_nodes=5)
    assert g.num_nodes() == 5 and g.idtype == torch.int64
    assert edge_set(g) == undirected((0, 1), (0, 2))
    assert g.num_edges() == 4
    check_simple_undirected(g)


def test_simple_undirected_graph_sorts_edges_so_output_depends_on_the_edge_set_only():
    a = simple_undirected_graph(np.array([3, 0, 2]), np.array([1, 2, 0]), 4)
    b = simple_undirected_graph(np.array([0, 1]), np.array([2, 3]), 4)
    assert all(torch.equal(x, y) for x, y in zip(a.edges(), b.edges()))
    keys = (a.edges()[0] * 4 + a.edges()[1]).tolist()
    assert keys == sorted(keys)


def test_simple_undirected_graph_keeps_empty_and_isolated_graphs():
    assert simple_undirected_graph(np.array([]), np.array([]), 0).num_nodes() == 0
    g = simple_undirected_graph(np.array([2]), np.array([2]), 3)
    assert g.num_nodes() == 3 and g.num_edges() == 0


def test_simple_undirected_graph_rejects_out_of_range_endpoints():
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        simple_undirected_graph(np.array([0]), np.array([3]), 3)
    with pytest.raises(ValueError, match="differ in length"):
        simple_undirected_graph(np.array([0, 1]), np.array([1]), 3)


def test_reindex_first_appearance_numbers_raw_ids_in_order_of_appearance():
    new, raw = reindex_first_appearance(np.array([[905, 12], [12, 7], [7, 905]]))
    assert new.tolist() == [[0, 1], [1, 2], [2, 0]]
    assert raw.tolist() == [905, 12, 7]
    assert (raw[new] == [[905, 12], [12, 7], [7, 905]]).all()


def test_remap_labels_uses_sorted_order_of_raw_values():
    assert remap_labels(np.array([2, 0, 2, -1])).tolist() == [2, 1, 2, 0]
    assert remap_labels(np.array([0, 2, 2])).dtype == np.int64


def test_largest_component_keeps_the_biggest_piece_in_original_order():
    g = simple_undirected_graph(np.array([0, 2, 3, 4]), np.array([1, 3, 4, 5]), 7)
    lcc = largest_component(g)
    assert lcc.num_nodes() == 4 and edge_set(lcc) == undirected((0, 1), (1, 2), (2, 3))


@pytest.mark.parametrize(
    "src, dst, idtype, message",
    [
        ([0, 1, 1], [1, 0, 1], torch.int64, "self-loops"),
        ([0, 1, 0, 1], [1, 0, 1, 0], torch.int64, "duplicate"),
        ([0, 1, 2], [1, 0, 0], torch.int64, "not bidirected"),
        ([0, 1], [1, 0], torch.int32, "int64"),
    ],
)
def test_check_simple_undirected_names_the_broken_convention(src, dst, idtype, message):
    g = dgl.graph((torch.tensor(src), torch.tensor(dst)), num_nodes=3, idtype=idtype)
    with pytest.raises(ValueError, match=message):
        check_simple_undirected(g)


# ---------------------------------------------------------------------------------------------------------
# GIN / DGCNN text

GIN_TEXT = """3
4 7
0 2 1 1
0 3 0 2 0
0 2 1 2
0 1 1
0 0
2 3
1 0
0 2 1 1 0.5 0.25
"""


def test_gin_reader_builds_simple_graphs_with_isolated_nodes_and_raw_labels(tmp_path):
    graphs, labels = read_gin_graphs(write_file(tmp_path / "X.txt", GIN_TEXT))
    assert labels.tolist() == [7, 0, 3]
    assert [g.num_nodes() for g in graphs] == [4, 0, 2]
    # node 0 lists 1 twice, node 2 has a self-loop, node 3 is isolated except its one-way listing of 1
    assert edge_set(graphs[0]) == undirected((0, 1), (1, 2), (1, 3))
    assert graphs[2].num_edges() == 0  # node 1 only links to itself; trailing attribute tokens ignored
    for g in graphs:
        check_simple_undirected(g)


def test_gin_reader_reads_a_zip_member(tmp_path):
    archive = tmp_path / "X.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("X/X.txt", GIN_TEXT)
        z.writestr("__MACOSX/X/X.txt", "junk")
        z.writestr("X/.DS_Store", "junk")
    member = find_zip_member(archive, "X.txt")
    assert member == "X/X.txt"
    graphs, labels = read_gin_graphs(archive, member)
    assert len(graphs) == 3 and labels.tolist() == [7, 0, 3]


def test_find_zip_member_names_the_archive_when_missing(tmp_path):
    archive = tmp_path / "X.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("X/other.txt", "1")
    with pytest.raises(DataFormatError, match=rf"{re.escape(str(archive))}.*'X.txt', found none"):
        find_zip_member(archive, "X.txt")


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("foo\n", 1, "expected the number of graphs, got 'foo'"),
        ("1\n2\n", 2, "expected 'n label', got '2'"),
        ("1\n2 0\n0 1 1\n0 x\n", 4, "integer neighbour count"),
        ("1\n2 0\n0 1 1\n0 1 q\n", 4, "integer neighbour ids"),
        ("1\n3 0\n0 1 1\n0 1 0\n0 2 0\n", 5, "declares 2 neighbours but the line lists 1"),
        ("1\n2 0\n0 1 5\n0 0\n", 3, r"neighbour id out of range \[0, 2\)"),
        ("2\n1 0\n0 0\n", 4, "expected 'n label' of graph 1, got end of file"),
        ("1\n3 0\n0 0\n", 4, "expected node line 1 of 3 of graph 0"),
        ("1\n1 0\n0 0\n1 0\n", 4, "expected end of file after 1 graphs"),
        ("1\n-1 0\n", 2, "negative node count"),
    ],
)
def test_gin_reader_locates_malformed_input(tmp_path, text, line, message):
    path = write_file(tmp_path / "BAD.txt", text)
    with pytest.raises(DataFormatError, match=_located(path, line) + message):
        read_gin_graphs(path)


# ---------------------------------------------------------------------------------------------------------
# TU format


def _tu_zip(path, a, indicator, labels, name="T"):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{name}/{name}_A.txt", a)
        z.writestr(f"{name}/{name}_graph_indicator.txt", indicator)
        z.writestr(f"{name}/{name}_graph_labels.txt", labels)
    return path


def test_tu_reader_groups_nodes_by_graph_even_when_interleaved(tmp_path):
    # graph 1 = global nodes 1, 2, 5; graph 2 = nodes 3, 4; graph 3 = node 6 (isolated)
    archive = _tu_zip(tmp_path / "T.zip", "1, 5\n5, 1\n3, 4\n2, 2\n4, 3\n1, 5\n", "1\n1\n2\n2\n1\n3\n", "4\n-1\n4\n")
    graphs, labels = read_tu_graphs(archive, "T")
    assert labels.tolist() == [4, -1, 4]
    assert [g.num_nodes() for g in graphs] == [3, 2, 1]
    assert edge_set(graphs[0]) == undirected((0, 2))
    assert edge_set(graphs[1]) == undirected((0, 1))
    assert graphs[2].num_edges() == 0
    for g in graphs:
        check_simple_undirected(g)


@pytest.mark.parametrize(
    "a, indicator, labels, member, line, message",
    [
        ("1, 2\n1, 3\n", "1\n1\n2\n", "0\n0\n", "T_A.txt", 2, "edge joins graphs 1 and 2"),
        ("1, x\n", "1\n1\n", "0\n", "T_A.txt", 1, "expected two integer node ids, got '1, x'"),
        ("1, 2\n\n2, 9\n", "1\n1\n", "0\n", "T_A.txt", 3, r"node id out of range \[1, 2\]"),
        ("1, 2\n", "1\n3\n", "0\n", "T_graph_indicator.txt", 2, r"3 out of range \[1, 1\]"),
        ("1, 2\n", "1\n1\n", "0 1\n", "T_graph_labels.txt", 1, "one integer graph label"),
    ],
)
def test_tu_reader_locates_malformed_input(tmp_path, a, indicator, labels, member, line, message):
    archive = _tu_zip(tmp_path / "T.zip", a, indicator, labels)
    with pytest.raises(DataFormatError, match=_located(f"{archive}:T/{member}", line) + message):
        read_tu_graphs(archive, "T")


# ---------------------------------------------------------------------------------------------------------
# edge lists and node labels


def test_edge_list_reader_skips_comments_and_reads_tabs_spaces_and_gzip(tmp_path):
    text = "# FromNodeId\tToNodeId\n10\t20\n\n20 30\n30   10\n"
    plain = write_file(tmp_path / "e.txt", text)
    zipped = tmp_path / "e.txt.gz"
    zipped.write_bytes(gzip.compress(text.encode()))
    for path in (plain, zipped):
        assert read_edge_list(path).tolist() == [[10, 20], [20, 30], [30, 10]]
    assert read_edge_list(write_file(tmp_path / "empty.txt", "# nothing\n")).shape == (0, 2)


@pytest.mark.parametrize("bad", ["1 2 3", "1", "1 b"])
def test_edge_list_reader_locates_malformed_rows(tmp_path, bad):
    path = write_file(tmp_path / "e.txt", f"# c\n1 2\n{bad}\n")
    with pytest.raises(DataFormatError, match=_located(path, 3) + "expected two integer node ids"):
        read_edge_list(path)


def test_gzip_errors_name_the_gz_file(tmp_path):
    path = tmp_path / "e.txt.gz"
    path.write_bytes(gzip.compress(b"1 2\n3 x\n"))
    with pytest.raises(DataFormatError, match=_located(path, 2)):
        read_edge_list(path)


def test_node_label_reader_accepts_struc2vec_header_or_none(tmp_path):
    with_header = write_file(tmp_path / "labels.txt", "node label\n10 1\n11 0\n")
    without = write_file(tmp_path / "x.nodelabel", "10 1\n11 0\n")
    for path in (with_header, without):
        ids, values = read_node_labels(path)
        assert ids.tolist() == [10, 11] and values.tolist() == [1, 0]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("node label\n10 1\n10 2\n", 3, "node 10 labelled twice"),
        ("10 1\nnode label\n", 2, "expected 'node label'"),
        ("10 1\n11\n", 2, "expected 'node label'"),
        ("10 1.5\n", 1, "expected 'node label'"),
    ],
)
def test_node_label_reader_locates_malformed_input(tmp_path, text, line, message):
    path = write_file(tmp_path / "labels.txt", text)
    with pytest.raises(DataFormatError, match=_located(path, line) + message):
        read_node_labels(path)


# ---------------------------------------------------------------------------------------------------------
# lpm.lscc, Panther, Matrix Market

LSCC_TEXT = "*Vertices 3\n0 22\n1 24\n2 7\n*Edges 4\n0 1 1\n1 0 1\n1 2 1\n2 1 1\n"


def test_lpm_lscc_reader_returns_node_count_and_edges(tmp_path):
    n, edges = read_lpm_lscc(write_file(tmp_path / "g.lpm.lscc", LSCC_TEXT))
    assert n == 3 and edges.tolist() == [[0, 1], [1, 0], [1, 2], [2, 1]]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("*Vertex 3\n", 1, r"expected '\*Vertices count'"),
        ("*Vertices 2\n0 5\n", 3, "expected 2 vertex lines 'new_id raw_id', got end of file"),
        ("*Vertices 2\n0 5\n*Edges 1\n", 3, "expected 'new_id raw_id', got '\\*Edges 1'"),
        ("*Vertices 2\n0 5\n0 6\n*Edges 0\n", 3, "vertex id 0 listed twice"),
        ("*Vertices 1\n3 5\n*Edges 0\n", 2, r"vertex id 3 out of range \[0, 1\)"),
        ("*Vertices 1\n0 5\n*Edges 2\n0 0 1\n", 5, "expected 2 edge lines"),
        ("*Vertices 1\n0 5\n*Edges 1\n0 0 1\n0 0 1\n", 5, "expected end of file after 1 edge lines"),
        ("*Vertices 1\n0 5\n*Edges 1\n0 x 1\n", 4, "expected 'u v weight'"),
    ],
)
def test_lpm_lscc_reader_locates_malformed_input(tmp_path, text, line, message):
    path = write_file(tmp_path / "g.lpm.lscc", text)
    with pytest.raises(DataFormatError, match=_located(path, line) + message):
        read_lpm_lscc(path)


def test_panther_readers_keep_header_node_count_and_dict_ids(tmp_path):
    n, edges = read_panther_graph(write_file(tmp_path / "a.graph", "5\t2\n0\t1\t3\n3\t1\t1\n"))
    assert n == 5 and edges.tolist() == [[0, 1], [3, 1]]
    names = read_panther_dict(write_file(tmp_path / "a.dict", "ann lee\t0\nbo\t4\n"), n)
    assert names == {"ann lee": 0, "bo": 4}


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("5\n", 1, "expected header 'num_nodes num_edges'"),
        ("5 2\n0 1 1\n", 3, "expected 2 edge rows"),
        ("5 1\n0 1 1\n1 2 1\n", 3, "expected end of file after the 1 edge rows"),
        ("5 1\n0 9 1\n", 2, r"node id 9 out of range \[0, 5\)"),
        ("5 1\n0 1 many\n", 2, "expected 'u v count'"),
    ],
)
def test_panther_graph_reader_locates_malformed_input(tmp_path, text, line, message):
    path = write_file(tmp_path / "a.graph", text)
    with pytest.raises(DataFormatError, match=_located(path, line) + message):
        read_panther_graph(path)


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("ann 0\n", 1, "expected 'name<TAB>id'"),
        ("ann\tzero\n", 1, "integer node id"),
        ("ann\t0\nann\t1\n", 2, "duplicate entry for name 'ann'"),
        ("ann\t0\nbo\t0\n", 2, "duplicate entry .* id 0"),
        ("ann\t7\n", 1, r"node id 7 out of range \[0, 5\)"),
    ],
)
def test_panther_dict_reader_locates_malformed_input(tmp_path, text, line, message):
    path = write_file(tmp_path / "a.dict", text)
    with pytest.raises(DataFormatError, match=_located(path, line) + message):
        read_panther_dict(path, 5)


def test_matrix_market_reader_converts_to_zero_based(tmp_path):
    text = "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n4 4 2\n1 2\n4 2 1.0\n"
    n, edges = read_matrix_market(write_file(tmp_path / "g.mtx", text))
    assert n == 4 and edges.tolist() == [[0, 1], [3, 1]]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("3 4 1\n1 2\n", 1, "square adjacency matrix"),
        ("3 3 1\n1 2 3 4\n", 2, r"expected 'row col \[value\]'"),
        ("3 3 1\n0 2\n", 2, r"index out of range \[1, 3\]"),
        ("3 3 2\n1 2\n", 3, "expected 2 entries"),
    ],
)
def test_matrix_market_reader_locates_malformed_input(tmp_path, text, line, message):
    path = write_file(tmp_path / "g.mtx", text)
    with pytest.raises(DataFormatError, match=_located(path, line) + message):
        read_matrix_market(path)


# ---------------------------------------------------------------------------------------------------------
# errors quote at most a few hundred characters of a line (issue 83: a 1 GiB line was printed whole)


@pytest.mark.parametrize("line", ["7" * 100_000, "1 " * 50_000, "1 " + "x" * 100_000], ids=["one-token", "many-tokens",
                                                                                             "long-second-token"])
def test_an_error_quoting_a_huge_line_cuts_it_and_gives_its_length(tmp_path, line):
    path = write_file(tmp_path / "e.txt", f"1 2\n{line}\n")
    with pytest.raises(DataFormatError, match=_located(path, 2)) as info:
        read_edge_list(path)
    message = str(info.value)
    assert len(message) < len(str(path)) + 300 and "\n" not in message
    assert message.endswith(f"'... ({len(line.strip())} characters)")


def test_an_error_quoting_a_huge_node_id_of_a_labels_file_cuts_it(tmp_path):
    from gcc_sgcl.data.files import read_labels_file

    path = write_file(tmp_path / "labels.txt", "0 a\n" + "9" * 100_000 + " b\n")
    with pytest.raises(DataFormatError, match=_located(path, 2)) as info:
        read_labels_file(path, np.array([0, 1]), "g.edgelist")
    assert len(str(info.value)) < len(str(path)) + 300 and "... (100000 characters) is not a node id" in str(info.value)
