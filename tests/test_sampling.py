"""The batched sampler: counter-based keys, RWR walks, view node sets, induced edges, eigen-features, datasets.

Equivalence with GCC's per-item path (``gcc_sgcl.bench.reference``) is checked exactly where the computation is
deterministic (induced edges, eigen-features up to sign and rotation) and statistically where randomness differs
(walks: two-sample tests at a stated level on thousands of draws).
"""
import dataclasses
import math

import dgl
import networkx as nx
import numpy as np
import pytest
import torch
from scipy import stats

from gcc_sgcl.augment.pipeline import PairPipeline
from gcc_sgcl.bench.reference import arpack_eigen, reference_eigen, reference_rwr_nodes, reference_view
from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.data.powerlaw import powerlaw_graph
from gcc_sgcl.sampling import spectral
from gcc_sgcl.sampling.batch import NodeSets, ViewBatch, concat, runs
from gcc_sgcl.sampling.dataset import (
    GraphViewDataset,
    NodeViewDataset,
    PretrainPairDataset,
    collate_pairs,
    worker_init,
)
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.rwr import max_nodes_per_seed, rwr_visits, view_node_sets
from gcc_sgcl.sampling.spectral import eigen_arrays
from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, NID, PE, SEED
from gcc_sgcl.sampling.induced import (
    GraphIndex, build_views, flip_signs, induced_edges, rwr_node_sets, sign_draws, whole_graph_views,
)

SMALL = SamplingConfig(rw_hops=64, positional_embedding_size=16, pe_sign="canonical")


def dgl_of(nxg: nx.Graph) -> dgl.DGLGraph:
    return dgl.to_bidirected(dgl.from_networkx(nx.convert_node_labels_to_integers(nxg)))


def edges(g: dgl.DGLGraph) -> tuple[np.ndarray, np.ndarray]:
    s, d = g.edges(order="eid")
    return s.numpy(), d.numpy()


def projector_gap(u: np.ndarray, ref_u: np.ndarray, ref_lam: np.ndarray, tol: float = 1e-4) -> float:
    """Largest |P - P_ref| over ``ref``'s complete eigenvalue clusters (sign and rotation invariant)."""
    valid = int((~np.isnan(ref_lam)).sum())
    lam = ref_lam[:valid]
    clusters = np.split(np.arange(valid), np.flatnonzero(np.diff(lam) > tol) + 1)[:-1]
    gaps = [np.abs(u[:, c] @ u[:, c].T - ref_u[:, c] @ ref_u[:, c].T).max() for c in clusters]
    return float(max(gaps, default=0.0))


@pytest.fixture(scope="module")
def ba() -> dgl.DGLGraph:
    return dgl_of(nx.barabasi_albert_graph(300, 3, seed=1))


# ---------------------------------------------------------------------------------------------------------- keys


