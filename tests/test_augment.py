"""Properties of the SGCL augmentations (gcc_sgcl.augment): crop, reorder, mask, align, filter, pipeline."""
from __future__ import annotations

import dgl
import networkx as nx
import numpy as np
import pytest
import torch
from scipy.stats import ortho_group

from gcc_sgcl.augment import (
    Align,
    AugmentConfig,
    Compose,
    Identity,
    Mask,
    RandomApply,
    RandomChoice,
    RandomCrop,
    RandomPermute,
    Reorder,
    SpectralCrop,
    ViewFilter,
    build_sgcl_pipeline,
    global_embedding,
    paper_crop,
    paper_random_crop,
    procrustes,
    reorder_permutation,
    view_similarity,
)
from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.crop import PAPER_CROP_TABLE
from gcc_sgcl.sampling.spectral import attach_eigen_features, normalized_adjacency
from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, GLOBAL, NID, PE, SEED

K = 8
NID_OFFSET = 100  # parent ids differ from view-local ids, so a crop that loses them is caught


def make_view(g: dgl.DGLGraph | nx.Graph, k: int = K) -> dgl.DGLGraph:
    """A view of ``g`` as the sampler builds one: eigen features, node 0 the seed, parent ids."""
    if isinstance(g, nx.Graph):
        g = dgl.from_networkx(g)
    view = attach_eigen_features(g, k)
    n = view.num_nodes()
    view.ndata[SEED] = (torch.arange(n) == 0).long()
    view.ndata[NID] = torch.arange(n) + NID_OFFSET
    return view


def grid_view(a: int, b: int, center: tuple[int, int]) -> tuple[dgl.DGLGraph, np.ndarray]:
    """View of the ``a x b`` grid with ``center`` as node 0; also the (row, col) of every node."""
    grid = nx.grid_2d_graph(a, b)
    cells = [center] + sorted(c for c in grid if c != center)
    index = {c: i for i, c in enumerate(cells)}
    graph = nx.Graph()
    graph.add_nodes_from(range(len(cells)))
    graph.add_edges_from((index[u], index[v]) for u, v in grid.edges())
    return make_view(graph), np.array(cells)


def subgraph_view(parent: dgl.DGLGraph, nodes: list[int], emb: np.ndarray, k: int = K) -> dgl.DGLGraph:
    """View induced on parent ``nodes`` (``nodes[0]`` the centre) with the global-embedding rows."""
    view = attach_eigen_features(dgl.node_subgraph(parent, torch.tensor(nodes)), k)
    view.ndata[SEED] = (torch.arange(len(nodes)) == 0).long()
    view.ndata[GLOBAL] = torch.from_numpy(emb[view.ndata[NID].numpy()])
    return view


def snapshot(view: dgl.DGLGraph) -> dict[str, torch.Tensor]:
    src, dst = view.edges()
    return {"_src": src.clone(), "_dst": dst.clone(), **{n: t.clone() for n, t in view.ndata.items()}}


def assert_same(view: dgl.DGLGraph, snap: dict[str, torch.Tensor]) -> None:
    assert snapshot(view).keys() == snap.keys()
    for name, tensor in snapshot(view).items():
        torch.testing.assert_close(tensor, snap[name], equal_nan=True, rtol=0, atol=0)


def views_equal(a: dgl.DGLGraph, b: dgl.DGLGraph) -> bool:
    sa, sb = snapshot(a), snapshot(b)
    return sa.keys() == sb.keys() and all(
        sa[n].shape == sb[n].shape and torch.equal(sa[n].nan_to_num(-9), sb[n].nan_to_num(-9)) for n in sa
    )


def is_rectangle(cells: np.ndarray) -> bool:
    rows, cols = np.unique(cells[:, 0]), np.unique(cells[:, 1])
    contiguous = np.all(np.diff(rows) == 1) and np.all(np.diff(cols) == 1)
    return bool(contiguous and len(cells) == len(rows) * len(cols))


