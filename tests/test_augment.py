"""Properties of the SGCL augmentations (gcc_sgcl.augment): crop, reorder, mask, align, filter, pipeline.

Views are :class:`ViewBatch` es built by the one view builder (``build_views``); random numbers come from
:class:`KeyedRandom` rows, so every batched transform is also checked against each view transformed alone.
"""
from __future__ import annotations

import dgl
import networkx as nx
import numpy as np
import pytest
from scipy.stats import ortho_group

from gcc_sgcl.augment import (
    Align,
    Both,
    Compose,
    Identity,
    Mask,
    PairPipeline,
    RandomChoice,
    RandomCrop,
    RandomPermute,
    Reorder,
    SpectralCrop,
    Split,
    ViewFilter,
    build_pair_pipeline,
    global_embedding,
    paper_crop,
)
from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.crop import MIN_CROP_NODES
from gcc_sgcl.config import PAPER_CROP_TABLE, AugmentConfig, SamplingConfig
from gcc_sgcl.sampling.batch import NodeSets, ViewBatch, concat
from gcc_sgcl.sampling.dataset import ViewSampler
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.spectral import sparse_normalized_adjacency
from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, GLOBAL, NID, PE, SEED
from gcc_sgcl.sampling.induced import GraphIndex, build_views

from viewcheck import K, NID_OFFSET, centres, degenerate_views, keys, same_bits, snapshot, unchanged, view_of, views_equal

BOXES = [box for box, _ in PAPER_CROP_TABLE]


# ------------------------------------------------------------------------------------------------ views


def grid_view(a: int, b: int, center: tuple[int, int]) -> tuple[ViewBatch, np.ndarray]:
    """View of the ``a x b`` grid centred on ``center``; also the (row, col) of every parent id."""
    grid = nx.grid_2d_graph(a, b)
    cells = np.array(sorted(grid))
    first = int(np.flatnonzero((cells == center).all(axis=1))[0])
    g = dgl.from_networkx(nx.convert_node_labels_to_integers(grid, ordering="sorted"))
    nodes = np.concatenate([[first], np.delete(np.arange(len(cells)), first)])
    return build_views(GraphIndex.of(g), NodeSets(np.array([len(cells)]), nodes), K), cells


def random_views(k: int = K) -> ViewBatch:
    return concat([view_of(nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=s), k)
                   for n, s in [(30, 0), (40, 1), (12, 2), (25, 3)]])


def with_global_rows(views: ViewBatch) -> ViewBatch:
    """``views`` with random global-embedding rows as wide as their PE (what alignment reads)."""
    rows = np.random.default_rng(0).normal(size=(int(views.num_nodes.sum()), K)).astype(np.float32)
    return views.replace(global_rows=rows)


def is_rectangle(cells: np.ndarray) -> bool:
    rows, cols = np.unique(cells[:, 0]), np.unique(cells[:, 1])
    contiguous = np.all(np.diff(rows) == 1) and np.all(np.diff(cols) == 1)
    return bool(contiguous and len(cells) == len(rows) * len(cols))


def assert_batched_equals_alone(transform, views: ViewBatch, seed: int = 0) -> None:
    """Transforming the batch == transforming each view alone with its own key row, bit for bit."""
    rng = keys(views, seed)
    together = transform.forward(views, rng)
    assert len(together) == len(views)
    for b in range(len(views)):
        alone = transform.forward(views.select([b]), rng.take(np.array([b])))
        assert views_equal(together.select([b]), alone), (transform, b)


@pytest.fixture(scope="module")
def parent() -> tuple[dgl.DGLGraph, np.ndarray]:
    """A small parent graph and its NetMF global embedding with as many columns as the PE."""
    g = dgl.from_networkx(nx.connected_watts_strogatz_graph(80, 6, 0.2, seed=3))
    return g, global_embedding(g, K, seed=0)


def neighbourhood_views(g: dgl.DGLGraph, emb: np.ndarray, centre_ids, rings: slice, seconds: slice) -> ViewBatch:
    """One view per centre: the centre, some of its neighbours and of their neighbours, with global rows."""
    sets = []
    for c in centre_ids:
        ring = sorted({int(v) for v in g.successors(c)})
        second = sorted({int(u) for v in ring for u in g.successors(v)} - {c, *ring})
        sets.append(np.array([c, *ring[rings], *second[seconds]]))
    views = build_views(GraphIndex.of(g), NodeSets(np.array([len(s) for s in sets]), np.concatenate(sets)), K)
    return views.replace(global_rows=emb[views.nid])


@pytest.fixture(scope="module")
def pair(parent) -> tuple[ViewBatch, ViewBatch]:
    """Four query/key pairs of overlapping views around four centres (as two random walks would give)."""
    g, emb = parent
    centre_ids = [0, 17, 42, 63]
    return (neighbourhood_views(g, emb, centre_ids, slice(None), slice(0, 10)),
            neighbourhood_views(g, emb, centre_ids, slice(0, 4), slice(6, 18)))


def row_positions(before: ViewBatch, after: ViewBatch) -> np.ndarray:
    """Row of ``before`` (one view) holding each node of ``after`` (one view, a subset)."""
    where = {int(v): i for i, v in enumerate(before.nid)}
    return np.array([where[int(v)] for v in after.nid])