def test_keyed_uniforms_are_uniform_and_streams_independent():
    rng = KeyedRandom.for_items(7, np.arange(4000))
    a, b = rng.child("a").uniform(), rng.child("b").uniform()
    assert stats.kstest(a, "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.06
    assert stats.kstest(rng.child("a").uniform(8)[:, 5], "uniform").pvalue > 1e-3


def test_a_row_depends_only_on_its_seed_and_index():
    whole = KeyedRandom.for_items(3, np.arange(10)).child("walk").uniform(5)
    alone = KeyedRandom.for_items(3, np.array([6])).child("walk").uniform(5)
    other_seed = KeyedRandom.for_items(4, np.array([6])).child("walk").uniform(5)
    assert np.array_equal(whole[6], alone[0]) and not np.array_equal(alone, other_seed)


# -------------------------------------------------------------------------------------------------- eigen-features


@pytest.mark.parametrize(
    "nxg",
    [nx.path_graph(7), nx.cycle_graph(9), nx.grid_2d_graph(4, 5), nx.barabasi_albert_graph(40, 2, seed=0),
     nx.complete_graph(5), nx.disjoint_union(nx.path_graph(4), nx.cycle_graph(6)), nx.star_graph(6)],
)
def test_eigen_features_match_a_dense_reference_up_to_sign_and_rotation(nxg):
    g = dgl_of(nxg)
    n, k = g.num_nodes(), 16
    pe, vec, lam = eigen_arrays(np.array([n]), np.array([g.num_edges()]), *edges(g), k)
    ref_pe, ref_vec, ref_lam = reference_eigen(*edges(g), n, k)
    assert np.allclose(lam[0], ref_lam, atol=1e-5, equal_nan=True)
    assert projector_gap(vec.astype(np.float64), ref_vec, ref_lam) < 1e-4
    assert np.allclose(np.linalg.norm(pe[:, : min(n - 2, k)], axis=1)[np.linalg.norm(ref_pe, axis=1) > 0], 1, atol=1e-5)


def test_eigen_features_match_gcc_arpack_eigenvalues_on_simple_spectra():
    g = dgl_of(nx.path_graph(30))
    lam_ref, _ = arpack_eigen(*edges(g), 30, 8, np.random.default_rng(0))
    _, _, lam = eigen_arrays(np.array([30]), np.array([g.num_edges()]), *edges(g), 8)
    assert np.allclose(lam[0], lam_ref, atol=1e-5)


def test_small_graphs_get_n_minus_2_columns_and_zero_padding():
    g = dgl_of(nx.path_graph(5))
    pe, vec, lam = eigen_arrays(np.array([5]), np.array([g.num_edges()]), *edges(g), 8)
    assert (~np.isnan(lam[0])).sum() == 3 and np.all(pe[:, 3:] == 0) and np.all(np.isnan(lam[0, 3:]))
    pe2, _, lam2 = eigen_arrays(np.array([2]), np.array([2]), np.array([0, 1]), np.array([1, 0]), 8)
    assert np.all(pe2 == 0) and np.all(np.isnan(lam2))


def test_repeated_edges_count_in_adjacency_and_degree_alike():
    src, dst = np.array([0, 1, 0, 1, 1, 2, 2, 3]), np.array([1, 0, 1, 0, 2, 1, 3, 2])  # 0-1 doubled
    _, _, lam = eigen_arrays(np.array([4]), np.array([8]), src, dst, 2)
    a = np.zeros((4, 4))
    np.add.at(a, (src, dst), 1.0)
    d = a.sum(axis=0) ** -0.5
    expected = np.linalg.eigvalsh(np.eye(4) - a * d[:, None] * d[None, :])[:2]
    assert np.allclose(lam[0], expected, atol=1e-5)
    assert lam[0, 0] == pytest.approx(0.0, abs=1e-5)  # a consistent normalisation keeps 0 in the spectrum


def test_padding_decouples_and_buckets_do_not_change_the_result(ba):
    index = GraphIndex.of(ba)
    sets = rwr_node_sets(index, np.arange(40), 64, 0.8, 10, KeyedRandom.for_items(0, np.arange(40)))
    ne, s, d = induced_edges(index, sets)
    one = eigen_arrays(sets.num_nodes, ne, s, d, 16, bucket=1)
    wide = eigen_arrays(sets.num_nodes, ne, s, d, 16, bucket=64)
    assert np.allclose(one[2], wide[2], atol=1e-5, equal_nan=True)
    for b in range(5):
        lo, hi = sets.num_nodes[:b].sum(), sets.num_nodes[: b + 1].sum()
        assert projector_gap(wide[1][lo:hi].astype(float), one[1][lo:hi].astype(float), one[2][b]) < 1e-4


def test_random_signs_flip_whole_columns_and_follow_the_key():
    g = dgl_of(nx.barabasi_albert_graph(30, 2, seed=3))
    args = (np.array([30]), np.array([g.num_edges()]), *edges(g), 8)
    _, canonical, _ = eigen_arrays(*args)
    signs = np.array([[1, -1, 1, 1, -1, -1, 1, -1]], dtype=float)
    _, flipped, _ = eigen_arrays(*args, signs=signs)
    assert np.allclose(flipped, canonical * signs, atol=1e-6)
    index = GraphIndex.of(g)
    sets = NodeSets(np.array([30, 30]), np.concatenate([np.arange(30), np.arange(30)]))
    views = build_views(index, sets, 8, "random", KeyedRandom.for_items(0, np.array([0, 1])))
    first, second = views.eigvec[:30], views.eigvec[30:]
    assert np.allclose(np.abs(first), np.abs(second), atol=1e-6) and not np.allclose(first, second)


def test_large_graphs_use_lobpcg_with_the_same_subspaces(monkeypatch):
    g = dgl_of(nx.barabasi_albert_graph(120, 3, seed=2))
    args = (np.array([120]), np.array([g.num_edges()]), *edges(g), 8)
    dense = eigen_arrays(*args)
    monkeypatch.setattr(spectral, "DENSE_MAX_NODES", 50)
    sparse = eigen_arrays(*args)
    assert np.allclose(dense[2], sparse[2], atol=1e-5)
    assert projector_gap(sparse[1].astype(float), dense[1].astype(float), dense[2][0]) < 1e-4


# ---------------------------------------------------------------------------------------------------------- walks


def test_max_nodes_formula_matches_gcc():
    assert max_nodes_per_seed(1, 256, 0.8) == 256
    assert max_nodes_per_seed(1000, 1, 0.8) == int(1000**0.75 * np.e / (np.e - 1) / 0.8 + 0.5)
    # GCC's generate.py (GraphDataset.__getitem__): linear in the degree
    assert max_nodes_per_seed(1000, 1, 0.8, power=1.0) == int(1000 * np.e / (np.e - 1) / 0.8 + 0.5)


def test_gcc_visit_budget_changes_only_the_views_of_nodes_whose_budget_grows():
    star = nx.star_graph(150)  # hub 0 of degree 150: budget 297 under GCC's generate rule, 256 under pre-training's
    star.add_edges_from((i, i + 1) for i in range(1, 150, 2))
    g = dgl_of(star)
    pretrain, gcc = (NodeViewDataset(g, SamplingConfig(positional_embedding_size=16), seed=3, visit_budget=b)
                     for b in ("pretrain", "gcc"))
    degree = g.in_degrees().numpy()
    grows = max_nodes_per_seed(degree, 256, 0.8, 1.0) > max_nodes_per_seed(degree, 256, 0.8)
    assert grows.tolist() == [True] + [False] * 150
    a, b = pretrain.__getitems__(range(151)), gcc.__getitems__(range(151))
    for i in range(1, 151):  # same keys, same walks, same budget: the same views
        assert np.array_equal(a.select([i]).nid, b.select([i]).nid)
    # the hub's walks go on: its view holds every node of the shorter one, and more
    assert set(a.select([0]).nid) < set(b.select([0]).nid)
    with pytest.raises(ValueError, match="visit_budget must be one of pretrain, gcc, got 'linear'"):
        NodeViewDataset(g, SMALL, visit_budget="linear")


def test_walks_visit_exactly_the_budget_along_edges(ba):
    index = GraphIndex.of(ba)
    starts = np.arange(0, 300, 7)
    budgets = max_nodes_per_seed(index.in_degree[starts], 64, 0.8)
    counts, visits = rwr_visits(index.indptr, index.indices, starts, budgets, 0.8, 10,
                                KeyedRandom.for_items(0, starts))
    assert np.array_equal(counts, budgets)
    first = visits[np.concatenate([[0], np.cumsum(counts)[:-1]])]
    adjacency = ba.adj_external(scipy_fmt="csr")
    assert all(adjacency[s, f] for s, f in zip(starts, first))  # the first step is always taken


def test_view_is_centre_then_sorted_distinct_visits():
    num_nodes, nodes = view_node_sets(np.array([3, 0]), np.array([4, 2]), np.array([5, 3, 1, 5, 2, 2]), 6)
    assert num_nodes.tolist() == [3, 2] and nodes.tolist() == [3, 1, 5, 0, 2]


def test_isolated_start_gives_a_single_node_view():
    g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 0])), num_nodes=3)
    sets = rwr_node_sets(GraphIndex.of(g), np.array([2, 0]), 16, 0.8, 10, KeyedRandom.for_items(0, np.arange(2)))
    assert sets.num_nodes.tolist() == [1, 2] and sets.nodes.tolist() == [2, 0, 1]


