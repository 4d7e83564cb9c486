"""Views built from numpy edge arrays equal the DGL-built ones they replace (sampler views and crops); the
crop box and the per-view choice of a transform are the documented functions of their inputs."""
from __future__ import annotations

import dgl
import networkx as nx
import numpy as np
import pytest
import torch

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.align import Align
from gcc_sgcl.augment.base import RandomChoice, Transform
from gcc_sgcl.augment.filter import ViewFilter
from gcc_sgcl.augment.pipeline import PairPipeline
from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.sampling.batch import NodeSets, ViewBatch
from gcc_sgcl.sampling.dataset import PretrainPairDataset
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.spectral import eigen_arrays
from gcc_sgcl.sampling.induced import GraphIndex, build_views

K = 8


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


def batch_of(sets: list[np.ndarray]) -> NodeSets:
    return NodeSets(np.array([len(s) for s in sets]), np.concatenate(sets))


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def edge_pairs(src, dst) -> list[tuple[int, int]]:
    return sorted(zip(np.asarray(src).tolist(), np.asarray(dst).tolist()))


def test_built_views_equal_node_subgraphs_with_their_eigen_features():
    graphs = [messy_graph(s) for s in range(3)] + [dgl.to_bidirected(dgl.from_networkx(nx.karate_club_graph()))]
    for i, g in enumerate(graphs):
        sets = node_sets(g.num_nodes(), i)
        views = build_views(GraphIndex.of(g), batch_of(sets), K)
        for b, nodes in enumerate(sets):
            view = views.select([b])
            reference = dgl.node_subgraph(g, torch.from_numpy(nodes))
            src, dst = (t.numpy() for t in reference.edges(order="eid"))
            assert edge_pairs(*views.edges_of(b)) == edge_pairs(src, dst)  # multi-edges and self-loops kept
            assert (np.diff(view.src) >= 0).all()  # edges come by source
            np.testing.assert_array_equal(view.nid, nodes)
            assert view.seed_pos[0] == 0
            pe, eigvec, eigval = eigen_arrays(np.array([len(nodes)]), np.array([len(src)]), src, dst, K)
            assert same_bits(view.pe, pe) and same_bits(view.eigvec, eigvec) and same_bits(view.eigval, eigval)


def test_induced_crop_equals_node_subgraph_with_or_without_new_eigen_features():
    g = messy_graph(0)
    index = GraphIndex.of(g)
    sets = node_sets(g.num_nodes(), 0)[2:]
    views = build_views(index, batch_of(sets), K)
    keep = np.random.default_rng(1).random(int(views.num_nodes.sum())) < 0.6
    keep[views.node_ptr[:-1]] = True  # the centres
    kept_rows = np.flatnonzero(keep)
    old = F.crop_views(views, keep, recompute_pe=False, sign_rng=None)
    new = F.crop_views(views, keep, recompute_pe=True, sign_rng=None)
    graph = views.to_dgl(())
    sub = dgl.node_subgraph(graph, torch.from_numpy(kept_rows))
    base = np.repeat(old.node_ptr[:-1], old.num_edges)
    src, dst = (t.numpy() for t in sub.edges(order="eid"))
    np.testing.assert_array_equal(old.src + base, src)  # same edges in the same order
    np.testing.assert_array_equal(old.dst + base, dst)
    assert same_bits(old.pe, views.pe[kept_rows]) and same_bits(old.eigvec, views.eigvec[kept_rows])
    fresh = build_views(index, NodeSets(old.num_nodes, old.nid), K)
    for name in ("num_nodes", "num_edges", "src", "dst", "nid", "seed_pos", "pe", "eigvec", "eigval"):
        assert same_bits(getattr(new, name), getattr(fresh, name)), name


def segments(counts: np.ndarray, seed_pos: np.ndarray) -> ViewBatch:
    """A batch of edgeless views with the given sizes and centres (enough for node-level operations)."""
    n = int(counts.sum())
    return ViewBatch(
        num_nodes=counts, num_edges=np.zeros(len(counts), dtype=np.int64), src=np.zeros(0, dtype=np.int64),
        dst=np.zeros(0, dtype=np.int64), nid=np.arange(n), seed_pos=seed_pos,
        pe=np.zeros((n, 1), np.float32), eigvec=np.zeros((n, 1), np.float32),
        eigval=np.zeros((len(counts), 1), np.float32),
    )