@pytest.fixture(scope="module")
def parent() -> tuple[dgl.DGLGraph, np.ndarray]:
    """A small parent graph and its NetMF global embedding with as many columns as the PE."""
    g = dgl.from_networkx(nx.connected_watts_strogatz_graph(80, 6, 0.2, seed=3))
    return g, global_embedding(g, K, seed=0)


@pytest.fixture(scope="module")
def pair(parent) -> tuple[dgl.DGLGraph, dgl.DGLGraph]:
    """Two overlapping views around node 0 of the parent graph (as two random walks would give)."""
    g, emb = parent
    ring = [int(v) for v in g.successors(0)]
    second = sorted({int(u) for v in ring for u in g.successors(v)} - {0, *ring})
    return (
        subgraph_view(g, [0, *ring, *second[:10]], emb),
        subgraph_view(g, [0, *ring[:4], *second[6:18]], emb),
    )


def random_views() -> list[dgl.DGLGraph]:
    return [
        make_view(nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=s), k)
        for n, s, k in [(30, 0, 8), (40, 1, 16), (12, 2, 32), (25, 3, 8)]
    ]


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
        nx.complete_graph(7),
        nx.star_graph(6),
        nx.relabel_nodes(nx.star_graph(6), {0: 3, 3: 0}),  # centre is a leaf
        nx.cycle_graph(8),
    ]
    views = []
    for i, graph in enumerate(graphs):
        view = make_view(nx.convert_node_labels_to_integers(graph, ordering="sorted"))
        rows = np.random.default_rng(i).normal(size=(view.num_nodes(), K))
        view.ndata[GLOBAL] = torch.from_numpy(rows).float()
        views.append(view)
    return views


def all_transforms() -> list:
    return [
        *[SpectralCrop(box, basis=b) for box, _ in PAPER_CROP_TABLE for b in ("normalized", "combinatorial")],
        *[RandomCrop(box) for box, _ in PAPER_CROP_TABLE],
        SpectralCrop((0.2, 0.8, 0.2, 0.8), recompute_pe=False),
        SpectralCrop((0.2, 0.8, 0.2, 0.8), k=4),
        Reorder(r_max=10),
        RandomPermute(),
        Mask(max_masked=8),
    ]


# ----------------------------------------------------------------------------------------------- crop


def test_grid_lambda2_lambda3_eigenvectors_follow_the_two_axes():
    view, cells = grid_view(9, 6, center=(4, 2))
    x, y = F.combinatorial_coordinates(view)
    gx, gy = np.zeros((9, 6)), np.zeros((9, 6))
    gx[cells[:, 0], cells[:, 1]], gy[cells[:, 0], cells[:, 1]] = x, y
    # lambda_2: monotone along the long axis, constant along the short one; lambda_3 the other way round
    assert np.all(np.diff(gx[:, 0]) > 0) or np.all(np.diff(gx[:, 0]) < 0)
    assert np.allclose(gx, gx[:, :1], atol=1e-10)
    assert np.all(np.diff(gy[0]) > 0) or np.all(np.diff(gy[0]) < 0)
    assert np.allclose(gy, gy[:1], atol=1e-10)


def test_normalized_fiedler_vector_cuts_the_grid_across_its_long_axis():
    # The normalised Laplacian's eigenvectors (EIGVEC) are damped on the border (not constant along the
    # short axis), but their sign still splits the grid into a top and a bottom half.
    view, cells = grid_view(9, 6, center=(4, 2))
    x, _ = F.normalized_coordinates(view)
    top, bottom = np.sign(x[cells[:, 0] < 4]), np.sign(x[cells[:, 0] > 4])
    assert abs(top.sum()) == top.size and abs(bottom.sum()) == bottom.size and top[0] == -bottom[0]


def test_path_fiedler_vector_is_monotone():
    x, _ = F.combinatorial_coordinates(make_view(nx.path_graph(12)))
    assert np.all(np.diff(x) > 0) or np.all(np.diff(x) < 0)


