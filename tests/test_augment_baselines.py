"""Properties of the re-implemented baselines' augmentations (GraphCL, GRACE, MVGRL, GCA) on GCC views."""
from __future__ import annotations

import dgl
import networkx as nx
import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

from gcc_sgcl.augment import (
    BASELINES,
    AdaptiveEdgeDrop,
    AdaptiveFeatureMask,
    AttributeMask,
    AugmentConfig,
    BaselinePipeline,
    Diffusion,
    EdgeDrop,
    EdgePerturb,
    FeatureMask,
    Identity,
    NodeDrop,
    Subgraph,
    Threshold,
    TopK,
    build_sgcl_pipeline,
    gca_view,
    grace_view,
    graphcl_view,
)
from gcc_sgcl.augment import functional as F
from gcc_sgcl.sampling.spectral import attach_eigen_features, eigen_features
from gcc_sgcl.sampling.view import EIGVAL, NID, PE, SEED

K = 8
NID_OFFSET = 100  # parent ids differ from view-local ids, so an edit that loses them is caught


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    """Many tiny eigendecompositions run on one BLAS thread, as in the sampler (``limit_threads``)."""
    with threadpool_limits(1):
        yield


def make_view(graph: nx.Graph, k: int = K) -> dgl.DGLGraph:
    """A view as the sampler builds one: bidirected, eigen features, node 0 the seed, parent ids."""
    view = attach_eigen_features(dgl.from_networkx(nx.convert_node_labels_to_integers(graph)), k)
    n = view.num_nodes()
    view.ndata[SEED] = (torch.arange(n) == 0).long()
    view.ndata[NID] = torch.arange(n) + NID_OFFSET
    return view


def ws_view(n: int = 30, seed: int = 0, degree: int = 4, k: int = K) -> dgl.DGLGraph:
    return make_view(nx.connected_watts_strogatz_graph(n, degree, 0.3, seed=seed), k)


def hub_view() -> dgl.DGLGraph:
    """Two 8-leaf stars whose centres (nodes 0 and 1) are joined, plus a 6-node path hanging off leaf 2."""
    graph = nx.Graph([(0, 1)] + [(0, i) for i in range(2, 10)] + [(1, i) for i in range(10, 18)])
    nx.add_path(graph, [2, *range(18, 24)])
    return make_view(graph)


def degenerate_views() -> list[dgl.DGLGraph]:
    disconnected = nx.disjoint_union_all([nx.complete_graph(3), nx.path_graph(4), nx.empty_graph(2)])
    graphs = [
        nx.empty_graph(1),
        nx.path_graph(2),
        nx.path_graph(3),
        nx.complete_graph(3),
        nx.empty_graph(4),
        disconnected,
        nx.relabel_nodes(disconnected, {0: 8, 8: 0}),  # isolated centre
        nx.relabel_nodes(nx.star_graph(6), {0: 3, 3: 0}),  # centre is a leaf
        nx.cycle_graph(8),  # every centrality equal (GCA's 0/0)
        nx.complete_graph(6),  # no non-edge to add
    ]
    return [make_view(g) for g in graphs]


def edge_set(view: dgl.DGLGraph) -> set[tuple[int, int]]:
    """Undirected edges in parent ids."""
    nid = view.ndata[NID].numpy()
    u, v = F.undirected_edges(view)
    return {tuple(sorted(pair)) for pair in zip(nid[u].tolist(), nid[v].tolist())}


def assert_well_formed(out: dgl.DGLGraph, centre_nid: int = NID_OFFSET) -> None:
    """Bidirected, no self-loops, the centre first and flagged, finite PE of width K."""
    src, dst = F.edge_arrays(out)
    assert (src != dst).all()
    assert set(zip(src.tolist(), dst.tolist())) == set(zip(dst.tolist(), src.tolist()))
    assert int(out.ndata[NID][0]) == centre_nid
    assert out.ndata[SEED][0] == 1 and int(out.ndata[SEED].sum()) == 1
    assert out.ndata[PE].shape[0] == out.num_nodes() and torch.isfinite(out.ndata[PE]).all()


def assert_own_pe(out: dgl.DGLGraph) -> None:
    """The eigen features are the edited graph's own (recomputed, not rows of the input's)."""
    fresh = eigen_features(out, K)
    np.testing.assert_allclose(out.ndata[PE].numpy(), fresh.pe, atol=1e-5)
    np.testing.assert_array_equal(np.isnan(out.ndata[EIGVAL][0].numpy()), np.isnan(fresh.eigval))


