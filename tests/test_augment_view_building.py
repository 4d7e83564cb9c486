"""Views built from numpy edge arrays equal the DGL-built ones they replace (sampler views and crops)."""
from __future__ import annotations

import dgl
import networkx as nx
import numpy as np
import torch

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.align import Align
from gcc_sgcl.augment.base import RandomChoice
from gcc_sgcl.augment.filter import ViewFilter
from gcc_sgcl.augment.pipeline import SGCLPipeline
from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.sampling.dataset import PretrainPairDataset, make_view
from gcc_sgcl.sampling.spectral import attach_eigen_features
from gcc_sgcl.sampling.view import NID, SEED

K = 8


def assert_identical(view: dgl.DGLGraph, reference: dgl.DGLGraph) -> None:
    """Same edges in the same edge-id order and bit-identical node features."""
    assert view.num_nodes() == reference.num_nodes()
    for ours, theirs in zip(view.edges(order="eid"), reference.edges(order="eid")):
        assert torch.equal(ours, theirs)
    assert list(view.ndata) == list(reference.ndata)
    for name in view.ndata:
        torch.testing.assert_close(view.ndata[name], reference.ndata[name], rtol=0, atol=0, equal_nan=True)


def reference_view(g: dgl.DGLGraph, nodes: np.ndarray) -> dgl.DGLGraph:
    """The sampler's view as ``dgl.node_subgraph`` + :func:`attach_eigen_features` build it."""
    view = dgl.node_subgraph(g, torch.as_tensor(nodes), store_ids=True)
    view.edata.clear()
    attach_eigen_features(view, K)
    view.ndata[SEED] = (torch.arange(len(nodes)) == 0).long()
    return view


def messy_graph(seed: int) -> dgl.DGLGraph:
    """Directed multigraph with self-loops and edges in random order."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, 60, 400), rng.integers(0, 60, 400)
    return dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=60)


def node_sets(n: int, seed: int) -> list[np.ndarray]:
    """Centre first, then distinct other nodes in increasing order (as the RWR sampler returns them)."""
    rng = np.random.default_rng(seed)
    sets = []
    for size in (1, 2, 5, 17, 40):
        nodes = rng.choice(n, size=min(size, n), replace=False)
        sets.append(np.concatenate([nodes[:1], np.sort(nodes[1:])]))
    return sets


def test_make_view_equals_node_subgraph_with_eigen_features():
    graphs = [messy_graph(s) for s in range(3)] + [dgl.to_bidirected(dgl.from_networkx(nx.karate_club_graph()))]
    for i, g in enumerate(graphs):
        for nodes in node_sets(g.num_nodes(), i):
            assert_identical(make_view(g, nodes, K), reference_view(g, nodes))


def test_crop_subgraph_equals_node_subgraph_with_or_without_new_eigen_features():
    g = messy_graph(0)
    rng = np.random.default_rng(1)
    for nodes in node_sets(g.num_nodes(), 0)[2:]:
        view = make_view(g, nodes, K)
        keep = np.flatnonzero(np.concatenate([[True], rng.random(len(nodes) - 1) < 0.6]))
        sub = dgl.node_subgraph(view, torch.from_numpy(keep), store_ids=False)
        assert_identical(F.induced_view(view, keep, recompute_pe=False, k=K), sub)
        assert_identical(F.induced_view(view, keep, recompute_pe=True, k=K), attach_eigen_features(sub, K))


def test_box_nodes_uses_each_coordinates_own_quantiles():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(3, 40))
        x, y = np.round(rng.normal(size=n), 1), rng.normal(size=n)
        box = (*np.sort(rng.random(2)), *np.sort(rng.random(2)))
        expected = np.ones(n, dtype=bool)
        for v, (lo, hi) in ((x, box[:2]), (y, box[2:])):
            q_lo, q_hi = np.quantile(v, [lo, hi])
            tol = 1e-5 * np.abs(v).max()
            expected &= (v >= q_lo - tol) & (v <= q_hi + tol)
        expected[0] = True
        np.testing.assert_array_equal(F.box_nodes(x, y, box), np.flatnonzero(expected))


class _Index:
    """A transform returning its own index, so a pick can be read off."""

    def __init__(self, i: int):
        self.i = i

    def __call__(self, view: object, rng: np.random.Generator) -> int:
        return self.i


def test_random_choice_takes_the_same_draw_as_generator_choice():
    for weights in ([0.1, 0.1, 0.05, 0.05, 0.7], [0.25, 0.25, 0.5], [0.0, 1.0, 0.0, 2.0], [1.0]):
        choice = RandomChoice([_Index(i) for i in range(len(weights))], weights)
        ours, theirs = np.random.default_rng(5), np.random.default_rng(5)
        for _ in range(2000):
            assert choice(None, ours) == theirs.choice(len(weights), p=choice.probs)
        assert ours.random() == theirs.random()  # both generators consumed the same stream


def test_global_rows_are_attached_only_when_the_pipeline_aligns():
    g = dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(200, 3, seed=0)))
    emb = np.random.default_rng(0).normal(size=(g.num_nodes(), 32)).astype(np.float32)

    # both pipelines need E_t and leave the PE as it is (p = 0); only the aligning one needs its rows on views
    aligning, filtering = SGCLPipeline(align=Align(0.0)), SGCLPipeline(filter=ViewFilter(p=0.0))
    for pipeline, rows in ((aligning, True), (filtering, False)):
        assert pipeline.needs_global
        q, k = PretrainPairDataset([g], SamplingConfig(), 0, 4, pipeline, [emb])[2]
        for view in (q, k):
            assert ("global_emb" in view.ndata) == rows
            if rows:
                assert torch.equal(view.ndata["global_emb"], torch.from_numpy(emb[view.ndata[NID].numpy()]))
