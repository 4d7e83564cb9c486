"""One reading of every input format, shared by the API and the command line: a file read by ``generate`` and the
same file read by :func:`gcc_sgcl.read_graph_file` and embedded by the API give the same rows, ids and refusals;
quoting, explicit zeros, line breaks in ids, missing labels, non-finite or non-real values, empty members."""
import warnings

import dgl
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import torch

import gcc_sgcl
from gcc_sgcl.data.files import read_dataset_file
from gcc_sgcl.data.text import DataFormatError
from gcc_sgcl.engine.checkpoint import CheckpointError
from gcc_sgcl.engine.generate import GenerateConfig, generate


def _write(path, text):
    path.write_text(text)
    return path


def _generated(run, path, copies=2):
    """``(rows, ids or None)`` that ``generate`` writes for the file ``path`` with the encoder of ``run``."""
    generate(run, [str(path)], GenerateConfig(copies=copies), progress=False)
    stem = path.name.split(".")[0]
    rows = np.load(run / f"{stem}.npy")
    ids_file = run / f"{stem}.ids.txt"
    return rows, ids_file.read_text().splitlines() if ids_file.exists() else None


def test_quoted_csv_ids_keep_their_spaces_and_commas(tmp_path):
    path = _write(tmp_path / "cities.csv", '"New York","Los Angeles",1\n"Los Angeles","San Diego, CA",2\n'
                                          '"San Diego, CA","New York"\n"New York",Boston\n')
    data = read_dataset_file(path)
    assert data.ids.tolist() == ["New York", "Los Angeles", "San Diego, CA", "Boston"]
    assert data.graph.num_edges() == 8


@pytest.mark.parametrize("line", ['"New York,Boston\n', '"a b", "c\n'])
def test_a_quote_left_open_is_refused_at_its_line(tmp_path, line):
    path = _write(tmp_path / "bad.csv", "x,y\n" + line)
    with pytest.raises(DataFormatError, match=r"bad.csv line 2: a double quote left open"):
        read_dataset_file(path)


def test_matrix_market_explicit_zeros_are_no_edges_as_in_a_scipy_matrix(tmp_path):
    path = _write(tmp_path / "z.mtx", "%%MatrixMarket matrix coordinate real symmetric\n4 4 5\n2 1 1.0\n3 2 0\n"
                                      "4 3 2.5\n4 1 0.0\n3 1 -0e0\n")
    g = read_dataset_file(path).graph
    assert g.num_edges() == 4  # 2-1 and 4-3 only
    dense = np.zeros((4, 4))
    dense[1, 0], dense[3, 2] = 1.0, 2.5
    matrix = sp.coo_array(dense)
    matrix = sp.coo_array((np.r_[matrix.data, 0.0], (np.r_[matrix.row, 2], np.r_[matrix.col, 1])), shape=(4, 4))
    api = gcc_sgcl.as_dgl_graph(matrix)  # an explicit zero stored in the matrix
    assert [t.tolist() for t in api.edges()] == [t.tolist() for t in g.edges()]


@pytest.mark.parametrize("banner,entry,message", [
    ("real general", "1 2 nan", "entry value 'nan' is not a finite number"),
    ("real general", "1 2 inf", "entry value 'inf' is not a finite number"),
    ("real general", "1 2 heavy", "entry value 'heavy' is not a number"),
    ("complex general", "1 2 1.0 2.0", "line 1: a 'complex' matrix"),
    ("array real general", "1.0", "line 1: a dense 'array' matrix"),
])
def test_matrix_market_values_that_are_no_adjacency_are_refused(tmp_path, banner, entry, message):
    path = _write(tmp_path / "m.mtx", f"%%MatrixMarket matrix coordinate {banner}\n3 3 2\n2 3 1\n{entry}\n"
                  .replace("coordinate array", "array"))
    with pytest.raises(DataFormatError, match=message):
        read_dataset_file(path)


