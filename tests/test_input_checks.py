"""Inputs are what they say, and errors are seen: a list of bools is a mask only at the node count, a seed is an
integer in range, sizes implied by ids or declared by a header are refused before anything is allocated, a dataset
or run name cannot write outside its folder, the format guess of a ``.txt`` file explains itself, and an error
raised under a progress bar is the last line printed."""
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import gcc_sgcl
from gcc_sgcl.data.files import read_dataset_file
from gcc_sgcl.data.text import DataFormatError
from gcc_sgcl.engine import generate as generate_module
from gcc_sgcl.presets import make_config

ROOT = Path(__file__).resolve().parents[1]
MM_HEADER = "%%MatrixMarket matrix coordinate pattern general\n"


@pytest.fixture(scope="module")
def encoder(tiny_encoder):
    return gcc_sgcl.load_encoder(tiny_encoder)


# ---------------------------------------------------------------------------------------------------------
# nodes and seed of embed_nodes


def test_a_list_of_bools_shorter_than_the_node_count_is_refused_not_read_as_ids(encoder):
    for graph in (nx.path_graph(3), ([0, 1], [1, 2])):
        with pytest.raises(ValueError, match=r"nodes: a list of 2 booleans is a mask only with one entry per node"):
            encoder.embed_nodes(graph, nodes=[True, False])


@pytest.mark.parametrize("nodes", [[True, 2], [1, np.True_], [0, False, 2]])
def test_a_list_mixing_bools_and_ids_is_refused(encoder, nodes):
    for graph in (nx.path_graph(3), ([0, 1], [1, 2])):
        with pytest.raises(TypeError, match="nodes: mixes booleans and node ids"):
            encoder.embed_nodes(graph, nodes=nodes)


def test_a_list_of_bools_at_the_node_count_is_still_a_mask(encoder):
    graph = nx.path_graph(3)
    masked = encoder.embed_nodes(graph, nodes=[True, False, True], copies=1)
    np.testing.assert_array_equal(masked, encoder.embed_nodes(graph, nodes=[0, 2], copies=1))


@pytest.mark.parametrize("seed", [1.5, 1.0, "abc", None, True, 2**64, -1, [0]])
def test_every_bad_seed_is_one_error_naming_seed(encoder, seed):
    for call in (lambda: encoder.embed_nodes(nx.path_graph(3), seed=seed),
                 lambda: encoder.embed_graphs([nx.path_graph(3)], seed=seed)):
        with pytest.raises((TypeError, ValueError), match=r"^seed must be an integer in 0\.\.18446744073709551615"):
            call()


def test_a_numpy_integer_seed_gives_the_rows_of_the_same_int(encoder):
    graph = nx.path_graph(4)
    np.testing.assert_array_equal(encoder.embed_nodes(graph, seed=np.int64(3), copies=1),
                                  encoder.embed_nodes(graph, seed=3, copies=1))


@pytest.mark.parametrize("graph, value", [
    ((np.array([0, 2**40]), np.array([1, 2])), "node id 1099511627776"),
    ((np.array([0], dtype=np.uint64), np.array([2**64 - 1], dtype=np.uint64)), "node id 18446744073709551615"),
    (sp.coo_array((np.ones(1), ([0], [1])), shape=(10**12, 10**12)), "the matrix shape"),
], ids=["id 2**40", "uint64 id 2**64-1", "sparse 10**12 x 10**12"])
def test_node_ids_far_beyond_the_edges_are_refused_before_allocation_naming_the_value(encoder, graph, value):
    with pytest.raises(ValueError, match=f"{value}.* makes a graph of"):
        encoder.embed_nodes(graph)
    with pytest.raises(ValueError, match=value):
        gcc_sgcl.as_dgl_graph(graph)


def test_isolated_nodes_within_the_spare_count_still_make_a_graph():
    assert gcc_sgcl.as_dgl_graph(([0], [1000])).num_nodes() == 1001


# ---------------------------------------------------------------------------------------------------------
# files: declared sizes, the .txt format guess, dataset and run names