@pytest.mark.parametrize("box", [box for box, _ in PAPER_CROP_TABLE])
def test_spectral_crop_on_grid_keeps_a_rectangle(box):
    view, cells = grid_view(9, 6, center=(4, 2))
    out = SpectralCrop(box, basis="combinatorial")(view, np.random.default_rng(0))
    kept = cells[out.ndata[NID].numpy() - NID_OFFSET]
    assert is_rectangle(kept)
    assert 3 <= len(kept) < len(cells)
    if box == (0.2, 0.8, 0.2, 0.8):  # an inner crop: trims both axes on both sides
        assert set(kept[:, 0]) <= set(range(1, 8)) and set(kept[:, 1]) <= set(range(1, 5))


def test_spectral_crop_on_path_keeps_a_segment():
    view = make_view(nx.path_graph(20))
    nodes = SpectralCrop((0.2, 0.8, 0.0, 1.0), basis="combinatorial")(view, np.random.default_rng(0))
    kept = np.sort(nodes.ndata[NID].numpy() - NID_OFFSET)
    assert np.all(np.diff(kept[1:]) == 1) and len(kept) == 13  # the centre (an end) plus 12 middle nodes


@pytest.mark.parametrize("kind", ["spectral", "random"])
def test_crop_never_drops_the_seed(kind):
    crops = [
        *paper_crop(kind=kind).transforms[:-1],
        *paper_crop(kind=kind, basis="combinatorial").transforms[:-1],
    ]
    for view in random_views() + degenerate_views():
        for crop in crops:
            for seed in range(3):
                out = crop(view, np.random.default_rng(seed))
                assert out.ndata[SEED][0] == 1 and out.ndata[SEED].sum() == 1
                assert out.ndata[NID][0] == view.ndata[NID][0]


def test_crop_keeps_node_order_and_parent_ids_and_recomputes_pe():
    view = random_views()[0]
    out = SpectralCrop((0.1, 0.9, 0.1, 0.9))(view, np.random.default_rng(0))
    nid = out.ndata[NID]
    assert out.num_nodes() < view.num_nodes() and torch.all(nid[1:] > nid[:-1])
    local = (nid - NID_OFFSET).numpy()
    fresh = attach_eigen_features(dgl.node_subgraph(view, torch.from_numpy(local)), K)
    for name in (PE, EIGVEC, EIGVAL):
        torch.testing.assert_close(out.ndata[name], fresh.ndata[name], equal_nan=True)
    assert out.num_edges() == fresh.num_edges()


def test_crop_without_recompute_keeps_the_old_pe_rows():
    view = random_views()[0]
    out = SpectralCrop((0.1, 0.9, 0.1, 0.9), recompute_pe=False)(view, np.random.default_rng(0))
    rows = out.ndata[NID] - NID_OFFSET
    assert out.num_nodes() < view.num_nodes()
    for name in (PE, EIGVEC, EIGVAL):
        torch.testing.assert_close(out.ndata[name], view.ndata[name][rows], equal_nan=True)


def test_random_crop_drops_as_many_nodes_as_the_spectral_crop():
    kept_sets = set()
    for view in random_views():
        for box, _ in PAPER_CROP_TABLE:
            spectral = SpectralCrop(box)(view, np.random.default_rng(0))
            for seed in range(4):
                random = RandomCrop(box)(view, np.random.default_rng(seed))
                assert random.num_nodes() == spectral.num_nodes()
                kept_sets.add(tuple(random.ndata[NID].tolist()))
    assert len(kept_sets) > 4 * len(PAPER_CROP_TABLE)  # the random crop does vary with the seed


def test_crop_returns_the_view_when_it_cannot_crop():
    tiny = make_view(nx.path_graph(4))  # 2 valid eigen columns
    assert SpectralCrop((0.2, 0.8, 0.2, 0.8))(tiny, np.random.default_rng(0)) is tiny
    view = random_views()[0]
    for crop in (SpectralCrop((0.0, 0.0, 0.0, 0.0)), RandomCrop((0.0, 0.0, 0.0, 0.0))):  # < 3 nodes left
        assert crop(view, np.random.default_rng(0)) is view
    assert SpectralCrop((0.0, 1.0, 0.0, 1.0))(view, np.random.default_rng(0)) is view  # nothing dropped