def snapshot(view: dgl.DGLGraph) -> dict[str, torch.Tensor]:
    src, dst = view.edges()
    return {"_src": src.clone(), "_dst": dst.clone(), **{n: t.clone() for n, t in view.ndata.items()}}


def views_equal(a: dgl.DGLGraph, b: dgl.DGLGraph) -> bool:
    sa, sb = snapshot(a), snapshot(b)
    return sa.keys() == sb.keys() and all(
        sa[n].shape == sb[n].shape and torch.equal(sa[n].nan_to_num(-9), sb[n].nan_to_num(-9)) for n in sa
    )


def masked_columns(view: dgl.DGLGraph) -> np.ndarray:
    """Boolean per valid column: its PE is all zero (a valid eigenvector column never is)."""
    valid = ~np.isnan(view.ndata[EIGVAL][0].numpy())
    return (view.ndata[PE].numpy()[:, valid] == 0).all(axis=0)


def baseline(name: str, **overrides) -> BaselinePipeline:
    return build_sgcl_pipeline(AugmentConfig.only(baseline=name, **overrides))


def view_transforms() -> list:
    return [
        NodeDrop(0.2), Subgraph(0.2), EdgePerturb(0.2), AttributeMask(0.2), graphcl_view(0.5),
        EdgeDrop(0.4), FeatureMask(0.4), grace_view(0.5, 0.5),
        AdaptiveEdgeDrop(0.5), AdaptiveFeatureMask(0.5), gca_view(0.9, 0.9),
        Diffusion(0.2, TopK()), Diffusion(0.2, TopK(3)), Diffusion(0.2, Threshold(0.05)),
    ]


# ---------------------------------------------------------------------------------------------- GraphCL


def test_node_drop_removes_the_ratio_of_nodes_in_expectation_and_never_the_centre():
    view = ws_view(23)  # 0.2 * 23 = 4.6 nodes: the expectation holds only with stochastic rounding
    fractions = []
    for seed in range(200):
        out = NodeDrop(0.2)(view, np.random.default_rng(seed))
        assert_well_formed(out)
        fractions.append(1 - out.num_nodes() / 23)
        kept = set(out.ndata[NID].tolist())
        assert edge_set(out) == {e for e in edge_set(view) if set(e) <= kept}  # the induced subgraph
    assert np.mean(fractions) == pytest.approx(0.2, abs=0.006)
    assert_own_pe(out)


def test_subgraph_keeps_a_connected_ratio_of_nodes_grown_from_the_centre():
    view = ws_view(37)  # keeps 0.2 * 37 = 7.4 nodes on average
    sizes = []
    for seed in range(200):
        out = Subgraph(0.2)(view, np.random.default_rng(seed))
        assert_well_formed(out)
        assert nx.is_connected(dgl.to_networkx(out).to_undirected())
        sizes.append(out.num_nodes())
    assert np.mean(sizes) == pytest.approx(7.4, abs=0.1) and set(sizes) == {7, 8}
    assert_own_pe(out)


def test_subgraph_stays_in_the_centres_component():
    view = make_view(nx.disjoint_union(nx.path_graph(3), nx.complete_graph(12)))  # centre on the 3-path
    for seed in range(20):
        out = Subgraph(0.9)(view, np.random.default_rng(seed))
        assert sorted(out.ndata[NID].tolist()) == [100, 101, 102]


def test_edge_perturbation_swaps_the_ratio_of_edges_for_as_many_non_edges():
    view = ws_view(29)  # 58 edges: 11.6 swapped on average
    before = edge_set(view)
    removed = []
    for seed in range(100):
        out = EdgePerturb(0.2)(view, np.random.default_rng(seed))
        assert_well_formed(out)
        after = edge_set(out)
        assert out.num_nodes() == 29 and len(after) == len(before)  # as many added as removed
        removed.append(len(before - after) / len(before))
    assert np.mean(removed) == pytest.approx(0.2, abs=0.005)
    assert_own_pe(out)


def test_attribute_mask_replaces_the_ratio_of_pe_rows_by_the_mean_row():
    view = ws_view(23)
    pe = view.ndata[PE].numpy()
    counts = []
    for seed in range(100):
        out = AttributeMask(0.2)(view, np.random.default_rng(seed))
        changed = (out.ndata[PE].numpy() != pe).any(axis=1)
        token = np.tile(pe.mean(axis=0), (changed.sum(), 1))
        np.testing.assert_allclose(out.ndata[PE].numpy()[changed], token, atol=1e-6)
        assert edge_set(out) == edge_set(view) and torch.equal(out.ndata[NID], view.ndata[NID])
        counts.append(int(changed.sum()))
    assert np.mean(counts) / 23 == pytest.approx(0.2, abs=0.006)