@pytest.fixture(scope="module")
def sampler(parent) -> ViewSampler:
    g, emb = parent
    cfg = SamplingConfig(rw_hops=24, positional_embedding_size=K, pe_sign="random")
    return ViewSampler(g, cfg, [emb])


def all_transforms() -> list:
    return [
        *[SpectralCrop(box, basis=b) for box in BOXES for b in ("normalized", "combinatorial")],
        *[RandomCrop(box) for box in BOXES],
        SpectralCrop((0.2, 0.8, 0.2, 0.8), recompute_pe=False),
        paper_crop(),
        Reorder(r_max=10),
        RandomPermute(),
        Mask(max_masked=8),
        Compose([RandomChoice([Mask(2), Identity()]), RandomChoice([Reorder(3), Identity()])]),
    ]


# ----------------------------------------------------------------------------------------------- crop


def test_grid_lambda2_lambda3_eigenvectors_follow_the_two_axes():
    view, cells = grid_view(9, 6, center=(4, 2))
    x, y = F.combinatorial_coordinates(view)
    gx, gy = np.zeros((9, 6)), np.zeros((9, 6))
    at = cells[view.nid]
    gx[at[:, 0], at[:, 1]], gy[at[:, 0], at[:, 1]] = x, y
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
    at = cells[view.nid]
    top, bottom = np.sign(x[at[:, 0] < 4]), np.sign(x[at[:, 0] > 4])
    assert abs(top.sum()) == top.size and abs(bottom.sum()) == bottom.size and top[0] == -bottom[0]


def test_path_fiedler_vector_is_monotone():
    x, _ = F.combinatorial_coordinates(view_of(nx.path_graph(12)))
    assert np.all(np.diff(x) > 0) or np.all(np.diff(x) < 0)


@pytest.mark.parametrize("box", BOXES)
def test_spectral_crop_on_grid_keeps_a_rectangle(box):
    # On a grid the combinatorial basis is the two axes, so the crop is an image crop (plus the centre when it
    # lies outside the box); views of a batch are cropped independently.
    centers = [(4, 2), (0, 0), (8, 5), (3, 4)]
    built = [grid_view(9, 6, center=c) for c in centers]
    cells = built[0][1]
    views = concat([v for v, _ in built])
    out = SpectralCrop(box, basis="combinatorial").forward(views, keys(views))
    for b, center in enumerate(centers):
        part = out.select([b])
        kept = cells[part.nid]
        assert tuple(cells[centres(part)[0]]) == center and 3 <= len(kept) < len(cells)
        assert is_rectangle(kept) or is_rectangle(kept[(kept != center).any(axis=1)])
    inner = cells[out.select([0]).nid]  # centre (4, 2) lies inside every table box
    assert is_rectangle(inner)
    if box == (0.2, 0.8, 0.2, 0.8):  # an inner crop: trims both axes on both sides
        assert set(inner[:, 0]) <= set(range(1, 8)) and set(inner[:, 1]) <= set(range(1, 5))


def test_spectral_crop_on_path_keeps_a_segment():
    view = view_of(nx.path_graph(20))
    out = SpectralCrop((0.2, 0.8, 0.0, 1.0), basis="combinatorial").forward(view, keys(view))
    kept = np.sort(out.nid - NID_OFFSET)
    assert np.all(np.diff(kept[1:]) == 1) and len(kept) == 13  # the centre (an end) plus 12 middle nodes


@pytest.mark.parametrize("kind", ["spectral", "random"])
def test_crop_never_drops_the_centre(kind):
    crops = [
        *paper_crop(kind=kind).transforms[:-1],
        *paper_crop(kind=kind, basis="combinatorial").transforms[:-1],
    ]
    views = concat([random_views(), degenerate_views()])
    for crop in crops:
        for seed in range(3):
            out = crop.forward(views, keys(views, seed))
            assert (out.seed_pos < out.num_nodes).all()
            np.testing.assert_array_equal(centres(out), centres(views))
            assert (out.to_dgl((SEED,)).ndata[SEED].sum() == len(views)).item()


def test_crop_equals_the_view_built_on_the_kept_nodes(parent):
    # Order and parent ids are kept, edges are the induced ones and the eigen-features are recomputed:
    # exactly the view the builder makes of the kept node set.
    g, emb = parent
    views = neighbourhood_views(g, emb, [0, 17, 42], slice(None), slice(0, 18)).replace(global_rows=None)
    out = SpectralCrop((0.1, 0.9, 0.1, 0.9)).forward(views, keys(views))
    assert (out.num_nodes < views.num_nodes).all()
    for b in range(len(views)):
        part = out.select([b])
        assert (np.diff(row_positions(views.select([b]), part)) > 0).all()  # kept nodes keep their order
        fresh = build_views(GraphIndex.of(g), NodeSets(part.num_nodes, part.nid), K, seed_pos=part.seed_pos)
        assert views_equal(part, fresh)


def test_crop_without_recompute_keeps_the_old_eigen_rows(parent):
    g, emb = parent
    views = neighbourhood_views(g, emb, [0, 17, 42], slice(None), slice(0, 18))
    out = SpectralCrop((0.1, 0.9, 0.1, 0.9), recompute_pe=False).forward(views, keys(views))
    assert (out.num_nodes < views.num_nodes).all()
    for b in range(len(views)):
        before, after = views.select([b]), out.select([b])
        rows = row_positions(before, after)
        for name in ("pe", "eigvec", "global_rows"):
            assert same_bits(getattr(after, name), getattr(before, name)[rows])
        assert same_bits(after.eigval, before.eigval)