def test_paper_crop_table_matches_the_appendix():
    for builder in (paper_crop, paper_random_crop):
        choice = builder()
        np.testing.assert_allclose(choice.probs, [0.1, 0.1, 0.05, 0.05, 0.7])
        assert [t.box for t in choice.transforms[:-1]] == [box for box, _ in PAPER_CROP_TABLE]
        assert isinstance(choice.transforms[-1], Identity)
    assert all(isinstance(t, RandomCrop) for t in paper_random_crop().transforms[:-1])


# -------------------------------------------------------------------------------------- reorder / mask


def test_reorder_with_r1_is_the_identity_order():
    for view in random_views() + degenerate_views():
        eigvals = F.view_eigvals(view)
        np.testing.assert_array_equal(reorder_permutation(eigvals, 1), np.arange(eigvals.size))
        out = Reorder(r_max=1)(view, np.random.default_rng(0))
        torch.testing.assert_close(out.ndata[PE], view.ndata[PE], rtol=0, atol=0)


def test_order_keeping_reorder_and_empty_mask_return_the_view_itself():
    view = random_views()[0]
    assert Reorder(r_max=1)(view, np.random.default_rng(0)) is view
    assert Mask(max_masked=0)(view, np.random.default_rng(0)) is view
    assert Mask(max_masked=8)(view, np.random.default_rng(1)) is not view


def test_reorder_permutation_is_the_argsort_of_the_diffusion_key():
    rng = np.random.default_rng(0)
    for r in range(2, 11):
        eigvals = np.concatenate([np.sort(rng.uniform(0, 2, size=12)), [np.nan] * 4])
        key = sum((1 - eigvals[:12]) ** j for j in range(1, r + 1))
        expected = np.concatenate([np.argsort(-key, kind="stable"), np.arange(12, 16)])
        np.testing.assert_array_equal(reorder_permutation(eigvals, r), expected)


def test_odd_r_keeps_the_order_of_the_normalized_adjacency_eigenvalues():
    for n, seed in [(10, 0), (14, 1), (18, 2)]:  # n <= k + 2: the PE holds the whole spectrum but 2
        view = make_view(nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=seed), k=16)
        mu = np.sort(np.linalg.eigvalsh(normalized_adjacency(view).toarray()))[::-1]
        eigvals = F.view_eigvals(view)
        valid = int((~np.isnan(eigvals)).sum())
        np.testing.assert_allclose(1 - eigvals[:valid], mu[:valid], atol=1e-5)
        assert (mu[:valid] < 0).any()  # the orders could differ if the key were not monotone
        for r in (1, 3, 5, 7, 9):
            np.testing.assert_array_equal(reorder_permutation(eigvals, r), np.arange(eigvals.size))


def test_even_r_can_change_the_order():
    eigvals = F.view_eigvals(make_view(nx.path_graph(10), k=8))  # mu = cos(pi j / 9), j = 0..7
    perm = reorder_permutation(eigvals, 2)
    assert not np.array_equal(perm, np.arange(8))
    assert list(perm[5:]) == [5, 7, 6]  # mu = -0.17, -0.77, -0.5 by x + x^2


def test_reorder_moves_pe_eigvec_and_eigval_columns_together():
    view = random_views()[2]  # 12 nodes, k = 32: 10 valid columns, 22 padded
    for seed in range(5):
        r = int(np.random.default_rng(seed).integers(1, 11))
        perm = reorder_permutation(F.view_eigvals(view), r)
        out = Reorder(r_max=10)(view, np.random.default_rng(seed))
        for name in (PE, EIGVEC, EIGVAL):
            torch.testing.assert_close(out.ndata[name], view.ndata[name][:, perm], equal_nan=True)
        assert torch.isnan(out.ndata[EIGVAL][0, 10:]).all()


def test_random_permute_moves_only_valid_columns():
    view = random_views()[2]  # 10 valid columns, 22 padded
    perms = set()
    for seed in range(5):
        perm = np.concatenate([np.random.default_rng(seed).permutation(10), np.arange(10, 32)])
        out = RandomPermute()(view, np.random.default_rng(seed))
        for name in (PE, EIGVEC, EIGVAL):
            torch.testing.assert_close(out.ndata[name], view.ndata[name][:, perm], equal_nan=True)
        perms.add(tuple(perm))
    assert len(perms) > 1