def test_box_keep_uses_each_views_own_quantiles_of_each_coordinate():
    rng = np.random.default_rng(0)
    for _ in range(50):
        counts = rng.integers(3, 40, size=4)
        seed_pos = rng.integers(0, counts)
        views = segments(counts, seed_pos)
        x, y = np.round(rng.normal(size=counts.sum()), 1), rng.normal(size=counts.sum())
        box = (*np.sort(rng.random(2)), *np.sort(rng.random(2)))
        keep = F.box_keep(x, y, views, box)
        for b, (lo, hi) in enumerate(zip(views.node_ptr[:-1], views.node_ptr[1:])):
            expected = np.ones(hi - lo, dtype=bool)
            for v, (q_lo, q_hi) in ((x[lo:hi], box[:2]), (y[lo:hi], box[2:])):
                r_lo, r_hi = np.quantile(v, [q_lo, q_hi])
                np.testing.assert_allclose(F.segment_quantiles(v, np.array([hi - lo]), np.array([q_lo, q_hi]))[0],
                                           [r_lo, r_hi], rtol=1e-12, atol=1e-12)
                tol = 1e-5 * np.abs(v).max()
                expected &= (v >= r_lo - tol) & (v <= r_hi + tol)
            expected[seed_pos[b]] = True
            np.testing.assert_array_equal(keep[lo:hi], expected)


@pytest.mark.parametrize("transposed", [False, True])
def test_box_keep_tie_tolerance_is_relative_to_each_coordinates_own_scale(transposed):
    # the small coordinate spans [0, 1], the large one [-1000, 1000]: a small value 1e-3 above the box's upper
    # bound lies outside it (its own tolerance is 1e-5), though within the large coordinate's (1e-2)
    small = np.array([0.0, 0.1, 0.2, 0.3, 0.301, 1.0])  # its 0.6-quantile is 0.3
    large = np.array([0.0, -1000.0, -500.0, 250.0, 500.0, 1000.0])
    x, y, box = (small, large, (0.0, 0.6, 0.0, 1.0)) if transposed else (large, small, (0.0, 1.0, 0.0, 0.6))
    keep = F.box_keep(x, y, segments(np.array([6]), np.array([0])), box)
    np.testing.assert_array_equal(keep, [True, True, True, True, False, False])


def test_random_keep_keeps_the_centre_and_the_requested_count():
    rng = np.random.default_rng(1)
    counts = rng.integers(1, 30, size=50)
    views = segments(counts, rng.integers(0, counts))
    want = rng.integers(1, counts + 1)
    keep = F.random_keep(views, want, rng.random(int(counts.sum())))
    np.testing.assert_array_equal(np.bincount(views.node_view[keep], minlength=len(views)), want)
    assert keep[views.node_ptr[:-1] + views.seed_pos].all()


class Tag(Transform):
    """Writes its index into every PE entry, so the transform a view went through can be read off."""

    def __init__(self, index: int):
        self.index = index

    def transform(self, views: ViewBatch, params: object) -> ViewBatch:
        return views.replace(pe=np.full_like(views.pe, self.index))


def test_random_choice_picks_per_view_with_the_given_probabilities():
    weights = [0.1, 0.0, 0.3, 0.6]
    choice = RandomChoice([Tag(i) for i in range(len(weights))], weights)
    rows = 20_000
    views = segments(np.full(rows, 2), np.zeros(rows, dtype=np.int64))
    rng = KeyedRandom.for_items(5, np.arange(rows))
    picked = choice.choose(rng)
    np.testing.assert_allclose(np.bincount(picked, minlength=4) / rows, weights, atol=0.012)
    out = choice.forward(views, rng)
    np.testing.assert_array_equal(out.pe[views.node_ptr[:-1], 0], picked)  # each view went through its pick
    subset = np.arange(0, rows, 97)
    np.testing.assert_array_equal(choice.choose(rng.take(subset)), picked[subset])  # a function of the row's key


def test_global_rows_are_attached_only_when_the_pipeline_aligns():
    g = dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(200, 3, seed=0)))
    emb = np.random.default_rng(0).normal(size=(g.num_nodes(), 32)).astype(np.float32)
    sampling = SamplingConfig(rw_hops=64)

    # both pipelines need E_t and leave the PE as it is (p = 0); only the aligning one needs its rows on views
    aligning, filtering = PairPipeline(None, [Align(0.0)]), PairPipeline(ViewFilter(p=0.0), [])
    for pipeline, rows in ((aligning, True), (filtering, False)):
        assert pipeline.needs_global
        q, k = PretrainPairDataset([g], sampling, 0, 8, pipeline, [emb]).__getitems__([2, 5, 7])
        for views in (q, k):
            assert (views.global_rows is not None) == rows
            if rows:
                assert same_bits(views.global_rows, emb[views.nid])
                assert same_bits(views.to_dgl(("global_emb",)).ndata["global_emb"].numpy(), emb[views.nid])
    with pytest.raises(ValueError, match="global embeddings"):
        PretrainPairDataset([g], sampling, 0, 8, aligning)
    plain_q, _ = PretrainPairDataset([g], sampling, 0, 8, PairPipeline()).__getitems__([2, 5, 7])
    assert plain_q.global_rows is None