@pytest.mark.parametrize("header, match", [
    ("1000000000000 1000000000000 3", "line 2: header '1000000000000 1000000000000 3' declares 1000000000000 nodes"),
    ("1000000000000 1000000000000 100000000000", "line 2: header .* declares 1000000000000 nodes"),
    ("3 3 100000000000", "line 6: expected 100000000000 entries 'row col \\[value\\]' \\(as header '3 3 100000000000' "
                         "declares\\), got end of file"),
], ids=["10**12 nodes", "10**12 nodes, 10**11 entries", "10**11 entries"])
def test_a_matrix_market_header_beyond_memory_is_one_line_naming_it(tmp_path, header, match):
    path = tmp_path / "g.mtx"
    path.write_text(f"{MM_HEADER}{header}\n1 2\n2 3\n3 1\n")
    with pytest.raises(DataFormatError, match=f"^{path} {match}") as info:
        read_dataset_file(path)
    assert "\n" not in str(info.value)


def test_a_gin_header_of_a_huge_count_fails_at_the_end_of_the_file_not_in_allocation(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("1\n1000000000000 0\n")
    with pytest.raises(DataFormatError, match="expected node line 0 of 1000000000000 of graph 0"):
        read_dataset_file(path)


def test_a_txt_read_as_gin_says_why_and_how_to_have_it_read_as_an_edge_list(tmp_path):
    path = tmp_path / "edges.txt"
    path.write_text("3\n0 1\n1 2\n2 0\n")  # an edge list whose first line is the node count
    with pytest.raises(DataFormatError, match="read as GIN/DGCNN text because its first line is a single field.*"
                                              "delete that line or make it a comment"):
        read_dataset_file(path)
    path.write_text("# 3\n0 1\n1 2\n2 0\n")  # as the message advises
    assert read_dataset_file(path).graph.num_nodes() == 3


def test_a_txt_read_as_an_edge_list_says_why(tmp_path):
    path = tmp_path / "edges.txt"
    path.write_text("0 1\n1\n")
    with pytest.raises(DataFormatError, match="read as an edge list because its first line is not a single field"):
        read_dataset_file(path)


@pytest.mark.parametrize("dataset", [".", ".."])
def test_a_dataset_without_a_name_is_refused_and_nothing_is_written(tiny_encoder, tmp_path, monkeypatch, dataset):
    (tmp_path / "inner").mkdir()
    monkeypatch.chdir(tmp_path / "inner")
    before = sorted(p.name for p in tiny_encoder.iterdir())
    with pytest.raises(SystemExit) as info:
        generate_module.main(["--load-path", str(tiny_encoder), "--dataset", dataset])
    assert str(info.value.code).startswith(f"error: {dataset}: gives no dataset name to write its files under")
    assert sorted(p.name for p in tiny_encoder.iterdir()) == before


@pytest.mark.parametrize("name", ["../x", "/abs/path", "a/b", ".", ".."])
def test_a_run_name_that_would_leave_the_output_dir_is_refused(tmp_path, name):
    with pytest.raises(ValueError, match="--run-name must be one folder name inside --output-dir"):
        make_config("gcc", {"train": {"output_dir": str(tmp_path / "out"), "run_name": name}})
    assert not (tmp_path / "x").exists() and not (tmp_path / "out").exists()


def test_the_pretrain_command_refuses_a_run_name_with_a_separator_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "gcc_sgcl.engine.pretrain", "--corpus", "synthetic", "--steps", "1",
                           "--output-dir", str(tmp_path / "out"), "--run-name", "../x"],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode != 0 and done.stderr.strip().splitlines()[-1].endswith("got '../x'")
    assert not (tmp_path / "x").exists()


# ---------------------------------------------------------------------------------------------------------
# an error under a progress bar


def test_an_error_under_a_progress_bar_is_the_last_line(tmp_path):
    script = ("from tqdm import tqdm\nfrom gcc_sgcl.cli import user_errors\nwith user_errors():\n"
              "    bar = tqdm(total=3, desc='run', unit='step')\n    bar.update(1)\n"
              "    raise OSError('checkpoint.pt: No space left on device')\n")
    env = {k: v for k, v in os.environ.items() if k != "GCC_SGCL_DEBUG"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1
    assert done.stderr.endswith("\nerror: checkpoint.pt: No space left on device\n")  # on a line of its own, last