def test_random_crop_drops_as_many_nodes_as_the_spectral_crop():
    views = random_views()
    kept_sets = set()
    for box in BOXES:
        spectral = SpectralCrop(box).forward(views, keys(views))
        for seed in range(4):
            random = RandomCrop(box).forward(views, keys(views, seed))
            np.testing.assert_array_equal(random.num_nodes, spectral.num_nodes)
            np.testing.assert_array_equal(centres(random), centres(views))
            kept_sets.add(tuple(random.nid.tolist()))
    assert len(kept_sets) > 4 * len(BOXES) - 2  # the random crop does vary with the keys


def test_crop_leaves_a_view_unchanged_when_it_cannot_crop():
    tiny = view_of(nx.path_graph(4))  # 2 valid eigen columns
    views = concat([tiny, random_views()])
    rng = keys(views)
    for crop in (SpectralCrop((0.0, 0.0, 0.0, 0.0)), RandomCrop((0.0, 0.0, 0.0, 0.0)),  # < 3 nodes left
                 SpectralCrop((0.0, 1.0, 0.0, 1.0))):  # nothing dropped
        assert views_equal(crop.forward(views, rng), views)
    out = SpectralCrop((0.2, 0.8, 0.2, 0.8)).forward(views, rng)  # the others in the batch are cropped
    assert views_equal(out.select([0]), tiny)
    assert (out.num_nodes[[1, 2]] < views.num_nodes[[1, 2]]).all()


def test_a_box_leaving_exactly_min_crop_nodes_crops_and_one_leaving_fewer_does_not():
    view = view_of(nx.path_graph(10))  # the centre is an end; the Fiedler vector ranks the path in order
    three = SpectralCrop((4 / 9, 5 / 9, 0.0, 1.0), basis="combinatorial").forward(view, keys(view))
    assert three.num_nodes.tolist() == [MIN_CROP_NODES]  # the centre and the path's two middle nodes
    two = SpectralCrop((4 / 9, 4 / 9, 0.0, 1.0), basis="combinatorial").forward(view, keys(view))
    assert views_equal(two, view)


@pytest.mark.parametrize("box", [(0.8, 0.2, 0.0, 1.0), (0.0, 1.0, 0.8, 0.2)])
def test_a_box_whose_minimum_exceeds_its_maximum_on_either_axis_is_refused(box):
    with pytest.raises(ValueError, match="min <= max"):
        SpectralCrop(box)


def test_paper_crop_table_matches_the_appendix():
    for kind, klass in (("spectral", SpectralCrop), ("random", RandomCrop)):
        choice = paper_crop(kind=kind)
        np.testing.assert_allclose(choice.probs, [0.1, 0.1, 0.05, 0.05, 0.7])
        assert [t.box for t in choice.transforms[:-1]] == BOXES
        assert all(type(t) is klass for t in choice.transforms[:-1])
        assert isinstance(choice.transforms[-1], Identity)


def test_paper_crop_crops_each_view_of_a_batch_with_probability_p_crop():
    views = concat([view_of(nx.connected_watts_strogatz_graph(30, 4, 0.3, seed=0))] * 300)
    out = paper_crop().forward(views, keys(views))
    cropped = out.num_nodes < views.num_nodes  # every table box crops this view
    assert cropped.mean() == pytest.approx(0.3, abs=0.06)


@pytest.mark.parametrize("crop", [
    SpectralCrop((0.1, 0.9, 0.1, 0.9)),
    SpectralCrop((0.2, 0.8, 0.2, 0.8), basis="combinatorial"),
    RandomCrop((0.1, 0.9, 0.1, 0.9)),
    paper_crop(),
], ids=repr)
def test_crop_of_a_batch_equals_the_crop_of_each_view_alone(crop):
    views = concat([random_views(), degenerate_views()])
    assert_batched_equals_alone(crop, views)
    signed = views.replace(pe_sign="random")  # recomputed signs drawn per view
    assert_batched_equals_alone(crop, signed, seed=1)


# -------------------------------------------------------------------------------------- reorder / mask


def test_reorder_with_r1_and_mask_of_zero_columns_keep_every_array():
    views = concat([random_views(), degenerate_views()])
    np.testing.assert_array_equal(F.reorder_permutations(views.eigval, np.ones(len(views), dtype=np.int64)),
                                  np.tile(np.arange(K), (len(views), 1)))
    for seed in range(3):
        assert views_equal(Reorder(r_max=1).forward(views, keys(views, seed)), views)
        assert views_equal(Mask(max_masked=0).forward(views, keys(views, seed)), views)
    assert not views_equal(Mask(max_masked=8).forward(views, keys(views)), views)


def test_reorder_permutation_is_the_argsort_of_the_diffusion_key():
    rng = np.random.default_rng(0)
    r = np.arange(2, 11)
    eigval = np.concatenate([np.sort(rng.uniform(0, 2, size=(len(r), 12)), axis=1),
                             np.full((len(r), 4), np.nan)], axis=1)
    perms = F.reorder_permutations(eigval, r)
    for row, r_b in enumerate(r):
        key = sum((1 - eigval[row, :12]) ** j for j in range(1, r_b + 1))
        expected = np.concatenate([np.argsort(-key, kind="stable"), np.arange(12, 16)])
        np.testing.assert_array_equal(perms[row], expected)