def test_batched_walks_match_gccs_per_item_walks_in_distribution(ba):
    """Two-sample tests on 1500 views per start node: sizes (KS) and node membership frequencies (chi-square),
    each at level 1e-3 (a false alarm in about one run in a thousand per test)."""
    draws = 1500
    for start in (0, 150):
        ours = rwr_node_sets(GraphIndex.of(ba), np.full(draws, start), 64, 0.8, 10,
                             KeyedRandom.for_items(11, np.arange(draws)))
        rng = np.random.default_rng(11)
        ref = [reference_rwr_nodes(ba, start, 64, 0.8, 10, rng) for _ in range(draws)]
        assert stats.ks_2samp(ours.num_nodes, [len(r) for r in ref]).pvalue > 1e-3
        ours_freq = np.bincount(ours.nodes, minlength=300)
        ref_freq = np.bincount(np.concatenate(ref), minlength=300)
        seen = (ours_freq + ref_freq) >= 20
        table = np.stack([ours_freq[seen], ref_freq[seen]])
        assert stats.chi2_contingency(table).pvalue > 1e-3


# ------------------------------------------------------------------------------------------------ view building


def test_runs_are_concatenated_aranges_and_refuse_negative_counts():
    rng = np.random.default_rng(0)
    starts, counts = rng.integers(-50, 50, 200), rng.integers(0, 5, 200)
    expected = np.concatenate([np.arange(s, s + c) for s, c in zip(starts, counts)])
    assert np.array_equal(runs(starts, counts), expected)
    assert np.array_equal(runs(starts.tolist(), counts.astype(np.int32).tolist()), expected)
    assert len(runs([], [])) == 0 and len(runs([3, 4], [0, 0])) == 0
    with pytest.raises(ValueError, match="counts must be >= 0"):
        runs([0, 0], [2, -1])


