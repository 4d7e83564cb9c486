"""The Python embedding API: the same rows as generate.sh, every graph input type, subsets, errors."""
import dgl
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import gcc_sgcl
from gcc_sgcl.data import load_graph_dataset, load_node_dataset
from gcc_sgcl.engine.generate import generate
from gcc_sgcl.engine.pretrain import pretrain
from gcc_sgcl.presets import make_config


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("api")
    cfg = make_config("gcc", {
        "sampling": {"rw_hops": 32, "positional_embedding_size": 8},
        "model": {"hidden_size": 16, "num_layers": 3, "degree_embedding_size": 4},
        "train": {"steps": 3, "batch_size": 8, "output_dir": str(out), "run_name": "tiny"},
    })
    return pretrain(cfg, progress=False, graphs=[gcc_sgcl.as_dgl_graph(nx.barabasi_albert_graph(300, 3, seed=0))])


def test_embed_nodes_and_graphs_equal_generate_rows(run):
    generate(run, ["synthetic-roles", "synthetic-graphs"], progress=False)
    enc = gcc_sgcl.load_encoder(run)
    nodes = enc.embed_nodes(load_node_dataset("synthetic-roles").graph)
    graphs = enc.embed_graphs(load_graph_dataset("synthetic-graphs").graphs)
    assert np.array_equal(nodes, np.load(run / "synthetic-roles.npy"))
    assert np.array_equal(graphs, np.load(run / "synthetic-graphs.npy"))


def test_every_graph_input_type_gives_the_same_rows(run):
    enc = gcc_sgcl.load_encoder(run)
    g = nx.karate_club_graph()
    src, dst = np.array(g.edges()).T
    inputs = [g, nx.to_scipy_sparse_array(g), (src, dst), dgl.graph((src, dst), num_nodes=34)]
    rows = [enc.embed_nodes(x) for x in inputs]
    assert rows[0].shape == (34, enc.hidden_size)
    assert all(np.array_equal(rows[0], r) for r in rows[1:])


def test_a_node_subset_gives_the_rows_of_the_whole_and_seeds_change_them(run):
    enc = gcc_sgcl.load_encoder(run)
    g = nx.karate_club_graph()
    whole = enc.embed_nodes(g, batch_size=7)
    # the same views; rows agree up to float rounding (GEMM sums in a batch-size-dependent order)
    np.testing.assert_allclose(enc.embed_nodes(g, nodes=[3, 30, 0]), whole[[3, 30, 0]], atol=1e-5)
    assert not np.allclose(enc.embed_nodes(g, seed=1), whole)


def test_bad_inputs_are_refused_with_a_clear_message(run):
    enc = gcc_sgcl.load_encoder(run)
    with pytest.raises(ValueError, match="nodes must be ids in 0..33"):
        enc.embed_nodes(nx.karate_club_graph(), nodes=[34])
    with pytest.raises(TypeError, match="networkx graph"):
        enc.embed_nodes("karate")
    assert isinstance(gcc_sgcl.as_dgl_graph(sp.eye(3, format="csr")), dgl.DGLGraph)