def test_mask_zeros_exactly_the_columns_of_the_z_largest_eigenvalues():
    for view in (random_views()[0], make_view(nx.cycle_graph(5))):  # 8 and 3 valid columns
        eigvals = F.view_eigvals(view)
        valid = int((~np.isnan(eigvals)).sum())
        for seed in range(12):
            z = min(int(np.random.default_rng(seed).integers(0, 9)), valid)
            out = Mask(max_masked=8)(view, np.random.default_rng(seed))
            newly_zero = (out.ndata[PE] == 0).all(dim=0) & (view.ndata[PE] != 0).any(dim=0)
            zeroed = np.flatnonzero(newly_zero.numpy())
            largest = np.argsort(-np.nan_to_num(eigvals, nan=-np.inf), kind="stable")[:z]
            assert sorted(zeroed) == sorted(largest)
            kept = np.setdiff1d(np.arange(eigvals.size), zeroed)
            torch.testing.assert_close(out.ndata[PE][:, kept], view.ndata[PE][:, kept])


# --------------------------------------------------------------------------------------------- align


def test_procrustes_q_is_orthogonal():
    rng = np.random.default_rng(0)
    for shape in [(10, 4), (5, 8), (30, 8)]:
        q = procrustes(rng.normal(size=shape), rng.normal(size=shape))
        np.testing.assert_allclose(q.T @ q, np.eye(shape[1]), atol=1e-10)


def test_procrustes_minimises_the_distance_over_orthogonal_matrices():
    rng = np.random.default_rng(1)
    for _ in range(3):
        x, n = rng.normal(size=(12, 4)), rng.normal(size=(12, 4))
        best = np.linalg.norm(x @ procrustes(x, n) - n)
        others = ortho_group.rvs(dim=4, size=3000, random_state=2)
        assert best <= np.linalg.norm(x @ others - n, axis=(1, 2)).min() + 1e-12


def test_align_rotates_both_views_onto_their_global_rows_with_one_draw(pair):
    q, k = pair
    decisions = set()
    for seed in range(10):
        aligned = np.random.default_rng(seed).random() < 0.5
        out_q, out_k = Align(p=0.5)(q, k, np.random.default_rng(seed))
        decisions.add(aligned)
        for view, out in ((q, out_q), (k, out_k)):
            if not aligned:
                assert out is view
                continue
            x, n = view.ndata[PE].double().numpy(), view.ndata[GLOBAL].double().numpy()
            np.testing.assert_allclose(out.ndata[PE].numpy(), x @ procrustes(x, n), atol=1e-5)
            assert np.linalg.norm(out.ndata[PE].numpy() - n) < np.linalg.norm(x - n)
            torch.testing.assert_close(out.ndata[PE].norm(dim=1), view.ndata[PE].norm(dim=1))
    assert decisions == {True, False}


def test_align_needs_global_rows_of_matching_size(pair):
    q, _ = pair
    wrong = q.clone()
    wrong.ndata[GLOBAL] = torch.zeros(q.num_nodes(), K + 1)
    with pytest.raises(ValueError, match="d=9 and k=8"):
        Align(p=1.0)(wrong, q, np.random.default_rng(0))
    missing = q.clone()
    missing.ndata.pop(GLOBAL)
    with pytest.raises(ValueError, match="global embedding rows"):
        Align(p=1.0)(missing, q, np.random.default_rng(0))


# -------------------------------------------------------------------------------------------- filter


def test_view_similarity_is_the_cosine_of_the_summed_rows():
    a, b = np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[1.0, 1.0], [2.0, 3.0]])
    assert view_similarity(a, b) == 0.6
    assert view_similarity(np.zeros((2, 2)), b) == 0.0


