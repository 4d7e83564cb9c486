"""The Python embedding API: the same rows as generate.sh, every graph input type, subsets, errors."""
import gc
import json
import shutil
import weakref

import dgl
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from threadpoolctl import threadpool_info

import gcc_sgcl
from gcc_sgcl.data import load_graph_dataset, load_node_dataset
from gcc_sgcl.engine.device import DeviceError
from gcc_sgcl.engine import generate as generate_module
from gcc_sgcl.engine import views as views_module
from gcc_sgcl.engine import stream as stream_module
from gcc_sgcl.engine.generate import GenerateConfig, generate
from gcc_sgcl.engine.views import GCC_COPIES, GRAPH_COPIES, INFERENCE_COPIES
from gcc_sgcl.sampling.dataset import GraphViewDataset, NodeViewDataset


@pytest.fixture(scope="module")
def run(tiny_encoder):
    return tiny_encoder


def test_embed_nodes_and_graphs_equal_generate_rows(run):
    """At the same views: generate gives a registered dataset GCC's 2 per node (the tables' protocol), the API a
    graph of its own 32 (the views study's count) unless told."""
    generate(run, ["synthetic-roles", "synthetic-graphs"], progress=False)
    enc = gcc_sgcl.load_encoder(run)
    assert json.loads((run / "synthetic-roles.provenance.json").read_text())["views"]["copies"] == GCC_COPIES
    nodes = enc.embed_nodes(load_node_dataset("synthetic-roles").graph, copies=GCC_COPIES)
    graphs = enc.embed_graphs(load_graph_dataset("synthetic-graphs").graphs)
    assert np.array_equal(nodes, np.load(run / "synthetic-roles.npy"))
    assert np.array_equal(graphs, np.load(run / "synthetic-graphs.npy"))


def test_gccs_visit_budget_changes_the_rows_of_the_nodes_whose_budget_grows_only(run, tmp_path):
    g = nx.star_graph(150)  # rw_hops 32: hub 0 gets 297 visits by GCC's generate rule, 85 by pre-training's
    g.add_edges_from((i, i + 1) for i in range(1, 150, 2))  # the leaves (degree 2): 32 by both
    encoder = tmp_path / "encoder"  # a copy: the .npy files stay out of the shared run folder
    shutil.copytree(run, encoder, ignore=shutil.ignore_patterns("*.npy", "*.txt"))
    path = tmp_path / "star.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in g.edges()))
    rows = {}
    for budget in ("pretrain", "gcc"):
        generate(encoder, [str(path)], GenerateConfig(visit_budget=budget), progress=False)
        ids = [int(i) for i in (encoder / "star.ids.txt").read_text().split()]
        rows[budget] = np.load(encoder / "star.npy")[np.argsort(ids)]
    grows = [n for n in g if int(g.degree[n] * np.e / (np.e - 1) / 0.8 + 0.5)
             > max(32, int(g.degree[n] ** 0.75 * np.e / (np.e - 1) / 0.8 + 0.5))]
    assert grows == [0]
    same = np.isclose(rows["pretrain"], rows["gcc"], atol=1e-5).all(axis=1)
    assert same.tolist() == [n not in grows for n in g]
    enc = gcc_sgcl.load_encoder(encoder)  # the API's rule: generate's rows for either budget
    for budget in ("pretrain", "gcc"):
        assert np.array_equal(enc.embed_nodes(g, visit_budget=budget), rows[budget])
    with pytest.raises(ValueError, match="visit_budget must be one of pretrain, gcc, got 'linear'"):
        enc.embed_nodes(g, nodes=[], visit_budget="linear")
    (encoder / "star.npy").unlink()
    with pytest.raises(ValueError, match="--visit-budget must be one of pretrain, gcc, got 'linear'"):
        generate(encoder, ["synthetic-graphs", str(path)], GenerateConfig(visit_budget="linear"), progress=False)
    assert not (encoder / "star.npy").exists() and not (encoder / "synthetic-graphs.npy").exists()  # checked up front


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


