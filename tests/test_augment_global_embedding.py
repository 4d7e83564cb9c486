"""Properties of the global embedding E_t (gcc_sgcl.augment.global_embedding) and its cache."""
from __future__ import annotations

import dgl
import networkx as nx
import numpy as np
import pytest
import torch

from gcc_sgcl.augment import Align, cached_global_embedding, global_embedding, graph_fingerprint
from gcc_sgcl.augment.functional import procrustes
from gcc_sgcl.sampling.batch import NodeSets
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.induced import GraphIndex, build_views


def nx_to_dgl(graph: nx.Graph) -> dgl.DGLGraph:
    return dgl.from_networkx(nx.convert_node_labels_to_integers(graph, ordering="sorted"))


@pytest.fixture(scope="module")
def large() -> dgl.DGLGraph:
    """Big enough (> 1024 nodes) for the sparse ARPACK path."""
    return nx_to_dgl(nx.barabasi_albert_graph(1500, 3, seed=0))


def test_global_embedding_has_one_float32_row_per_node(large):
    small = nx_to_dgl(nx.karate_club_graph())
    for g, dim in [(small, 8), (small, 64), (large, 16)]:
        emb = global_embedding(g, dim, seed=0)
        assert emb.shape == (g.num_nodes(), dim) and emb.dtype == np.float32
        assert np.isfinite(emb).all() and np.abs(emb).sum() > 0
    assert (global_embedding(small, 64, seed=0)[:, 34:] == 0).all()  # rank <= n: extra columns are zero


def test_global_embedding_is_deterministic_under_a_seed(large):
    for g in (large, nx_to_dgl(nx.karate_club_graph())):
        np.testing.assert_array_equal(global_embedding(g, 16, seed=3), global_embedding(g, 16, seed=3))
    np.testing.assert_allclose(  # a different start vector reaches the same (sign-fixed) subspace basis
        global_embedding(large, 8, seed=0), global_embedding(large, 8, seed=1), atol=1e-4
    )


def test_global_embedding_handles_isolated_nodes_and_disconnected_graphs(large):
    graph = nx.disjoint_union_all([nx.cycle_graph(6), nx.complete_graph(5), nx.empty_graph(3)])
    emb = global_embedding(nx_to_dgl(graph), 4, seed=0)
    assert np.isfinite(emb).all() and (emb[11:] == 0).all() and np.abs(emb[:11]).sum() > 0
    edgeless = dgl.graph(([], []), num_nodes=5)
    assert (global_embedding(edgeless, 4, seed=0) == 0).all()
    isolated = dgl.add_nodes(large, 20)  # sparse path with isolated nodes
    emb = global_embedding(isolated, 8, seed=0)
    assert np.isfinite(emb).all() and (emb[-20:] == 0).all()


def test_global_embedding_with_window_2_differs_from_window_1():
    g = nx_to_dgl(nx.karate_club_graph())
    assert not np.allclose(global_embedding(g, 8, seed=0), global_embedding(g, 8, seed=0, window=2))
    with pytest.raises(ValueError, match="window"):
        global_embedding(g, 8, seed=0, window=0)
    with pytest.raises(ValueError, match="global embedding method"):
        global_embedding(g, 8, seed=0, method="deepwalk")


def test_cache_reuses_the_stored_file(tmp_path):
    g = nx_to_dgl(nx.karate_club_graph())
    first = cached_global_embedding(g, 8, 0, tmp_path)
    files = sorted(tmp_path.iterdir())
    assert len(files) == 1 and files[0].suffix == ".npy"
    np.testing.assert_array_equal(first, global_embedding(g, 8, seed=0))
    np.save(files[0], np.full_like(first, 7.0))  # a reused file is read back, not recomputed
    assert (cached_global_embedding(g, 8, 0, tmp_path) == 7.0).all()
    assert sorted(tmp_path.iterdir()) == files  # no temporary files left behind


def test_cache_misses_when_graph_or_parameters_change(tmp_path):
    g = nx_to_dgl(nx.karate_club_graph())
    base = cached_global_embedding(g, 8, 0, tmp_path)
    changed = dgl.add_edges(g, torch.tensor([0, 9]), torch.tensor([9, 0]))
    assert graph_fingerprint(changed) != graph_fingerprint(g)
    assert not np.allclose(cached_global_embedding(changed, 8, 0, tmp_path), base)
    cached_global_embedding(g, 4, 0, tmp_path)
    cached_global_embedding(g, 8, 1, tmp_path)
    cached_global_embedding(g, 8, 0, tmp_path, window=2)
    assert len(list(tmp_path.iterdir())) == 5
    np.testing.assert_array_equal(cached_global_embedding(g, 8, 0, tmp_path), base)
    assert len(list(tmp_path.iterdir())) == 5


def test_align_rotates_a_view_onto_a_global_embedding_of_matching_dims():
    parent = nx_to_dgl(nx.connected_watts_strogatz_graph(200, 6, 0.1, seed=0))
    k = 16
    emb = global_embedding(parent, k, seed=0)
    nodes = np.array([0, *parent.successors(0).tolist(), *range(100, 120)])
    view = build_views(GraphIndex.of(parent), NodeSets(np.array([len(nodes)]), nodes), k)
    view = view.replace(global_rows=emb[view.nid])
    out, _ = Align(p=1.0)(view, view, KeyedRandom.for_items(0, np.arange(1)))
    x, n = view.pe.astype(np.float64), view.global_rows.astype(np.float64)
    q = procrustes(x, n)
    np.testing.assert_allclose(q @ q.T, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(out.pe, x @ q, atol=1e-5)
    assert np.linalg.norm(out.pe - n) < np.linalg.norm(x - n)