def test_filter_accepts_and_rejects_exactly_at_the_threshold():
    a, b = np.array([[1.0, 0.0]]), np.array([[3.0, 4.0]])  # cosine 0.6
    assert 1.0 - 0.4 == view_similarity(a, b)
    assert not ViewFilter("similar", c=0.4).accept(a, b)  # cos > 1 - c is strict
    assert ViewFilter("similar", c=0.41).accept(a, b)
    assert not ViewFilter("similar", c=0.39).accept(a, b)
    assert not ViewFilter("diverse", c=0.4).accept(a, b)  # cos < 1 - c is strict
    assert ViewFilter("diverse", c=0.39).accept(a, b)
    assert not ViewFilter("diverse", c=0.41).accept(a, b)


class Draws:
    """``draw()`` returning the given candidate pairs in turn, counting the calls."""

    def __init__(self, pairs):
        self.pairs, self.calls = pairs, 0

    def __call__(self):
        self.calls += 1
        return self.pairs[min(self.calls, len(self.pairs)) - 1]


EMB = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1]])
DISSIMILAR, SIMILAR = (np.array([0]), np.array([1])), (np.array([0]), np.array([2]))


def test_filter_stops_after_t_max_tries():
    draw = Draws([DISSIMILAR] * 10)
    tries = ViewFilter("similar", c=0.3, t_max=4, p=1.0).select(draw, EMB, np.random.default_rng(0))[2]
    assert draw.calls == tries == 4
    draw = Draws([DISSIMILAR] * 3 + [SIMILAR, DISSIMILAR])
    assert ViewFilter("similar", c=0.3, t_max=10, p=1.0).select(draw, EMB, np.random.default_rng(0))[2] == 4
    assert draw.calls == 4
    draw = Draws([SIMILAR] * 2 + [DISSIMILAR])
    assert ViewFilter("diverse", c=0.3, t_max=10, p=1.0).select(draw, EMB, np.random.default_rng(0))[2] == 3


def test_filter_returns_the_last_candidate_when_none_passes():
    pairs = [DISSIMILAR, DISSIMILAR[::-1], (np.array([0, 0]), np.array([1]))]
    filt = ViewFilter("similar", t_max=3, p=1.0)
    nodes_q, nodes_k, tries = filt.select(Draws(pairs), EMB, np.random.default_rng(0))
    assert tries == 3 and nodes_q.tolist() == [0, 0] and nodes_k.tolist() == [1]


def test_filter_skipped_with_probability_1_minus_p():
    draw = Draws([DISSIMILAR] * 10)
    assert ViewFilter("similar", t_max=5, p=0.0).select(draw, EMB, np.random.default_rng(0))[2] == 1
    filt = ViewFilter(t_max=5, p=0.5)
    tries = [filt.select(Draws([DISSIMILAR] * 10), EMB, np.random.default_rng(s))[2] for s in range(20)]
    assert set(tries) == {1, 5}


# ------------------------------------------------------------------------------------------- pipeline


def test_pipeline_is_deterministic_under_a_seed_and_varies_across_seeds(pair):
    q, k = pair
    pipeline = build_sgcl_pipeline(AugmentConfig(p_align=0.5))
    outputs = []
    for seed in range(8):
        first = pipeline(q, k, np.random.default_rng(seed))
        again = pipeline(q, k, np.random.default_rng(seed))
        assert views_equal(first[0], again[0]) and views_equal(first[1], again[1])
        outputs.append(first)
    assert any(not views_equal(outputs[0][0], out[0]) for out in outputs[1:])


CONTROLS = AugmentConfig(
    crop_kind="random", permute_kind="random", recompute_pe=False, crop_basis="combinatorial"
)


@pytest.mark.parametrize("cfg", [AugmentConfig(), CONTROLS])
def test_pipeline_never_mutates_its_inputs(pair, cfg):
    q, k = pair
    snaps = snapshot(q), snapshot(k)
    pipeline = build_sgcl_pipeline(cfg)
    for seed in range(30):
        pipeline(q, k, np.random.default_rng(seed))
    assert_same(q, snaps[0])
    assert_same(k, snaps[1])


def test_transforms_never_mutate_their_input(pair):
    q, k = pair
    for view in (q, *random_views()):
        snap = snapshot(view)
        for transform in all_transforms():
            for seed in range(3):
                transform(view, np.random.default_rng(seed))
        assert_same(view, snap)
    snaps = snapshot(q), snapshot(k)
    Align(p=1.0)(q, k, np.random.default_rng(0))
    assert_same(q, snaps[0])
    assert_same(k, snaps[1])