def test_induced_edges_are_dgl_node_subgraphs_edges_in_order(ba):
    rng = np.random.default_rng(0)
    node_sets = [reference_rwr_nodes(ba, int(rng.integers(300)), 64, 0.8, 10, rng) for _ in range(30)]
    sets = NodeSets(np.array([len(x) for x in node_sets]), np.concatenate(node_sets))
    index = GraphIndex.of(ba)
    assert index.upper is not None  # simple and undirected: each edge found once, from its lower-ranked end
    ne, src, dst = induced_edges(index, sets)
    ptr = np.concatenate([[0], np.cumsum(ne)])
    for b, nodes in enumerate(node_sets):
        ref = reference_view(ba, nodes, 8)
        assert np.array_equal(src[ptr[b]:ptr[b + 1]], ref.src) and np.array_equal(dst[ptr[b]:ptr[b + 1]], ref.dst)


def test_induced_edges_of_hubs_and_of_a_huge_view_are_node_subgraphs_edges_in_order():
    """Hub members (probed instead of scanned, with parallel edges) and a view of more than 2**15 nodes (the wider
    lookup table) give ``dgl.node_subgraph``'s edges in its order (the parent's edges are sorted, so eid order is
    the CSR order)."""
    rng = np.random.default_rng(3)
    n = 2**15 + 100
    others = np.arange(1, n)
    src = np.concatenate([np.zeros(n - 1, np.int64), others, np.full(305, 1), rng.integers(2, n, 300),
                          rng.integers(0, n, 20000)])
    dst = np.concatenate([others, np.zeros(n - 1, np.int64), rng.integers(2, 400, 300), [2, 3, 50, 399, 399],
                          np.full(300, 1), rng.integers(0, n, 20000)])
    order = np.lexsort((dst, src))
    g = dgl.graph((torch.from_numpy(src[order]), torch.from_numpy(dst[order])), num_nodes=n)
    node_sets = [np.array([0, 5, 17, 399]), np.array([399, 0, 1, 2, 3, 50, 60, 70, 80, 90, 100, 200]),
                 np.concatenate([[7], np.delete(np.arange(n), 7)])]
    index = GraphIndex.of(g)
    assert index.upper is None  # parallel edges: every member's out-edges are scanned (hubs probed)
    ne, s, d = induced_edges(index, NodeSets(np.array([len(x) for x in node_sets]), np.concatenate(node_sets)))
    ptr = np.concatenate([[0], np.cumsum(ne)])
    for b, nodes in enumerate(node_sets):
        ref_src, ref_dst = edges(dgl.node_subgraph(g, torch.from_numpy(nodes)))
        assert np.array_equal(s[ptr[b]:ptr[b + 1]], ref_src) and np.array_equal(d[ptr[b]:ptr[b + 1]], ref_dst)
    view1 = s[ptr[1]:ptr[2]] * n + d[ptr[1]:ptr[2]]
    assert len(np.unique(view1)) < len(view1)  # the hub's parallel edges are in


