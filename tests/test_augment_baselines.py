"""Properties of the re-implemented baselines' augmentations (GraphCL, GRACE, MVGRL, GCA) on GCC views.

Rates are measured on a batch of copies of one view, each copy with its own key row.
"""
from __future__ import annotations

import dgl
import networkx as nx
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from gcc_sgcl.augment import (
    BASELINES,
    AdaptiveEdgeDrop,
    AdaptiveFeatureMask,
    AttributeMask,
    Diffusion,
    EdgeDrop,
    EdgePerturb,
    FeatureMask,
    NodeDrop,
    PairPipeline,
    Split,
    Subgraph,
    Threshold,
    TopK,
    build_pair_pipeline,
    gca_view,
    grace_view,
    graphcl_view,
)
from gcc_sgcl.augment import functional as F
from gcc_sgcl.config import AUGMENT_FAMILIES, Config, GraceConfig, MVGRLConfig, SamplingConfig
from gcc_sgcl.presets import make_config
from gcc_sgcl.sampling.batch import ViewBatch, concat
from gcc_sgcl.sampling.dataset import ViewSampler
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.spectral import eigen_arrays

from viewcheck import K, NID_OFFSET, centres, degenerate_views, keys, same_bits, snapshot, unchanged, view_of, views_equal


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    """Many tiny eigendecompositions run on one BLAS thread, as in the sampler (``limit_threads``)."""
    with threadpool_limits(1):
        yield


def copies(view: ViewBatch, count: int) -> ViewBatch:
    return concat([view] * count)


def ws_view(n: int = 30, seed: int = 0, degree: int = 4, k: int = K) -> ViewBatch:
    return view_of(nx.connected_watts_strogatz_graph(n, degree, 0.3, seed=seed), k)


def hub_view() -> ViewBatch:
    """Two 8-leaf stars whose centres (nodes 0 and 1) are joined, plus a 6-node path hanging off leaf 2."""
    graph = nx.Graph([(0, 1)] + [(0, i) for i in range(2, 10)] + [(1, i) for i in range(10, 18)])
    nx.add_path(graph, [2, *range(18, 24)])
    return view_of(graph)


def edge_set(views: ViewBatch, b: int = 0) -> set[tuple[int, int]]:
    """Undirected edges of view ``b`` in parent ids."""
    view = views.select([b])
    u, v = F.undirected_pairs(view.src, view.dst)
    return {tuple(sorted(pair)) for pair in zip(view.nid[u].tolist(), view.nid[v].tolist())}


def assert_well_formed(out: ViewBatch, before: ViewBatch) -> None:
    """Every view bidirected, without self-loops, its centre kept, finite PE of the input's width."""
    assert len(out) == len(before)
    np.testing.assert_array_equal(centres(out), centres(before))
    assert (out.seed_pos < out.num_nodes).all() and out.pe.shape == (out.num_nodes.sum(), before.k)
    assert np.isfinite(out.pe).all()
    for b in range(len(out)):
        src, dst = out.edges_of(b)
        assert (src != dst).all()
        assert set(zip(src.tolist(), dst.tolist())) == set(zip(dst.tolist(), src.tolist()))


def assert_own_pe(out: ViewBatch) -> None:
    """The eigen features are the edited graphs' own (recomputed, not rows of the input's)."""
    pe, eigvec, eigval = eigen_arrays(out.num_nodes, out.num_edges, out.src, out.dst, out.k)
    np.testing.assert_allclose(out.pe, pe, atol=1e-5)
    np.testing.assert_allclose(out.eigvec, eigvec, atol=1e-5)
    np.testing.assert_allclose(out.eigval, eigval, atol=1e-5)  # NaN padding at the same places


def masked_columns(views: ViewBatch, b: int = 0) -> np.ndarray:
    """Boolean per valid column of view ``b``: its PE is all zero (a valid eigenvector column never is)."""
    view = views.select([b])
    valid = ~np.isnan(view.eigval[0])
    return (view.pe[:, valid] == 0).all(axis=0)


def baseline(name: str, **overrides) -> PairPipeline:
    """The pipeline of baseline family ``name`` with its settings ``overrides``."""
    return build_pair_pipeline(AUGMENT_FAMILIES[name](**overrides))