def test_graphcl_picks_each_of_its_four_augmentations_uniformly():
    view, n = ws_view(30), 30
    outcomes = []
    for seed in range(200):
        out = graphcl_view(0.2)(view, np.random.default_rng(seed))
        if out.num_nodes() < n:
            outcomes.append("subgraph" if out.num_nodes() <= n // 2 else "drop")
        elif edge_set(out) != edge_set(view):
            outcomes.append("perturb")
        else:
            outcomes.append("mask")
    counts = {name: outcomes.count(name) for name in ("drop", "subgraph", "perturb", "mask")}
    assert all(30 <= c <= 70 for c in counts.values()), counts


# ------------------------------------------------------------------------------------------------ GRACE


def test_grace_query_and_key_use_their_own_rates():
    pipeline = baseline("grace")  # Cora: edges 0.2 / 0.4, features 0.3 / 0.4
    view = ws_view(40, degree=6, k=32)  # 120 edges, 32 valid PE columns
    before = edge_set(view)
    removed, masked = {"q": [], "k": []}, {"q": [], "k": []}
    for seed in range(60):
        q, k = pipeline(view, view, np.random.default_rng(seed))
        for name, out in (("q", q), ("k", k)):
            assert_well_formed(out)
            assert edge_set(out) <= before and out.num_nodes() == 40  # removing only, nodes kept
            removed[name].append(1 - len(edge_set(out)) / len(before))
            masked[name].extend(masked_columns(out))
    assert np.mean(removed["q"]) == pytest.approx(0.2, abs=0.025)
    assert np.mean(removed["k"]) == pytest.approx(0.4, abs=0.025)
    assert np.mean(masked["q"]) == pytest.approx(0.3, abs=0.04)
    assert np.mean(masked["k"]) == pytest.approx(0.4, abs=0.04)


def test_grace_edge_drop_recomputes_the_pe_and_feature_mask_keeps_padding():
    out = EdgeDrop(0.5)(ws_view(30), np.random.default_rng(0))
    assert_own_pe(out)
    small = make_view(nx.path_graph(5))  # 3 valid columns, 5 padded (zero) ones
    out = FeatureMask(1.0)(small, np.random.default_rng(0))
    assert masked_columns(out).all() and (out.ndata[PE] == 0).all()
    np.testing.assert_array_equal(out.ndata[EIGVAL].numpy(), small.ndata[EIGVAL].numpy())  # NaN == NaN here


# ------------------------------------------------------------------------------------------------ MVGRL


def test_ppr_rows_are_distributions_with_teleport_alpha():
    graph = nx.disjoint_union(nx.connected_watts_strogatz_graph(15, 4, 0.3, seed=1), nx.empty_graph(1))
    u, v = F.undirected_pairs(*np.array(graph.edges()).T)
    ppr = F.ppr_matrix(u, v, 16, 0.2)
    assert (ppr >= 0).all()
    np.testing.assert_allclose(ppr.sum(axis=1), 1.0, atol=1e-12)
    a = nx.to_numpy_array(graph) + np.eye(16)
    walk = a / a.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ppr, 0.2 * np.eye(16) + 0.8 * walk @ ppr, atol=1e-12)  # teleport 0.2
    assert ppr[15, 15] == pytest.approx(1.0)  # an isolated node keeps its mass
    looped = nx.Graph(graph)
    looped.add_edges_from((i, i) for i in range(16))  # MVGRL's A + I
    for seed in (0, 7):
        pr = nx.pagerank(looped, alpha=0.8, personalization={seed: 1.0}, tol=1e-14, max_iter=10_000)
        np.testing.assert_allclose(ppr[seed], [pr[i] for i in range(16)], atol=1e-8)


def test_topk_keeps_the_k_largest_off_diagonal_entries_of_each_row():
    scores = np.random.default_rng(0).random((10, 10))
    scores[3, [1, 2, 4]] = 0.0  # row 3 ...
    scores[3, 5:] = 0.0  # ... has only its diagonal and column 0 positive
    rows, cols = F.topk_targets(scores, 3)
    assert not (rows == cols).any()
    for i in range(10):
        mine = cols[rows == i]
        off = np.delete(np.arange(10), i)
        expected = off[np.argsort(-scores[i, off])][: 1 if i == 3 else 3]
        assert sorted(mine.tolist()) == sorted(expected.tolist())
    kept = F.threshold_targets(scores, 0.5)
    assert all(scores[r, c] >= 0.5 and r != c for r, c in zip(*kept))
    assert len(kept[0]) == int((scores >= 0.5).sum() - (np.diag(scores) >= 0.5).sum())