@pytest.mark.parametrize("values,message", [
    (np.array([np.nan, 1.0]), "NaN or inf"), (np.array([np.inf, 1.0]), "NaN or inf"),
    (np.array([1 + 2j, 1.0]), "real entries"),
])
def test_the_api_refuses_the_matrices_a_matrix_market_file_may_not_hold(values, message):
    matrix = sp.coo_array((values, ([0, 1], [1, 2])), shape=(3, 3))
    with pytest.raises(ValueError, match=message):
        gcc_sgcl.as_dgl_graph(matrix)


def test_an_id_with_a_line_break_is_refused_before_ids_txt_could_misalign(tmp_path):
    g = nx.Graph([("a\nb", "c"), ("c", "d"), ("d", "a\nb")])
    nx.write_graphml(g, tmp_path / "g.graphml")
    with pytest.raises(DataFormatError, match=r"node id 'a\\nb' holds a line break .*ids.txt keeps one id per line"):
        read_dataset_file(tmp_path / "g.graphml")


@pytest.mark.parametrize("missing", ["nan", "NaN", "NA", "null", "N/A"])
def test_a_missing_label_leaves_the_node_unlabelled_never_a_class(tmp_path, missing):
    graph = _write(tmp_path / "g.edgelist", "a b\nb c\nc d\nd a\n")
    labels = _write(tmp_path / "labels.txt", f"node label\na 0.0\nb {missing}\nc 1.0\nd 1.0\n")
    data = gcc_sgcl.read_graph_file(graph, labels)
    assert data.labels.tolist() == [0, -1, 1, 1]
    ints = _write(tmp_path / "ints.txt", f"a 3\nb {missing}\nc 5\n")
    assert gcc_sgcl.read_graph_file(graph, ints).labels.tolist() == [0, -1, 1, -1]


def test_a_binary_label_tensor_with_nan_leaves_the_graph_unlabelled_and_refuses_fractions(tmp_path):
    graphs = [gcc_sgcl.as_dgl_graph(nx.cycle_graph(4)), gcc_sgcl.as_dgl_graph(nx.path_graph(3)),
              gcc_sgcl.as_dgl_graph(nx.star_graph(3))]
    dgl.save_graphs(str(tmp_path / "c.bin"), graphs, {"labels": torch.tensor([2.0, float("nan"), 7.0])})
    assert read_dataset_file(tmp_path / "c.bin").labels.tolist() == [0, -1, 1]
    dgl.save_graphs(str(tmp_path / "f.bin"), graphs, {"labels": torch.tensor([0.0, 0.5, 1.0])})
    with pytest.raises(DataFormatError, match="f.bin: the label tensor holds 0.5, not an integer class"):
        read_dataset_file(tmp_path / "f.bin")


def test_a_binary_graph_declaring_billions_of_nodes_is_refused_before_any_node_array(tmp_path):
    dgl.save_graphs(str(tmp_path / "huge.bin"), [dgl.graph(([0, 1], [1, 2]), num_nodes=3 * 10**9)])
    with pytest.raises(DataFormatError, match=r"huge.bin: its graph declares 3000000000 nodes for 2 edges"):
        read_dataset_file(tmp_path / "huge.bin")


@pytest.mark.parametrize("nodes", [2**31 + 5, 2**33, 3 * 10**6])
def test_an_api_dgl_graph_of_more_nodes_than_its_edges_allow_is_refused_before_allocation(nodes):
    with pytest.raises(ValueError, match=f"num_nodes\\(\\) makes a graph of {nodes} nodes for 2 edges"):
        gcc_sgcl.as_dgl_graph(dgl.graph(([0, 1], [1, 2]), num_nodes=nodes))


def test_a_heterograph_is_refused_naming_what_to_pass():
    g = dgl.heterograph({("user", "follows", "item"): ([0, 1], [1, 2])})
    with pytest.raises(TypeError, match=r"heterograph .*dgl.to_homogeneous"):
        gcc_sgcl.as_dgl_graph(g)