def test_odd_r_keeps_the_order_of_the_normalized_adjacency_eigenvalues():
    # n <= k + 2: the PE holds the whole spectrum but 2 eigenvalues
    views = concat([view_of(nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=s), k=16)
                    for n, s in [(10, 0), (14, 1), (18, 2)]])
    for b in range(len(views)):
        n, valid = int(views.num_nodes[b]), int(views.num_valid[b])
        adjacency = sparse_normalized_adjacency(*views.edges_of(b), n).toarray()
        mu = np.sort(np.linalg.eigvalsh(adjacency))[::-1]
        np.testing.assert_allclose(1 - views.eigval[b, :valid], mu[:valid], atol=1e-5)
        assert (mu[:valid] < 0).any()  # the orders could differ if the key were not monotone
    identity = np.tile(np.arange(16), (len(views), 1))
    for r in (1, 3, 5, 7, 9):
        np.testing.assert_array_equal(F.reorder_permutations(views.eigval, np.full(len(views), r)), identity)


def test_even_r_can_change_the_order():
    eigval = view_of(nx.path_graph(10)).eigval  # mu = cos(pi j / 9), j = 0..7
    perm = F.reorder_permutations(eigval, np.array([2]))[0]
    assert list(perm) == [0, 1, 2, 3, 4, 5, 7, 6]  # mu = -0.17, -0.77, -0.5 ranked by x + x^2


def test_reorder_moves_pe_eigvec_and_eigval_columns_together():
    views = concat([view_of(nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=s), k=32)
                    for n, s in [(12, 2), (30, 0), (5, 1)]] * 4)  # 10, 28 and 3 valid of 32 columns
    reorder = Reorder(r_max=10)
    r = reorder.make_params(views, keys(views))
    assert ((1 <= r) & (r <= 10)).all() and len(set(r.tolist())) > 3
    perms = F.reorder_permutations(views.eigval, r)
    out = reorder.transform(views, r)
    for b in range(len(views)):
        before, after, valid = views.select([b]), out.select([b]), int(views.num_valid[b])
        np.testing.assert_array_equal(perms[b, valid:], np.arange(valid, 32))  # padding never moves
        for name in ("pe", "eigvec", "eigval"):
            assert same_bits(getattr(after, name), getattr(before, name)[:, perms[b]])
        assert np.isnan(after.eigval[0, valid:]).all() and not np.isnan(after.eigval[0, :valid]).any()


def test_random_permute_moves_only_valid_columns():
    views = concat([view_of(nx.connected_watts_strogatz_graph(12, 4, 0.3, seed=2), k=32)] * 6)  # 10 valid
    permute = RandomPermute()
    u = permute.make_params(views, keys(views))
    out = permute.transform(views, u)
    perms = F.valid_order(views.eigval, u)
    for b in range(len(views)):
        assert sorted(perms[b, :10]) == list(range(10)) and list(perms[b, 10:]) == list(range(10, 32))
        before, after = views.select([b]), out.select([b])
        for name in ("pe", "eigvec", "eigval"):
            assert same_bits(getattr(after, name), getattr(before, name)[:, perms[b]])
    assert len({tuple(p) for p in perms}) == len(views)  # each view gets its own order


def test_mask_zeros_exactly_the_columns_of_the_z_largest_eigenvalues():
    views = concat([view_of(nx.connected_watts_strogatz_graph(30, 4, 0.3, seed=0)),
                    view_of(nx.cycle_graph(5))] * 12)  # 8 and 3 valid columns
    mask = Mask(max_masked=8)
    z = mask.make_params(views, keys(views))
    assert ((0 <= z) & (z <= 8)).all() and len(set(z.tolist())) > 4
    out = mask.transform(views, z)
    for b in range(len(views)):
        before, after = views.select([b]), out.select([b])
        eigval = before.eigval[0]
        zeroed = np.flatnonzero((after.pe == 0).all(axis=0) & (before.pe != 0).any(axis=0))
        largest = np.argsort(-np.nan_to_num(eigval, nan=-np.inf), kind="stable")[:min(z[b], before.num_valid[0])]
        assert sorted(zeroed) == sorted(largest)
        kept = np.setdiff1d(np.arange(K), zeroed)
        assert same_bits(after.pe[:, kept], before.pe[:, kept])
        assert same_bits(after.eigvec, before.eigvec) and same_bits(after.eigval, before.eigval)


@pytest.mark.parametrize("transform", [Reorder(r_max=10), RandomPermute(), Mask(max_masked=8)], ids=repr)
def test_column_transforms_of_a_batch_equal_each_view_alone(transform):
    assert_batched_equals_alone(transform, concat([random_views(), degenerate_views()]))


# --------------------------------------------------------------------------------------------- align


def test_procrustes_q_is_orthogonal():
    rng = np.random.default_rng(0)
    for shape in [(10, 4), (5, 8), (30, 8), (3, 12, 4)]:
        q = F.procrustes(rng.normal(size=shape), rng.normal(size=shape))
        eye = np.broadcast_to(np.eye(shape[-1]), q.shape)
        np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, eye, atol=1e-10)