def pair_step(name: str, **overrides) -> Split:
    """The baseline's one pair step: its query and key view transforms."""
    (step,) = baseline(name, **overrides).steps
    return step


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
    views = copies(view, 300)
    out = NodeDrop(0.2).forward(views, keys(views))
    assert_well_formed(out, views)
    assert (1 - out.num_nodes / 23).mean() == pytest.approx(0.2, abs=0.006)
    for b in range(20):
        kept = set(out.select([b]).nid.tolist())
        assert edge_set(out, b) == {e for e in edge_set(view) if set(e) <= kept}  # the induced subgraph
    assert_own_pe(out)


def test_subgraph_keeps_a_connected_ratio_of_nodes_grown_from_the_centre():
    views = copies(ws_view(37), 200)  # keeps the centre and 0.2 * 37 = 7.4 more nodes on average (GraphCL: 1 + 7)
    out = Subgraph(0.2).forward(views, keys(views))
    assert_well_formed(out, views)
    for b in range(len(out)):
        graph = nx.Graph(list(edge_set(out, b)))
        graph.add_nodes_from(out.select([b]).nid.tolist())
        assert nx.is_connected(graph)
    assert out.num_nodes.mean() == pytest.approx(8.4, abs=0.1) and set(out.num_nodes.tolist()) == {8, 9}
    assert_own_pe(out)


def test_subgraph_of_a_small_view_keeps_more_than_its_centre():
    # GraphCL's loop keeps int(0.2 n) + 1 nodes: a view of 5 nodes keeps 2, never the centre alone
    views = copies(view_of(nx.star_graph(4)), 64)
    out = Subgraph(0.2).forward(views, keys(views))
    assert set(out.num_nodes.tolist()) == {2} and (out.num_edges == 2).all()
    whole = Subgraph(1.0).forward(views, keys(views))  # never more than the view
    assert (whole.num_nodes == 5).all()


def test_subgraph_stays_in_the_centres_component():
    views = copies(view_of(nx.disjoint_union(nx.path_graph(3), nx.complete_graph(12))), 20)  # centre on the path
    out = Subgraph(0.9).forward(views, keys(views))
    for b in range(len(out)):
        assert sorted(out.select([b]).nid.tolist()) == [100, 101, 102]


def test_edge_perturbation_swaps_the_ratio_of_edges_for_as_many_non_edges():
    view = ws_view(29)  # 58 edges: 11.6 swapped on average
    views = copies(view, 100)
    out = EdgePerturb(0.2).forward(views, keys(views))
    assert_well_formed(out, views)
    before = edge_set(view)
    removed = []
    for b in range(len(out)):
        after = edge_set(out, b)
        assert out.num_nodes[b] == 29 and len(after) == len(before)  # as many added as removed
        removed.append(len(before - after) / len(before))
    assert np.mean(removed) == pytest.approx(0.2, abs=0.005)
    assert_own_pe(out)


def test_attribute_mask_replaces_the_ratio_of_pe_rows_by_the_mean_row():
    view = ws_view(23)
    views = copies(view, 100)
    out = AttributeMask(0.2).forward(views, keys(views))
    counts = []
    for b in range(len(out)):
        after = out.select([b])
        changed = (after.pe != view.pe).any(axis=1)
        token = np.tile(view.pe.mean(axis=0), (changed.sum(), 1))
        np.testing.assert_allclose(after.pe[changed], token, atol=1e-6)
        assert edge_set(out, b) == edge_set(view) and same_bits(after.nid, view.nid)
        counts.append(int(changed.sum()))
    assert np.mean(counts) / 23 == pytest.approx(0.2, abs=0.006)