def test_diffusion_view_is_the_symmetrised_topk_ppr_graph_with_its_own_pe():
    view = ws_view(30)
    u, v = F.undirected_edges(view)
    ppr = F.ppr_matrix(u, v, 30, 0.2)
    out = Diffusion(0.2, TopK(2))(view, np.random.default_rng(0))
    assert_well_formed(out)
    assert_own_pe(out)
    expected = F.undirected_pairs(*F.topk_targets(ppr, 2))
    np.testing.assert_array_equal(np.stack(F.undirected_edges(out)), np.stack(expected))
    assert torch.equal(out.ndata[NID], view.ndata[NID])
    matched = Diffusion(0.2, TopK())(view, np.random.default_rng(0))  # k = mean degree = 4
    assert (matched.in_degrees() >= 4).all() and not (out.in_degrees() >= 4).all()


def test_diffusion_never_links_disconnected_components():
    graph = nx.disjoint_union_all([nx.complete_graph(3), nx.path_graph(5), nx.empty_graph(2)])
    component = {node: i for i, part in enumerate(nx.connected_components(graph)) for node in part}
    view = make_view(graph)
    for sparsify in (TopK(), TopK(6), Threshold(1e-3)):
        out = Diffusion(0.2, sparsify)(view, np.random.default_rng(0))
        assert all(component[a - NID_OFFSET] == component[b - NID_OFFSET] for a, b in edge_set(out))


def test_mvgrl_pipeline_diffuses_only_the_key_view():
    view = ws_view(30)
    q, k = baseline("mvgrl")(view, view, np.random.default_rng(0))
    assert q is view and edge_set(k) != edge_set(view)
    k_eps = baseline("mvgrl", mvgrl_sparsify="threshold", mvgrl_eps=0.05)(view, view, np.random.default_rng(0))[1]
    assert edge_set(k_eps) != edge_set(k)


# -------------------------------------------------------------------------------------------------- GCA


def test_gca_drops_edges_between_low_degree_nodes_more_than_hub_edges():
    view = hub_view()
    u, v, probs = AdaptiveEdgeDrop(0.3, p_tau=0.7).probabilities(view)
    degree = view.in_degrees().numpy()
    centrality = degree[u] + degree[v]
    for i in range(len(u)):  # probability is non-increasing in edge centrality
        assert (probs[centrality > centrality[i]] <= probs[i] + 1e-12).all()
    assert probs.mean() == pytest.approx(0.3) and probs.max() < 0.7  # uncapped: the mean rate is p
    path = (degree[u] <= 2) & (degree[v] <= 2)
    hub = (degree[u] >= 9) | (degree[v] >= 9)
    dropped = np.zeros(len(u))
    before = edge_set(view)
    nid = view.ndata[NID].numpy()
    edges = [tuple(sorted(e)) for e in zip(nid[u].tolist(), nid[v].tolist())]
    for seed in range(300):
        after = edge_set(AdaptiveEdgeDrop(0.3)(view, np.random.default_rng(seed)))
        assert after <= before
        dropped += [e not in after for e in edges]
    frequency = dropped / 300
    assert frequency[path].min() > frequency[hub].max()
    np.testing.assert_allclose(frequency, probs, atol=0.1)


def test_gca_drop_probabilities_are_capped_at_p_tau():
    _, _, probs = AdaptiveEdgeDrop(0.9, p_tau=0.7).probabilities(hub_view())
    assert probs.max() == pytest.approx(0.7) and (probs == 0.7).sum() > 1
    _, probs = AdaptiveFeatureMask(0.9, p_tau=0.7).probabilities(hub_view())
    assert probs.max() == pytest.approx(0.7)
    equal = AdaptiveEdgeDrop(0.3).probabilities(make_view(nx.cycle_graph(8)))[2]  # all centralities equal
    np.testing.assert_allclose(equal, 0.3)


def test_gca_feature_mask_keeps_the_columns_carried_by_central_nodes():
    view = make_view(nx.path_graph(6))  # 4 valid columns, 4 padded
    columns, probs = AdaptiveFeatureMask(0.3, p_tau=0.7).probabilities(view)
    assert columns.tolist() == [0, 1, 2, 3]
    weight = np.log1p(np.abs(view.ndata[PE].numpy()[:, :4]).T @ view.in_degrees().numpy())
    assert np.array_equal(np.argsort(probs, kind="stable"), np.argsort(-weight, kind="stable"))
    assert probs.mean() == pytest.approx(0.3)
    masked = np.zeros(4)
    for seed in range(300):
        masked += masked_columns(AdaptiveFeatureMask(0.3)(view, np.random.default_rng(seed)))
    np.testing.assert_allclose(masked / 300, probs, atol=0.1)