def test_procrustes_recovers_a_rotation_for_every_batch_entry():
    x = np.random.default_rng(0).normal(size=(5, 20, 6))
    rotations = ortho_group.rvs(dim=6, size=5, random_state=1)
    np.testing.assert_allclose(F.procrustes(x, x @ rotations), rotations, atol=1e-10)


def test_procrustes_minimises_the_distance_over_orthogonal_matrices():
    rng = np.random.default_rng(1)
    for _ in range(3):
        x, n = rng.normal(size=(12, 4)), rng.normal(size=(12, 4))
        best = np.linalg.norm(x @ F.procrustes(x, n) - n)
        others = ortho_group.rvs(dim=4, size=3000, random_state=2)
        assert best <= np.linalg.norm(x @ others - n, axis=(1, 2)).min() + 1e-12


def test_align_rotates_both_views_of_a_pair_onto_their_global_rows_or_neither(pair):
    q, k = pair
    decisions = []
    for seed in range(6):
        out_q, out_k = Align(p=0.5)(q, k, keys(q, seed))
        for b in range(len(q)):
            kept = [views_equal(out.select([b]), view.select([b])) for view, out in ((q, out_q), (k, out_k))]
            assert kept[0] == kept[1]  # one draw per pair
            decisions.append(not kept[0])
            if kept[0]:
                continue
            for view, out in ((q.select([b]), out_q.select([b])), (k.select([b]), out_k.select([b]))):
                x, n = view.pe.astype(np.float64), view.global_rows.astype(np.float64)
                np.testing.assert_allclose(out.pe, x @ F.procrustes(x, n), atol=1e-5)
                assert np.linalg.norm(out.pe - n) < np.linalg.norm(x - n)
                np.testing.assert_allclose(np.linalg.norm(out.pe, axis=1), np.linalg.norm(x, axis=1), atol=1e-5)
                assert same_bits(out.eigvec, view.eigvec) and same_bits(out.eigval, view.eigval)
    assert 0.3 < np.mean(decisions) < 0.7


def test_align_of_a_batch_equals_each_pair_alone(pair):
    q, k = pair
    for seed in range(3):
        rng = keys(q, seed)
        out_q, out_k = Align(p=0.5)(q, k, rng)
        for b in range(len(q)):
            row = np.array([b])
            alone_q, alone_k = Align(p=0.5)(q.select(row), k.select(row), rng.take(row))
            # Procrustes sees the views zero-padded to the batch's largest view: equal up to round-off
            for together, alone in ((out_q.select(row), alone_q), (out_k.select(row), alone_k)):
                np.testing.assert_allclose(together.pe, alone.pe, rtol=0, atol=1e-6)
                assert views_equal(together.replace(pe=alone.pe), alone)


def test_align_needs_global_rows_of_matching_size(pair):
    q, _ = pair
    wrong = q.replace(global_rows=np.zeros((int(q.num_nodes.sum()), K + 1), dtype=np.float32))
    with pytest.raises(ValueError, match="d=9 and k=8"):
        Align(p=1.0)(wrong, q, keys(q))
    with pytest.raises(ValueError, match="global embedding rows"):
        Align(p=1.0)(q.replace(global_rows=None), q, keys(q))


# -------------------------------------------------------------------------------------------- filter


def test_view_similarity_is_the_row_wise_cosine_of_the_summed_rows():
    a, b = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]), np.array([[3.0, 4.0], [2.0, 3.0], [-2.0, -2.0]])
    np.testing.assert_allclose(F.view_similarity(a, b), [0.6, 0.0, -1.0])


def sets(*nodes: list[int]) -> NodeSets:
    return NodeSets(np.array([len(n) for n in nodes]), np.concatenate([np.array(n, dtype=np.int64) for n in nodes]))


def test_filter_accepts_and_rejects_exactly_at_the_threshold():
    emb = np.array([[1.0, 0.0], [3.0, 4.0]])  # cosine 0.6 between nodes 0 and 1, 1 with itself
    q, k = sets([0], [0]), sets([1], [0])
    assert 1.0 - 0.4 == F.view_similarity(emb[[0]], emb[[1]])[0]
    cases = [("similar", 0.4, [False, True]), ("similar", 0.41, [True, True]), ("similar", 0.39, [False, True]),
             ("diverse", 0.4, [False, False]), ("diverse", 0.39, [True, False]), ("diverse", 0.41, [False, False])]
    for mode, c, expected in cases:  # cos > 1 - c (similar) and cos < 1 - c (diverse) are strict
        assert ViewFilter(mode, c=c).accept(q, k, emb).tolist() == expected, (mode, c)


class RecordingWalk:
    """A fake walk: each view is one node drawn from the view's key row (or ``node``); records rows and draws."""

    def __init__(self, num_nodes: int, node: int | None = None):
        self.num_nodes, self.node, self.calls, self.drawn = num_nodes, node, [], []

    def __call__(self, rows: np.ndarray, rng: KeyedRandom) -> NodeSets:
        nodes = rng.integers(0, self.num_nodes) if self.node is None else np.full(len(rows), self.node)
        self.calls.append(np.array(rows))
        self.drawn.append(nodes.astype(np.int64))
        return NodeSets(np.ones(len(rows), dtype=np.int64), nodes.astype(np.int64))

    def per_row(self, rows: int) -> np.ndarray:
        return np.bincount(np.concatenate(self.calls), minlength=rows)