def test_a_progress_bar_over_the_views_leaves_the_rows_unchanged(run, capsys):
    enc = gcc_sgcl.load_encoder(run)
    g = nx.karate_club_graph()
    quiet = enc.embed_nodes(g, copies=3)
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(enc.embed_nodes(g, copies=3, progress=True), quiet)
    err = capsys.readouterr().err
    assert "views: 100%" in err and "102/102" in err, err  # 34 nodes x 3 copies
    graphs = [nx.cycle_graph(5), nx.path_graph(4)]
    np.testing.assert_array_equal(enc.embed_graphs(graphs, progress=True), enc.embed_graphs(graphs))
    assert "views: 100%" in capsys.readouterr().err


def test_bad_inputs_are_refused_with_a_clear_message(run):
    enc = gcc_sgcl.load_encoder(run)
    with pytest.raises(ValueError, match="nodes must be ids in 0..33"):
        enc.embed_nodes(nx.to_scipy_sparse_array(nx.karate_club_graph()), nodes=[34])
    with pytest.raises(ValueError, match="nodes: 34 is not a node of the networkx graph"):
        enc.embed_nodes(nx.karate_club_graph(), nodes=[34])
    with pytest.raises(TypeError, match="networkx graph"):
        enc.embed_nodes("karate")
    assert isinstance(gcc_sgcl.as_dgl_graph(sp.eye(3, format="csr")), dgl.DGLGraph)


def test_generate_builds_one_units_views_at_a_time_and_drops_them_before_building_the_next(run, tmp_path,
                                                                                              monkeypatch):
    events, built = [], []
    def building(self, i, build=stream_module.UnitViews.__getitem__):
        gc.collect()
        events.append(("build", sum(ref() is not None for ref in built)))  # earlier units' views still alive
        views = build(self, i)
        built.append(weakref.ref(views))
        return views
    def embedding(model, views, *args, encode=stream_module.encode, **kwargs):
        events.append(("embed",))
        return encode(model, views, *args, **kwargs)
    monkeypatch.setattr(stream_module.UnitViews, "__getitem__", building)
    monkeypatch.setattr(stream_module, "encode", embedding)
    folder = tmp_path / "encoder"
    shutil.copytree(run, folder)
    generate(folder, ["synthetic-roles"], GenerateConfig(copies=3, num_workers=0), progress=False)
    assert events == [("build", 0), ("embed",)] * 7 * 3  # 1620 nodes: seven chunks of 256 (an eighth at most), 3 copies
    with pytest.raises(ValueError, match="a part with no copies"):  # an iterator read twice
        options = views_module.ViewOptions(gcc_sgcl.load_encoder(run).cfg.sampling, copies=1)
        parts = views_module.dataset_views("synthetic-roles", options, progress=False)
        model = gcc_sgcl.load_encoder(run).model
        generate_module.embed_parts(model, parts, progress=False)
        generate_module.embed_parts(model, parts, progress=False)


def test_views_are_built_single_threaded_as_generate_builds_them(run, monkeypatch):
    """Eigenvectors of a view depend on the BLAS thread count; generate builds views with one thread."""
    seen = []
    for cls in (NodeViewDataset, GraphViewDataset):
        def recording(self, items, build=cls.__getitems__):
            seen.append((torch.get_num_threads(), max(p["num_threads"] for p in threadpool_info())))
            return build(self, items)
        monkeypatch.setattr(cls, "__getitems__", recording)
    enc = gcc_sgcl.load_encoder(run)
    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        enc.embed_nodes(nx.karate_club_graph())
        enc.embed_graphs([nx.cycle_graph(5)])
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(previous)
    assert seen == [(1, 1)] * (INFERENCE_COPIES + GRAPH_COPIES)  # one per view set