def test_induced_edges_of_an_undirected_graph_equal_those_of_scanning_every_members_out_edges():
    g = powerlaw_graph(3000, 15000, np.random.default_rng(1))
    index = GraphIndex.of(g)
    starts = np.arange(0, 3000, 3)
    sets = rwr_node_sets(index, starts, 256, 0.8, 10, KeyedRandom.for_items(0, starts))
    assert index.upper is not None and sets.num_nodes.max() > 100
    oriented = induced_edges(index, sets)
    scanned = induced_edges(dataclasses.replace(index, upper=None), sets)
    assert all(np.array_equal(a, b) for a, b in zip(oriented, scanned))


def test_batched_views_equal_per_view_reference(ba):
    rng = np.random.default_rng(1)
    node_sets = [reference_rwr_nodes(ba, int(rng.integers(300)), 64, 0.8, 10, rng) for _ in range(20)]
    views = build_views(GraphIndex.of(ba), NodeSets(np.array([len(x) for x in node_sets]), np.concatenate(node_sets)), 16)
    for b, nodes in enumerate(node_sets):
        mine, ref = views.select([b]), reference_view(ba, nodes, 16)
        assert np.array_equal(mine.nid, ref.nid) and mine.seed_pos[0] == 0
        assert np.allclose(mine.eigval, ref.eigval, atol=1e-5, equal_nan=True)
        assert projector_gap(mine.eigvec.astype(float), ref.eigvec.astype(float), ref.eigval[0].astype(float)) < 1e-4


def test_to_dgl_equals_dgl_batch_of_the_single_views(ba):
    ds = NodeViewDataset(ba, SMALL)
    views = ds.__getitems__(range(6))
    singles = [views.select([b]).to_dgl((PE, SEED, NID)) for b in range(6)]
    batched, reference = views.to_dgl((PE, SEED, NID)), dgl.batch(singles)
    assert torch.equal(batched.batch_num_nodes(), reference.batch_num_nodes())
    assert all(torch.equal(a, b) for a, b in zip(batched.edges(), reference.edges()))
    assert all(torch.equal(batched.ndata[f], reference.ndata[f]) for f in (PE, SEED, NID))


def test_views_round_trip_through_dgl_and_arrays(ba):
    views = NodeViewDataset(ba, SMALL).__getitems__(range(5))
    back = ViewBatch.from_dgl(views.to_dgl((PE, EIGVEC, EIGVAL, SEED, NID)))
    stored = ViewBatch.from_arrays(views.to_arrays())
    for other in (back, stored):
        assert all(np.array_equal(getattr(views, f), getattr(other, f), equal_nan=True)
                   for f in ("num_nodes", "num_edges", "src", "dst", "nid", "seed_pos", "pe", "eigvec", "eigval"))


def test_select_update_and_induce_keep_each_views_structure(ba):
    views = NodeViewDataset(ba, SMALL).__getitems__(range(8))
    part = views.select([5, 2])
    assert np.array_equal(concat([views.select([2]), views.select([5])]).nid, part.select([1, 0]).nid)
    swapped = views.update(np.array([0, 1]), views.select([1, 0]))
    assert np.array_equal(swapped.select([0]).src, views.select([1]).src)
    keep = np.ones(int(views.num_nodes.sum()), dtype=bool)
    keep[views.node_ptr[3] + views.num_nodes[3] - 1] = False
    cut = views.induce(keep)
    assert cut.num_nodes[3] == views.num_nodes[3] - 1 and np.array_equal(cut.num_nodes[:3], views.num_nodes[:3])
    assert cut.src.max(initial=0) < cut.num_nodes.max()


# ------------------------------------------------------------------------------------------------------- datasets


def test_pair_items_do_not_depend_on_their_batch(ba):
    ds = PretrainPairDataset([ba], SMALL, seed=3, length=100, pipeline=PairPipeline())
    together_q, together_k = ds.__getitems__([4, 9, 17])
    alone_q, alone_k = ds.__getitems__([9])
    for together, alone in ((together_q, alone_q), (together_k, alone_k)):
        assert np.array_equal(together.select([1]).nid, alone.nid)
        assert np.array_equal(together.select([1]).pe, alone.pe)
    assert not np.array_equal(together_q.select([0]).nid, alone_q.nid) or together_q.num_nodes[0] == 1