EMB = np.array([[1.0, 0.0], [0.0, 1.0]])  # two nodes, orthogonal: a pair is similar iff it repeats a node


def test_filter_redraws_only_rejected_pairs_and_at_most_t_max_times():
    rows, t_max = 400, 4
    rng = KeyedRandom.for_items(0, np.arange(rows))
    walk = RecordingWalk(2)
    q, k, outcome = ViewFilter("similar", c=0.3, t_max=t_max, p=1.0).select(walk, rows, EMB, rng)
    tries = outcome.tries
    first_q, first_k, _ = ViewFilter("similar", c=0.3, t_max=1, p=1.0).select(RecordingWalk(2), rows, EMB, rng)
    first_ok = first_q.nodes == first_k.nodes
    assert (tries[first_ok] == 1).all() and (tries[~first_ok] >= 2).all()  # accepted pairs are never redrawn
    assert (q.nodes[first_ok] == first_q.nodes[first_ok]).all()
    assert tries.max() == t_max and set(tries.tolist()) == set(range(1, t_max + 1))
    accepted = q.nodes == k.nodes
    assert accepted[tries < t_max].all()  # a pair stops at its first accepted candidate
    np.testing.assert_array_equal(outcome.passed, accepted)
    assert outcome.filtered.all()
    np.testing.assert_array_equal(walk.per_row(rows), 2 * tries)  # each try draws one query and one key view
    assert all(len(np.setdiff1d(later, earlier)) == 0 for earlier, later in zip(walk.calls, walk.calls[1:]))


def test_filtered_pairs_do_not_depend_on_the_other_pairs_of_the_batch():
    rows = 200
    rng = KeyedRandom.for_items(3, np.arange(rows))
    filt = ViewFilter("similar", c=0.3, t_max=5, p=0.5)
    q, k, outcome = filt.select(RecordingWalk(2), rows, EMB, rng)
    subset = np.arange(0, rows, 7)
    sub_q, sub_k, sub_outcome = filt.select(RecordingWalk(2), len(subset), EMB, rng.take(subset))
    np.testing.assert_array_equal(sub_outcome.tries, outcome.tries[subset])
    assert 0.35 < outcome.filtered.mean() < 0.65 and (outcome.tries[~outcome.filtered] == 1).all()
    assert outcome.passed[~outcome.filtered].all()
    np.testing.assert_array_equal(sub_q.nodes, q.select(subset).nodes)
    np.testing.assert_array_equal(sub_k.nodes, k.select(subset).nodes)


def test_filter_returns_the_last_candidate_when_none_passes():
    # Diverse mode rejects a pair of identical views (cosine 1): every filtered pair uses all t_max tries.
    rows = 50
    rng = KeyedRandom.for_items(0, np.arange(rows))
    walk = RecordingWalk(2, node=0)
    q, k, outcome = ViewFilter("diverse", c=0.3, t_max=3, p=1.0).select(walk, rows, EMB, rng)
    assert (outcome.tries == 3).all() and not outcome.passed.any()
    np.testing.assert_array_equal(walk.per_row(rows), 6)
    walk = RecordingWalk(7)  # one node each of 7 with equal rows: every pair is rejected, candidates vary
    q, k, outcome = ViewFilter("diverse", c=0.3, t_max=3, p=1.0).select(walk, rows, np.ones((7, 2)), rng)
    assert (outcome.tries == 3).all() and all(len(rows_asked) == rows for rows_asked in walk.calls)
    out = np.sort(np.stack([q.nodes, k.nodes], axis=1), axis=1)  # each pair's views, whichever side drew first
    np.testing.assert_array_equal(out, np.sort(np.stack(walk.drawn[-2:], axis=1), axis=1))
    first_try = np.stack([walk.drawn[0], walk.drawn[1]], axis=1)
    assert (first_try != np.stack([q.nodes, k.nodes], axis=1)).any()


def test_filter_skips_a_pair_with_probability_1_minus_p():
    rows = 400
    rng = KeyedRandom.for_items(0, np.arange(rows))
    never = ViewFilter("diverse", t_max=5, p=0.0).select(RecordingWalk(2, node=0), rows, EMB, rng)[2]
    assert (never.tries == 1).all() and not never.filtered.any() and never.passed.all()
    half = ViewFilter("diverse", t_max=5, p=0.5).select(RecordingWalk(2, node=0), rows, EMB, rng)[2]
    assert set(half.tries.tolist()) == {1, 5} and (half.tries == 5).mean() == pytest.approx(0.5, abs=0.08)
    np.testing.assert_array_equal(half.tries == 5, half.filtered)  # identical views never pass the diverse filter
    np.testing.assert_array_equal(half.passed, ~half.filtered)
    always = ViewFilter("similar", t_max=5, p=1.0).select(RecordingWalk(2, node=0), rows, EMB, rng)[2]
    assert (always.tries == 1).all() and always.passed.all()  # identical views always pass the similar filter