def test_nodes_are_networkx_nodes_a_mask_or_ids_and_empty_inputs_give_no_rows(run):
    enc = gcc_sgcl.load_encoder(run)
    g = nx.karate_club_graph()
    whole = enc.embed_nodes(g)
    tens = nx.relabel_nodes(g, {v: 10 * v for v in g})
    np.testing.assert_allclose(enc.embed_nodes(tens, nodes=[10, 300]), whole[[1, 30]], atol=1e-5)
    mask = np.zeros(34, dtype=bool)
    mask[[5, 7, 9]] = True
    np.testing.assert_allclose(enc.embed_nodes(g, nodes=mask), whole[[5, 7, 9]], atol=1e-5)
    src, dst = np.array(g.edges()).T
    np.testing.assert_allclose(enc.embed_nodes((src, dst), nodes=np.array([9, 2])), whole[[9, 2]], atol=1e-5)
    np.testing.assert_allclose(enc.embed_nodes(g, nodes=torch.tensor(mask)), whole[[5, 7, 9]], atol=1e-5)
    np.testing.assert_allclose(enc.embed_nodes(tens, nodes=torch.tensor([10, 300])), whole[[1, 30]], atol=1e-5)
    flags = nx.Graph([(True, False)])  # nodes that are booleans: a list names them, only an array is a mask
    np.testing.assert_allclose(enc.embed_nodes(flags, nodes=[True]), enc.embed_nodes(flags)[[0]], atol=1e-5)
    assert enc.embed_nodes(g, nodes=[]).shape == (0, enc.hidden_size)
    assert enc.embed_nodes(nx.Graph()).shape == (0, enc.hidden_size)
    assert enc.embed_graphs([]).shape == (0, enc.hidden_size)


@pytest.mark.parametrize("call, error, message", [
    (lambda enc, g: enc.embed_nodes(g, nodes=["n3"]), ValueError, r"nodes: 'n3' is not a node of the networkx graph"),
    (lambda enc, g: enc.embed_nodes(g, nodes=np.ones(5, dtype=bool)), ValueError,
     r"one entry per node \(34\), got shape \(5,\)"),
    (lambda enc, g: enc.embed_nodes(g, nodes=3), TypeError, r"nodes must be a sequence"),
    (lambda enc, g: enc.embed_nodes(sp.eye(4, format="csr"), nodes=[1.5]), TypeError, r"integer node ids in 0..3"),
    (lambda enc, g: enc.embed_nodes(sp.eye(4, format="csr"), nodes=[[1, 2]]), TypeError, r"of shape \(1, 2\)"),
    (lambda enc, g: enc.embed_nodes(g, nodes=[[1, 2]]), TypeError, r"nodes must hold networkx nodes"),
    (lambda enc, g: enc.embed_nodes(g, copies=1.5), ValueError, r"copies must be an integer >= 1, got 1.5"),
    (lambda enc, g: enc.embed_graphs([g, nx.Graph()]), ValueError, r"graphs\[1\] has no nodes"),
    (lambda enc, g: enc.embed_nodes(([0, 1.5], [1, 2])), TypeError, r"src must hold integer node ids"),
    (lambda enc, g: enc.embed_nodes(g, copies=0), ValueError, r"copies must be an integer >= 1, got 0"),
    (lambda enc, g: enc.embed_graphs([g], batch_size=0), ValueError, r"batch_size must be an integer >= 1, got 0"),
])
def test_bad_arguments_name_the_parameter(run, call, error, message):
    with pytest.raises(error, match=message):
        call(gcc_sgcl.load_encoder(run), nx.karate_club_graph())


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine where torch sees no CUDA device")
def test_loading_on_an_absent_gpu_says_so_rather_than_calling_the_checkpoint_damaged(run):
    with pytest.raises(DeviceError, match="torch sees no CUDA device on this machine; use 'cpu'"):
        gcc_sgcl.load_encoder(run, device="cuda")


def test_with_structural_rows_equal_the_runners_joined_rows(run):
    from gcc_sgcl.classical import embed_dataset, joined
    from gcc_sgcl.data import load_any
    from gcc_sgcl.engine.inference import embed_parts
    from gcc_sgcl.engine.views import ViewOptions, dataset_views
    from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint

    model, cfg, _ = load_encoder_checkpoint(run)
    runner = joined(embed_parts(model, dataset_views("synthetic-roles", ViewOptions(cfg.sampling), progress=False), 256),
                    embed_dataset("structural", "synthetic-roles"))
    enc = gcc_sgcl.load_encoder(run)
    rows = enc.embed_nodes(load_any("synthetic-roles").graph, with_structural=True)
    np.testing.assert_allclose(rows, runner, atol=1e-6)
    assert rows.shape[1] == enc.hidden_size + 8