def test_degenerate_views_never_crash():
    pipelines = [build_sgcl_pipeline(AugmentConfig(p_align=1.0)), build_sgcl_pipeline(CONTROLS)]
    views = degenerate_views()
    for view in views:
        for transform in all_transforms():
            for seed in range(3):
                out = transform(view, np.random.default_rng(seed))
                assert out.ndata[SEED][0] == 1 and not torch.isnan(out.ndata[PE]).any()
    for q in views:
        for k in views:
            for pipeline in pipelines:
                out_q, out_k = pipeline(q, k, np.random.default_rng(q.num_nodes()))
                assert not torch.isnan(out_q.ndata[PE]).any() and not torch.isnan(out_k.ndata[PE]).any()


def test_config_flags_select_the_stages():
    full = build_sgcl_pipeline(AugmentConfig())
    assert full.filter is not None and full.crop is not None and full.align is not None and full.needs_global
    np.testing.assert_allclose(full.perturb.probs, [0.25, 0.25, 0.5])
    assert AugmentConfig().p_crop == pytest.approx(0.3)
    crop_only = build_sgcl_pipeline(AugmentConfig.only("crop"))
    assert (crop_only.filter, crop_only.align, crop_only.perturb) == (None, None, None)
    assert not crop_only.needs_global
    reorder_only = build_sgcl_pipeline(AugmentConfig.only("reorder", permute_kind="random"))
    assert isinstance(reorder_only.perturb.transforms[0], RandomPermute)
    filter_only = build_sgcl_pipeline(AugmentConfig.only("filter"))
    assert filter_only.needs_global and not filter_only.needs_global_rows  # the filter reads E_t itself
    assert full.needs_global_rows and not crop_only.needs_global_rows


def test_bad_arguments_are_rejected_naming_the_parameter():
    cases = [
        (lambda: SpectralCrop((0.8, 0.2, 0.0, 1.0)), "box"),
        (lambda: SpectralCrop((0.2, 0.8, 0.2, 0.8), basis="x"), "crop basis"),
        (lambda: RandomCrop((0.2, 0.8, 0.2, 0.8), k=0), "k"),
        (lambda: Reorder(0), "r_max"),
        (lambda: Mask(-1), "max_masked"),
        (lambda: Align(1.5), "p"),
        (lambda: ViewFilter("odd"), "mode"),
        (lambda: ViewFilter(c=2.0), "c"),
        (lambda: ViewFilter(t_max=0), "t_max"),
        (lambda: RandomApply(Identity(), p=-0.1), "p"),
        (lambda: RandomChoice([Identity()], weights=[1.0, 2.0]), "weights"),
        (lambda: AugmentConfig(p_mask=0.6, p_reorder=0.6), "p_mask"),
        (lambda: AugmentConfig.only("cropping"), "stages"),
        (lambda: build_sgcl_pipeline(AugmentConfig(crop_kind="fancy")), "crop_kind"),
        (lambda: build_sgcl_pipeline(AugmentConfig(permute_kind="fancy")), "permute_kind"),
        (lambda: paper_crop(table=[((0.2, 0.8, 0.2, 0.8), 0.9), ((0.1, 0.9, 0.1, 0.9), 0.2)]), "table"),
    ]
    for make, name in cases:
        with pytest.raises(ValueError, match=name):
            make()


def test_pipeline_prints_itself():
    text = repr(build_sgcl_pipeline(AugmentConfig()))
    for part in ("ViewFilter(mode='similar'", "SpectralCrop(box=(0.2, 0.8, 0.2, 0.8)", "Align(p=0.5)",
                 "Mask(max_masked=8)", "Reorder(r_max=10)", "# p=0.7", "# perturb"):
        assert part in text
    assert repr(Compose([Identity(), RandomApply(Mask(2), p=0.5)])) == (
        "Compose(\n    Identity()\n    RandomApply(Mask(max_masked=2), p=0.5)\n)"
    )