def test_filter_on_random_walks_keeps_only_passing_pairs_before_t_max(sampler):
    starts = np.arange(0, 80, 2)
    rng = KeyedRandom.for_items(0, np.arange(len(starts)))
    filt = ViewFilter("similar", c=0.05, t_max=4, p=1.0)  # cos > 0.95: about half the walks pass

    def walk(rows, walk_rng):
        return sampler.walk(starts[rows], walk_rng)

    q, k, outcome = filt.select(walk, len(starts), sampler.global_embedding, rng)
    assert outcome.tries.max() > 1  # some candidates are rejected on this graph
    np.testing.assert_array_equal(filt.accept(q, k, sampler.global_embedding), outcome.passed)
    np.testing.assert_array_equal(q.nodes[np.concatenate([[0], np.cumsum(q.num_nodes)[:-1]])], starts)


# ------------------------------------------------------------------------------------------- pipeline


def test_pipeline_is_a_function_of_the_keys(sampler):
    pipeline = build_pair_pipeline(AugmentConfig(p_align=0.5))
    starts = np.arange(0, 80, 5)
    outputs = []
    for seed in range(4):
        rng = KeyedRandom.for_items(seed, np.arange(len(starts)))
        first, again = pipeline(sampler, starts, rng), pipeline(sampler, starts, rng)
        assert views_equal(first[0], again[0]) and views_equal(first[1], again[1])
        np.testing.assert_array_equal(centres(first[0]), starts)
        np.testing.assert_array_equal(centres(first[1]), starts)
        outputs.append(first)
    assert all(not views_equal(outputs[0][0], out[0]) for out in outputs[1:])


def test_pipeline_items_do_not_depend_on_the_other_items_of_their_batch(sampler):
    pipeline = build_pair_pipeline(AugmentConfig(p_align=0.5))
    starts = np.arange(0, 80, 3)
    rng = KeyedRandom.for_items(1, np.arange(len(starts)))
    q, k = pipeline(sampler, starts, rng)
    for subset in (np.array([0, 5, 9]), np.array([13])):
        sub_q, sub_k = pipeline(sampler, starts[subset], rng.take(subset))
        for together, alone in ((q.select(subset), sub_q), (k.select(subset), sub_k)):
            # alignment sees the views zero-padded to the batch's largest view: PE equal up to round-off
            np.testing.assert_allclose(together.pe, alone.pe, rtol=0, atol=1e-5)
            assert views_equal(together.replace(pe=alone.pe), alone)


def test_a_filter_that_filters_no_pair_gives_gccs_plain_pairs(sampler):
    starts = np.arange(0, 80, 4)
    rng = KeyedRandom.for_items(0, np.arange(len(starts)))
    plain = PairPipeline()(sampler, starts, rng)
    q, k = PairPipeline(ViewFilter(p=0.0), [])(sampler, starts, rng)
    assert views_equal(q, plain[0]) and views_equal(k, plain[1])


CONTROLS = AugmentConfig(crop_kind="random", permute_kind="random", recompute_pe=False, crop_basis="combinatorial")


@pytest.mark.parametrize("cfg", [AugmentConfig(p_align=1.0), CONTROLS], ids=["sgcl", "controls"])
def test_pipeline_never_mutates_its_inputs(sampler, pair, cfg):
    pipeline = build_pair_pipeline(cfg)
    q, k = pair
    snaps = snapshot(q), snapshot(k)
    index = {name: np.array(a, copy=True) for name, a in vars(sampler.index).items() if isinstance(a, np.ndarray)}
    emb = sampler.global_embedding.copy()
    starts = np.arange(0, 80, 4)
    starts_copy = starts.copy()
    for seed in range(5):
        pipeline(sampler, starts, KeyedRandom.for_items(seed, np.arange(len(starts))))
        for i, step in enumerate(pipeline.steps):
            step(q, k, keys(q, seed).child(i))
    assert unchanged(q, snaps[0])
    assert unchanged(k, snaps[1])
    assert same_bits(sampler.global_embedding, emb) and same_bits(starts, starts_copy)
    assert all(same_bits(getattr(sampler.index, name), a) for name, a in index.items())
    rows = sampler.index.rows  # the scipy CSR is the index's, its values stay ones
    assert np.array_equal(rows.indices, index["indices"]) and np.array_equal(rows.indptr, index["indptr"])
    assert (rows.data == 1).all()


def test_transforms_never_mutate_their_input(pair):
    q, k = pair
    for views in (q, concat([random_views(), degenerate_views()])):
        snap = snapshot(views)
        for transform in all_transforms():
            for seed in range(2):
                transform.forward(views, keys(views, seed))
        assert unchanged(views, snap)
    snaps = snapshot(q), snapshot(k)
    Align(p=1.0)(q, k, keys(q))
    assert unchanged(q, snaps[0])
    assert unchanged(k, snaps[1])


def test_forward_is_the_transform_of_its_drawn_params():
    views = random_views()
    for transform in all_transforms():
        if isinstance(transform, (Compose, RandomChoice)):
            continue  # combinators draw per stream inside ``forward``
        rng = keys(views, 5)
        assert views_equal(transform.forward(views, rng), transform.transform(views, transform.make_params(views, rng)))