def test_a_file_embeds_to_the_same_rows_and_ids_through_generate_and_the_api(tiny_encoder, tmp_path):
    path = _write(tmp_path / "cities.csv", '"New York","Los Angeles"\n"Los Angeles","San Diego, CA"\n'
                                          '"San Diego, CA","New York"\n"New York",Boston\nBoston,"Los Angeles"\n')
    rows, ids = _generated(tiny_encoder, path)
    data = gcc_sgcl.read_graph_file(path)
    assert ids == data.ids.tolist() == ["New York", "Los Angeles", "San Diego, CA", "Boston"]
    api = gcc_sgcl.load_encoder(tiny_encoder).embed_nodes(data.graph, copies=2)
    np.testing.assert_array_equal(rows, api)


def test_an_edgeless_member_is_embedded_by_both_and_an_empty_one_refused_by_both(tiny_encoder, tmp_path):
    graphs = [gcc_sgcl.as_dgl_graph(nx.cycle_graph(5)), dgl.graph(([], []), num_nodes=3, idtype=torch.int64),
              gcc_sgcl.as_dgl_graph(nx.star_graph(4))]
    dgl.save_graphs(str(tmp_path / "coll.bin"), graphs, {"labels": torch.tensor([0, 1, 0])})
    rows, _ = _generated(tiny_encoder, tmp_path / "coll.bin")
    data = gcc_sgcl.read_graph_file(tmp_path / "coll.bin")
    api = gcc_sgcl.load_encoder(tiny_encoder).embed_graphs(data.graphs)
    np.testing.assert_array_equal(rows, api)
    assert rows.shape[0] == 3 and np.isfinite(rows).all()

    graphs[1] = dgl.graph(([], []), num_nodes=0, idtype=torch.int64)
    dgl.save_graphs(str(tmp_path / "empty.bin"), graphs, {"labels": torch.tensor([0, 1, 0])})
    with pytest.raises(DataFormatError, match="graph 2 of dataset 'empty' has no nodes"):
        generate(tiny_encoder, [str(tmp_path / "empty.bin")], progress=False)
    with pytest.raises(ValueError, match=r"graphs\[1\] has no nodes"):
        gcc_sgcl.load_encoder(tiny_encoder).embed_graphs(graphs)
    with pytest.raises(ValueError, match="none of the 2 graphs has an edge"):
        gcc_sgcl.load_encoder(tiny_encoder).embed_graphs([nx.empty_graph(2), nx.empty_graph(3)])


def _forged(run, tmp_path, change):
    state = torch.load(run / "checkpoint.pt", weights_only=True)
    key = next(k for k, v in state["model"].items() if v.is_floating_point())
    state["model"][key] = change(state["model"][key])
    folder = tmp_path / "forged"
    folder.mkdir()
    torch.save(state, folder / "checkpoint.pt")
    return folder, key


@pytest.mark.parametrize("change,message", [
    (lambda t: t * float("nan"), "non-finite weights \\(NaN/inf\\) in '{key}': its training diverged"),
    (lambda t: t.to(torch.complex64) + 1j, "model tensor '{key}' holds complex64 values, the encoder's are float32"),
    (lambda t: t.long(), "model tensor '{key}' holds int64 values, the encoder's are float32"),
])
def test_weights_that_are_not_finite_reals_are_refused_alike_by_generate_and_the_api(tiny_encoder, tmp_path, change,
                                                                                     message):
    folder, key = _forged(tiny_encoder, tmp_path, change)
    path = _write(tmp_path / "g.edgelist", "1 2\n2 3\n3 1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the forged run is "unfinished" by its step count, or not
        with pytest.raises(CheckpointError, match=message.format(key=key)):
            gcc_sgcl.load_encoder(folder)
        with pytest.raises(CheckpointError, match=message.format(key=key)):
            generate(folder, [str(path)], progress=False)
    assert not (folder / "g.npy").exists()


@pytest.mark.parametrize("value,shown", [("64", "str '64'"), (64.0, "float 64.0"), (True, "bool True")])
def test_a_config_value_of_another_type_is_refused_naming_its_setting(tiny_encoder, tmp_path, value, shown):
    state = torch.load(tiny_encoder / "checkpoint.pt", weights_only=True)
    state["config"]["model"]["hidden_size"] = value
    torch.save(state, tmp_path / "checkpoint.pt")
    with pytest.raises(CheckpointError, match=f"--hidden-size must be an integer, got {shown}"):
        gcc_sgcl.load_encoder(tmp_path)