def test_graphcl_picks_one_of_its_four_augmentations_uniformly_per_view():
    n = 30
    view = ws_view(n)
    views = copies(view, 200)
    out = graphcl_view(0.2).forward(views, keys(views))
    outcomes = []
    for b in range(len(out)):
        if out.num_nodes[b] < n:
            outcomes.append("subgraph" if out.num_nodes[b] <= n // 2 else "drop")
        elif edge_set(out, b) != edge_set(view):
            outcomes.append("perturb")
        else:
            outcomes.append("mask")
    counts = {name: outcomes.count(name) for name in ("drop", "subgraph", "perturb", "mask")}
    assert all(30 <= c <= 70 for c in counts.values()), counts


# ------------------------------------------------------------------------------------------------ GRACE


def test_grace_query_and_key_use_their_own_rates():
    step = pair_step("grace")  # Cora: edges 0.2 / 0.4, features 0.3 / 0.4
    view = ws_view(40, degree=6, k=32)  # 120 edges, 32 valid PE columns
    views = copies(view, 60)
    before = edge_set(view)
    q, k = step(views, views, keys(views))
    removed, masked = {"q": [], "k": []}, {"q": [], "k": []}
    for name, out in (("q", q), ("k", k)):
        assert_well_formed(out, views)
        for b in range(len(out)):
            assert edge_set(out, b) <= before and out.num_nodes[b] == 40  # removing only, nodes kept
            removed[name].append(1 - len(edge_set(out, b)) / len(before))
            masked[name].extend(masked_columns(out, b))
    assert np.mean(removed["q"]) == pytest.approx(0.2, abs=0.025)
    assert np.mean(removed["k"]) == pytest.approx(0.4, abs=0.025)
    assert np.mean(masked["q"]) == pytest.approx(0.3, abs=0.04)
    assert np.mean(masked["k"]) == pytest.approx(0.4, abs=0.04)


def test_grace_edge_drop_recomputes_the_pe_and_feature_mask_keeps_padding():
    views = concat([ws_view(30), ws_view(25, seed=1)])
    out = EdgeDrop(0.5).forward(views, keys(views))
    assert (out.num_edges < views.num_edges).all()
    assert_own_pe(out)
    small = view_of(nx.path_graph(5))  # 3 valid columns, 5 padded (zero) ones
    out = FeatureMask(1.0).forward(small, keys(small))
    assert masked_columns(out).all() and (out.pe == 0).all()
    assert same_bits(out.eigval, small.eigval) and same_bits(out.eigvec, small.eigvec)


# ------------------------------------------------------------------------------------------------ MVGRL


def test_ppr_is_mvgrls_symmetric_diffusion_of_the_ppr_distributions():
    graph = nx.disjoint_union(nx.connected_watts_strogatz_graph(15, 4, 0.3, seed=1), nx.empty_graph(1))
    u, v = F.undirected_pairs(*np.array(graph.edges()).T)
    ppr = F.ppr_matrix(u, v, 16, 0.2)
    assert (ppr >= 0).all()
    np.testing.assert_allclose(ppr, ppr.T, atol=1e-12)  # MVGRL's D^-1/2 (A + I) D^-1/2 is symmetric
    a = nx.to_numpy_array(graph) + np.eye(16)
    d = a.sum(axis=1)
    walk = np.diag(d ** -0.5) @ ppr @ np.diag(d ** 0.5)  # similar matrix: the row-stochastic PPR
    np.testing.assert_allclose(walk.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(walk, 0.2 * np.eye(16) + 0.8 * (a / d[:, None]) @ walk, atol=1e-12)  # teleport 0.2
    assert ppr[15, 15] == pytest.approx(1.0)  # an isolated node keeps its mass
    looped = nx.Graph(graph)
    looped.add_edges_from((i, i) for i in range(16))  # MVGRL's A + I
    for seed in (0, 7):
        pr = nx.pagerank(looped, alpha=0.8, personalization={seed: 1.0}, tol=1e-14, max_iter=10_000)
        np.testing.assert_allclose(walk[seed], [pr[i] for i in range(16)], atol=1e-8)


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
    u, v = F.undirected_pairs(view.src, view.dst)
    ppr = F.ppr_matrix(u, v, 30, 0.2)
    out = Diffusion(0.2, TopK(2)).forward(view, keys(view))
    assert_well_formed(out, view)
    assert_own_pe(out)
    expected = F.undirected_pairs(*F.topk_targets(ppr, 2))
    np.testing.assert_array_equal(np.stack(F.undirected_pairs(out.src, out.dst)), np.stack(expected))
    assert same_bits(out.nid, view.nid)
    matched = Diffusion(0.2, TopK()).forward(view, keys(view))  # k = mean degree = 4
    assert (matched.in_degrees() >= 4).all() and not (out.in_degrees() >= 4).all()


def test_diffusion_never_links_disconnected_components():
    graph = nx.disjoint_union_all([nx.complete_graph(3), nx.path_graph(5), nx.empty_graph(2)])
    component = {node: i for i, part in enumerate(nx.connected_components(graph)) for node in part}
    view = view_of(graph)
    for sparsify in (TopK(), TopK(6), Threshold(1e-3)):
        out = Diffusion(0.2, sparsify).forward(view, keys(view))
        assert edge_set(out) and all(component[a - NID_OFFSET] == component[b - NID_OFFSET] for a, b in edge_set(out))


def test_mvgrl_pipeline_diffuses_only_the_key_view():
    views = concat([ws_view(30), ws_view(25, seed=1)])
    q, k = pair_step("mvgrl")(views, views, keys(views))
    assert views_equal(q, views)
    assert all(edge_set(k, b) != edge_set(views, b) for b in range(len(views)))
    k_eps = pair_step("mvgrl", sparsify="threshold", eps=0.05)(views, views, keys(views))[1]
    assert edge_set(k_eps) != edge_set(k)


# -------------------------------------------------------------------------------------------------- GCA


def test_gca_drops_edges_between_low_degree_nodes_more_than_hub_edges():
    view = hub_view()
    (probs,) = AdaptiveEdgeDrop(0.3, p_tau=0.7).probabilities(view)
    u, v = F.undirected_pairs(view.src, view.dst)
    degree = view.in_degrees()
    centrality = degree[u] + degree[v]
    for i in range(len(u)):  # probability is non-increasing in edge centrality
        assert (probs[centrality > centrality[i]] <= probs[i] + 1e-12).all()
    assert probs.mean() == pytest.approx(0.3) and probs.max() < 0.7  # uncapped: the mean rate is p
    path = (degree[u] <= 2) & (degree[v] <= 2)
    hub = (degree[u] >= 9) | (degree[v] >= 9)
    views = copies(view, 300)
    out = AdaptiveEdgeDrop(0.3).forward(views, keys(views))
    before = edge_set(view)
    edges = [tuple(sorted(e)) for e in zip(view.nid[u].tolist(), view.nid[v].tolist())]
    dropped = np.zeros(len(u))
    for b in range(len(out)):
        after = edge_set(out, b)
        assert after <= before
        dropped += [e not in after for e in edges]
    frequency = dropped / len(out)
    assert frequency[path].min() > frequency[hub].max()
    np.testing.assert_allclose(frequency, probs, atol=0.1)


def test_gca_drop_probabilities_are_capped_at_p_tau():
    (probs,) = AdaptiveEdgeDrop(0.9, p_tau=0.7).probabilities(hub_view())
    assert probs.max() == pytest.approx(0.7) and (probs == 0.7).sum() > 1
    probs = AdaptiveFeatureMask(0.9, p_tau=0.7).probabilities(hub_view())
    assert probs.max() == pytest.approx(0.7)
    (equal,) = AdaptiveEdgeDrop(0.3).probabilities(view_of(nx.cycle_graph(8)))  # all centralities equal
    np.testing.assert_allclose(equal, 0.3)


def test_gca_feature_mask_keeps_the_columns_carried_by_central_nodes():
    view = view_of(nx.path_graph(6))  # 4 valid columns, 4 padded
    probs = AdaptiveFeatureMask(0.3, p_tau=0.7).probabilities(view)[0]
    assert (probs[4:] == 0).all()
    probs = probs[:4]
    weight = np.log1p(np.abs(view.pe[:, :4]).T @ view.in_degrees())
    assert np.array_equal(np.argsort(probs, kind="stable"), np.argsort(-weight, kind="stable"))
    assert probs.mean() == pytest.approx(0.3)
    views = copies(view, 300)
    out = AdaptiveFeatureMask(0.3).forward(views, keys(views))
    masked = np.mean([masked_columns(out, b) for b in range(len(out))], axis=0)
    np.testing.assert_allclose(masked, probs, atol=0.1)


def test_gca_query_and_key_use_their_own_rates():
    step = pair_step("gca")  # edges 0.3 / 0.4, features 0.1 / 0.0
    view = ws_view(40, degree=6, k=32)
    views = copies(view, 60)
    before = edge_set(view)
    q, k = step(views, views, keys(views))
    removed, masked = {"q": [], "k": []}, {"q": [], "k": []}
    for name, out in (("q", q), ("k", k)):
        for b in range(len(out)):
            removed[name].append(1 - len(edge_set(out, b)) / len(before))
            masked[name].extend(masked_columns(out, b))
    assert np.mean(removed["q"]) == pytest.approx(0.3, abs=0.025)
    assert np.mean(removed["k"]) == pytest.approx(0.4, abs=0.025)
    assert 0.05 < np.mean(masked["q"]) < 0.15 and not any(masked["k"])


# --------------------------------------------------------------------------------------------- all four


@pytest.fixture(scope="module")
def sampler() -> ViewSampler:
    g = dgl.to_bidirected(dgl.from_networkx(nx.powerlaw_cluster_graph(120, 3, 0.3, seed=0)))
    return ViewSampler(g, SamplingConfig(rw_hops=24, positional_embedding_size=K, pe_sign="random"))


@pytest.mark.parametrize("name", ["graphcl", "grace", "mvgrl", "gca"])
def test_pipelines_are_functions_of_the_keys_and_never_mutate_inputs(name, sampler):
    pipeline = baseline(name)
    starts = np.arange(0, 120, 10)
    rng = KeyedRandom.for_items(0, np.arange(len(starts)))
    first, again = pipeline(sampler, starts, rng), pipeline(sampler, starts, rng)
    assert views_equal(first[0], again[0]) and views_equal(first[1], again[1])
    np.testing.assert_array_equal(centres(first[0]), starts)
    np.testing.assert_array_equal(centres(first[1]), starts)
    q, k = ws_view(30, seed=0), ws_view(25, seed=1)
    views_q, views_k = concat([q, k]), concat([k, q])
    snaps = snapshot(views_q), snapshot(views_k)
    (step,) = pipeline.steps
    outputs = [step(views_q, views_k, keys(views_q, seed)) for seed in range(6)]
    assert unchanged(views_q, snaps[0]) and unchanged(views_k, snaps[1])
    if name != "mvgrl":  # MVGRL's diffusion is deterministic
        assert any(not views_equal(outputs[0][1], out[1]) for out in outputs[1:])


@pytest.mark.parametrize("transform", view_transforms(), ids=repr)
def test_a_batch_transformed_together_equals_each_view_transformed_alone(transform):
    views = concat([degenerate_views(), ws_view(12), hub_view(), ws_view(30, seed=4)])
    for seed in range(2):
        rng = keys(views, seed)
        together = transform.forward(views, rng)
        for b in range(len(views)):
            row = np.array([b])
            assert views_equal(together.select(row), transform.forward(views.select(row), rng.take(row))), b


def test_transforms_never_mutate_their_input_and_never_crash_on_degenerate_views():
    views = concat([degenerate_views(), ws_view(12), hub_view()])
    snap = snapshot(views)
    for transform in view_transforms():
        for seed in range(3):
            assert_well_formed(transform.forward(views, keys(views, seed)), views)
    assert unchanged(views, snap)
    degenerate = degenerate_views()
    for name in BASELINES:
        (step,) = baseline(name).steps
        out_q, out_k = step(degenerate, degenerate, keys(degenerate))
        assert_well_formed(out_q, degenerate)
        assert_well_formed(out_k, degenerate)


def test_baseline_pipelines_are_one_split_step_without_filter_or_global_embedding():
    for name in BASELINES:
        pipeline = baseline(name)
        assert pipeline.filter is None and not pipeline.needs_global and not pipeline.needs_global_rows
        # InfoGCL chooses both views of a pair together (tests/test_baselines_competitors.py)
        assert len(pipeline.steps) == 1 and (name == "infogcl" or isinstance(pipeline.steps[0], Split))
    assert sorted(BASELINES) == ["byov", "cuco", "gca", "grace", "graphcl", "infogcl", "mvgrl"]
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
        (lambda: F.threshold_targets(np.eye(3), 0.0), "eps"),
        (lambda: F.ppr_matrix(np.array([0]), np.array([1]), 2, 0.0), "alpha"),
        (lambda: make_config("grace", {"augment": {"use_filter": True}}), "grace family.* no augment setting 'use_filter'"),
        (lambda: GraceConfig(drop_edge_q=1.5), "--grace-drop-edge-q"),
        (lambda: MVGRLConfig(alpha=0.0), "--mvgrl-alpha"),
        (lambda: MVGRLConfig(topk=-1), "--mvgrl-topk"),
        (lambda: Config.from_dict({"family": "simclr", "augment": {}}), "unknown augmentation family 'simclr'"),
        (lambda: baseline("mvgrl", sparsify="knn"), "--mvgrl-sparsify"),
    ]
    for make, name in cases:
        with pytest.raises(ValueError, match=name):
            make()
