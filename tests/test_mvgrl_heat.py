"""MVGRL's heat-diffusion view (the SGCL paper's "MVGRL heat" runtime column): the heat matrix, the view it gives,
and the checks of its settings."""
import dgl
import networkx as nx
import numpy as np
import pytest

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.mvgrl import Diffusion, TopK
from gcc_sgcl.sampling.batch import NodeSets
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.induced import GraphIndex, build_views


def _view(graph: nx.Graph, k: int = 8):
    g = dgl.from_networkx(nx.convert_node_labels_to_integers(graph, ordering="sorted"))
    n = g.num_nodes()
    return build_views(GraphIndex.of(g), NodeSets(np.array([n]), np.arange(n)), k, seed_pos=np.array([0]))


def test_heat_matrix_is_the_exponential_of_the_random_walk_generator():
    g = nx.connected_watts_strogatz_graph(12, 4, 0.3, seed=0)
    u, v = (np.array(x) for x in zip(*g.edges()))
    a = nx.to_numpy_array(g) + np.eye(12)
    generator = a / a.sum(axis=0) - np.eye(12)
    values, vectors = np.linalg.eig(generator)
    expected = (vectors @ np.diag(np.exp(5.0 * values)) @ np.linalg.inv(vectors)).real
    np.testing.assert_allclose(F.heat_matrix(u, v, 12, 5.0), expected, atol=1e-10)


def test_heat_diffusion_view_is_the_symmetrised_topk_heat_graph_and_leaves_the_input_alone():
    view = _view(nx.connected_watts_strogatz_graph(30, 4, 0.3, seed=1))
    before = (view.src.copy(), view.dst.copy())
    u, v = F.undirected_pairs(view.src, view.dst)
    out = Diffusion(kind="heat", sparsify=TopK(2)).forward(view, KeyedRandom.for_items(0, np.arange(1)))
    expected = F.undirected_pairs(*F.topk_targets(F.heat_matrix(u, v, 30, 5.0), 2))
    np.testing.assert_array_equal(np.stack(F.undirected_pairs(out.src, out.dst)), np.stack(expected))
    np.testing.assert_array_equal(view.src, before[0])
    np.testing.assert_array_equal(view.dst, before[1])
    ppr = Diffusion(kind="ppr", sparsify=TopK(2)).forward(view, KeyedRandom.for_items(0, np.arange(1)))
    assert set(zip(*F.undirected_pairs(out.src, out.dst))) != set(zip(*F.undirected_pairs(ppr.src, ppr.dst)))


@pytest.mark.parametrize("kwargs, word", [({"kind": "exp"}, "kind"), ({"kind": "heat", "t": 0.0}, "t must")])
def test_diffusion_refuses_an_unknown_kind_or_a_non_positive_time(kwargs, word):
    with pytest.raises(ValueError, match=word):
        Diffusion(**kwargs)