def test_gca_query_and_key_use_their_own_rates():
    pipeline = baseline("gca")  # edges 0.3 / 0.4, features 0.1 / 0.0
    view = ws_view(40, degree=6, k=32)
    before = edge_set(view)
    removed, masked = {"q": [], "k": []}, {"q": [], "k": []}
    for seed in range(60):
        q, k = pipeline(view, view, np.random.default_rng(seed))
        for name, out in (("q", q), ("k", k)):
            removed[name].append(1 - len(edge_set(out)) / len(before))
            masked[name].extend(masked_columns(out))
    assert np.mean(removed["q"]) == pytest.approx(0.3, abs=0.025)
    assert np.mean(removed["k"]) == pytest.approx(0.4, abs=0.025)
    assert 0.05 < np.mean(masked["q"]) < 0.15 and not any(masked["k"])


# --------------------------------------------------------------------------------------------- all four


def unchanged(view: dgl.DGLGraph, snap: dict[str, torch.Tensor]) -> bool:
    now = snapshot(view)
    return now.keys() == snap.keys() and all(torch.equal(now[n].nan_to_num(-9), snap[n].nan_to_num(-9)) for n in snap)


@pytest.mark.parametrize("name", ["graphcl", "grace", "mvgrl", "gca"])
def test_pipelines_are_deterministic_under_a_seed_and_never_mutate_inputs(name):
    pipeline = baseline(name)
    q, k = ws_view(30, seed=0), ws_view(25, seed=1)
    snaps = snapshot(q), snapshot(k)
    outputs = []
    for seed in range(6):
        first = pipeline(q, k, np.random.default_rng(seed))
        again = pipeline(q, k, np.random.default_rng(seed))
        assert views_equal(first[0], again[0]) and views_equal(first[1], again[1])
        outputs.append(first)
    assert unchanged(q, snaps[0]) and unchanged(k, snaps[1])
    if name != "mvgrl":  # MVGRL's diffusion is deterministic
        assert any(not views_equal(outputs[0][1], out[1]) for out in outputs[1:])


def test_transforms_never_mutate_their_input_and_never_crash_on_degenerate_views():
    for view in [*degenerate_views(), ws_view(12), hub_view()]:
        snap = snapshot(view)
        for transform in view_transforms():
            for seed in range(3):
                assert_well_formed(transform(view, np.random.default_rng(seed)))
        assert unchanged(view, snap)
    for name in BASELINES:
        for q in degenerate_views():
            out_q, out_k = baseline(name)(q, q, np.random.default_rng(q.num_nodes()))
            assert_well_formed(out_q)
            assert_well_formed(out_k)


def test_baseline_pipelines_need_no_filter_and_no_global_embedding():
    for name in BASELINES:
        pipeline = baseline(name)
        assert pipeline.filter is None and not pipeline.needs_global and not pipeline.needs_global_rows
    assert sorted(BASELINES) == ["gca", "grace", "graphcl", "mvgrl"]
    text = repr(baseline("grace"))
    assert "EdgeDrop(p=0.2)" in text and "EdgeDrop(p=0.4)" in text and "# key" in text


def test_bad_arguments_are_rejected_naming_the_parameter():
    cases = [
        (lambda: NodeDrop(1.5), "ratio"),
        (lambda: Subgraph(-0.1), "keep_ratio"),
        (lambda: EdgeDrop(2.0), "p"),
        (lambda: AdaptiveEdgeDrop(0.3, p_tau=1.2), "p_tau"),
        (lambda: TopK(0), "k"),
        (lambda: Threshold(0.0), "eps"),
        (lambda: Diffusion(alpha=0.0), "alpha"),
        (lambda: F.topk_targets(np.eye(3), 0), "k"),
        (lambda: AugmentConfig(baseline="grace"), "use_filter"),
        (lambda: AugmentConfig.only(baseline="grace", grace_drop_edge_q=1.5), "grace_drop_edge_q"),
        (lambda: AugmentConfig.only(baseline="mvgrl", mvgrl_alpha=0.0), "mvgrl_alpha"),
        (lambda: AugmentConfig.only(baseline="mvgrl", mvgrl_topk=-1), "mvgrl_topk"),
        (lambda: baseline("simclr"), "baseline"),
        (lambda: baseline("mvgrl", mvgrl_sparsify="knn"), "mvgrl_sparsify"),
    ]
    for make, name in cases:
        with pytest.raises(ValueError, match=name):
            make()