def test_calling_a_transform_on_a_dgl_view_gives_the_dgl_form_of_its_batch_result(pair):
    views, _ = pair
    graph = views.to_dgl((PE, EIGVEC, EIGVAL, SEED, NID, GLOBAL))  # global rows carried through, for Align
    for transform in (SpectralCrop((0.1, 0.9, 0.1, 0.9)), Reorder(r_max=10), Mask(max_masked=8)):
        out = transform(graph, np.random.default_rng(0))
        assert isinstance(out, dgl.DGLGraph) and out.batch_size == len(views)
        expected = transform.forward(views, KeyedRandom.from_generator(np.random.default_rng(0), len(views)))
        assert views_equal(ViewBatch.from_dgl(out), expected)


def test_degenerate_views_never_crash():
    views = with_global_rows(degenerate_views())
    flipped = views.select(np.arange(len(views))[::-1])
    for transform in all_transforms():
        for seed in range(3):
            out = transform.forward(views, keys(views, seed))
            np.testing.assert_array_equal(centres(out), centres(views))
            assert np.isfinite(out.pe).all()
    for cfg in (AugmentConfig(p_align=1.0), CONTROLS):
        steps = build_pair_pipeline(cfg).steps
        for seed in range(3):
            q, k = views, flipped
            for i, step in enumerate(steps):
                q, k = step(q, k, keys(views, seed).child(i))
            assert np.isfinite(q.pe).all() and np.isfinite(k.pe).all()
            np.testing.assert_array_equal(centres(q), centres(views))


def test_config_flags_select_the_stages():
    full = build_pair_pipeline(AugmentConfig())
    assert full.filter is not None and full.needs_global and full.needs_global_rows
    crop, align, perturb = full.steps
    assert isinstance(crop, Both) and isinstance(crop.transform, RandomChoice)
    assert isinstance(align, Align) and align.p == 0.5
    assert isinstance(perturb, Both)
    assert [type(t) for t in perturb.transform.transforms] == [Mask, Reorder, Identity]
    np.testing.assert_allclose(perturb.transform.probs, [0.25, 0.25, 0.5])
    assert AugmentConfig().p_crop == pytest.approx(0.3)
    crop_only = build_pair_pipeline(AugmentConfig.only("crop"))
    assert crop_only.filter is None and len(crop_only.steps) == 1 and not crop_only.needs_global
    reorder_only = build_pair_pipeline(AugmentConfig.only("reorder", permute_kind="random"))
    assert isinstance(reorder_only.steps[0].transform.transforms[0], RandomPermute)
    filter_only = build_pair_pipeline(AugmentConfig.only("filter"))
    assert filter_only.needs_global and not filter_only.needs_global_rows  # the filter reads E_t itself
    assert filter_only.steps == []
    assert not build_pair_pipeline(AugmentConfig.only()).needs_global


def test_bad_arguments_are_rejected_naming_the_parameter():
    cases = [
        (lambda: SpectralCrop((0.8, 0.2, 0.0, 1.0)), "box"),
        (lambda: RandomCrop((0.2, 0.8, 0.2, 1.2)), "box"),
        (lambda: SpectralCrop((0.2, 0.8, 0.2, 0.8), basis="x"), "crop basis"),
        (lambda: Reorder(0), "r_max"),
        (lambda: Mask(-1), "max_masked"),
        (lambda: Align(1.5), "p"),
        (lambda: ViewFilter("odd"), "mode"),
        (lambda: ViewFilter(c=2.0), "c"),
        (lambda: ViewFilter(t_max=0), "t_max"),
        (lambda: ViewFilter(p=1.1), "p"),
        (lambda: RandomChoice([Identity()], weights=[1.0, 2.0]), "weights"),
        (lambda: RandomChoice([Identity(), Identity()], weights=[0.0, 0.0]), "weights"),
        (lambda: RandomChoice([]), "transforms"),
        (lambda: F.reorder_permutations(np.zeros((1, 3)), np.array([0])), "r"),
        (lambda: AugmentConfig(p_mask=0.6, p_reorder=0.6), "--p-mask"),
        (lambda: AugmentConfig.only("cropping"), "stages"),
        (lambda: build_pair_pipeline(AugmentConfig(crop_kind="fancy")), "crop_kind"),
        (lambda: build_pair_pipeline(AugmentConfig(permute_kind="fancy")), "permute_kind"),
        (lambda: paper_crop(table=[((0.2, 0.8, 0.2, 0.8), 0.9), ((0.1, 0.9, 0.1, 0.9), 0.2)]), "table"),
    ]
    for make, name in cases:
        with pytest.raises(ValueError, match=name):
            make()


def test_pipeline_prints_itself():
    text = repr(build_pair_pipeline(AugmentConfig()))
    for part in ("ViewFilter(mode='similar', c=0.3, t_max=5, p=0.5)  # filter",
                 "SpectralCrop(box=(0.2, 0.8, 0.2, 0.8), recompute_pe=True, basis='normalized')  # p=0.1",
                 "Align(p=0.5)  # step 1", "Mask(max_masked=8)  # p=0.25", "Reorder(r_max=10)  # p=0.25",
                 "Identity()  # p=0.7", "Identity()  # p=0.5", "# step 2"):
        assert part in text, part
    assert repr(Compose([Identity(), Mask(2)])) == "Compose(\n    Identity()\n    Mask(max_masked=2)\n)"
    assert repr(Split(RandomPermute(), Identity())) == "Split(\n    RandomPermute()  # query\n    Identity()  # key\n)"