def test_pair_views_have_the_centre_first_flagged_and_parent_ids():
    graphs = [dgl_of(nx.barabasi_albert_graph(50, 2, seed=s)) for s in (0, 1)]
    q, k = PretrainPairDataset(graphs, SMALL, seed=0, length=64, pipeline=PairPipeline()).__getitems__(range(32))
    assert np.array_equal(q.nid[q.node_ptr[:-1]], k.nid[k.node_ptr[:-1]])  # same start node
    g = q.to_dgl((PE, SEED, NID))
    assert g.batch_size == 32 and int(g.ndata[SEED].sum()) == 32
    assert q.nid.max() < 100  # union ids over the two graphs


def test_start_nodes_follow_in_degree_power_075():
    g = dgl_of(nx.star_graph(9))  # centre degree 9, leaves degree 1
    ds = PretrainPairDataset([g], SMALL, seed=0, length=10, pipeline=PairPipeline())
    starts = ds.draw_starts(KeyedRandom.for_items(0, np.arange(20000)))
    expected = 9**0.75 / (9**0.75 + 9)
    assert abs((starts == 0).mean() - expected) < 0.015


def test_batches_identical_with_zero_one_and_two_workers(ba):
    ds = PretrainPairDataset([ba], SMALL, seed=5, length=64, pipeline=PairPipeline())
    out = []
    for workers in (0, 1, 2):
        loader = torch.utils.data.DataLoader(ds, batch_size=16, collate_fn=collate_pairs, num_workers=workers,
                                             worker_init_fn=worker_init)
        out.append([(q.ndata[PE].clone(), k.ndata[NID].clone() if NID in k.ndata else k.edges()[0].clone())
                    for q, k in loader])
    for other in out[1:]:
        assert all(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) for a, b in zip(out[0], other))


def test_node_and_graph_view_datasets(ba):
    nodes = NodeViewDataset(ba, SMALL).__getitems__(range(10))
    assert np.array_equal(nodes.nid[nodes.node_ptr[:-1]], np.arange(10))
    graphs = [dgl_of(nx.star_graph(4)), dgl_of(nx.path_graph(6))]
    whole = GraphViewDataset(graphs, SMALL).__getitems__([0, 1])
    assert whole.num_nodes.tolist() == [5, 6] and whole.seed_pos.tolist() == [0, 1]
    assert np.array_equal(whole_graph_views(graphs, 16, max_edges=4).eigval, whole.eigval, equal_nan=True)


def test_flipping_one_sign_draw_into_another_equals_decomposing_with_the_other():
    """Views of one sign draw, flipped by (first draw · second draw), are exactly the views of the second draw."""
    graphs = [dgl.to_bidirected(dgl.from_networkx(nx.path_graph(n))) for n in (6, 9, 12)]
    first, second = KeyedRandom.for_items(1, np.arange(3)), KeyedRandom.for_items(2, np.arange(3))
    drawn, wanted = (whole_graph_views(graphs, 4, "random", rng) for rng in (first, second))
    signs = sign_draws("random", first, 4) * sign_draws("random", second, 4)
    assert (signs < 0).any() and (signs > 0).any()
    flipped = flip_signs(drawn, signs)
    for name in ("pe", "eigvec", "eigval", "src", "dst"):
        np.testing.assert_array_equal(getattr(flipped, name), getattr(wanted, name), err_msg=name)
    with pytest.raises(ValueError, match="signs must have shape"):
        flip_signs(drawn, signs[:2])


def test_mantissas_decide_a_threshold_exactly_as_the_uniforms_do():
    # the walks test restarts on the integers behind the uniforms: m >= ceil(p 2^53) must be u >= p, for any p
    rng = KeyedRandom.for_items(seed=5, indices=np.arange(64))
    counters = np.broadcast_to(np.arange(4096), (64, 4096))
    u, m = rng.at(counters), rng.mantissas(counters)
    assert m.dtype == np.uint64 and bool((m < 2**53).all()) and bool((m * 2.0**-53 == u).all())
    edge = float(u[3, 7])  # a drawn value itself, and its float neighbours on either side
    for p in [0.0, 0.2, 0.5, 0.8, 1.0, edge, np.nextafter(edge, 0), np.nextafter(edge, 1),
              *np.random.default_rng(0).random(20)]:
        assert bool(((u >= p) == (m >= math.ceil(p * 2**53))).all()), p
